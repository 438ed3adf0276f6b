"""The aws-kms part of the codec's settings, parsed as src/settings/kms.ts parses it:
PAYLOAD_AWS_KMS_KEY_ID (a key id, key ARN, alias or alias ARN; required with PAYLOAD_KEY_PROVIDER=aws-kms),
PAYLOAD_AWS_REGION (else the key ARN's region, else boto3's), PAYLOAD_AWS_KMS_ENDPOINT and
PAYLOAD_AWS_KMS_TIMEOUT_MS. Credentials are boto3's default chain (AWS_ACCESS_KEY_ID and
AWS_SECRET_ACCESS_KEY, a profile, an instance or task role), read by boto3 from the process's environment."""

from __future__ import annotations

import re

from ..codec.aws_kms import AWS_KMS, AwsKmsSettings
from ..contract.names import PAYLOAD_AWS_KMS_TIMEOUT_MS_DEFAULT
from .env_reader import EnvReader

# AWS KMS's four ways to name a key; anything else KMS would refuse on the first call.
_AWS_KMS_KEY = re.compile(
    r"arn:aws[a-z-]*:kms:[a-z0-9-]+:\d{12}:(?:key|alias)/[A-Za-z0-9/_+=,.@-]{1,256}"
    r"|alias/[A-Za-z0-9/_-]{1,250}"
    r"|mrk-[0-9a-f]{32}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
)
_AWS_KMS_KEY_RULE = (
    "must name an AWS KMS key: a key id (1234abcd-12ab-34cd-56ef-1234567890ab, or mrk-... for a multi-Region key), "
    "a key ARN (arn:aws:kms:<region>:<account>:key/<key id>), an alias (alias/<name>) or an alias ARN"
)
_AWS_REGION = re.compile(r"[a-z]{2}(?:-[a-z]+)+-\d{1,2}")
_URL = re.compile(r"https?://[^\s/]+(/\S*)?")


def arn_region_of(key: str | None) -> str | None:
    """The region of a key or alias ARN."""
    return key.split(":")[3] if key is not None and key.startswith("arn:") else None


def aws_kms_vars(reader: EnvReader, provider: str, mode: str) -> AwsKmsSettings | None:
    """The KMS settings when PAYLOAD_KEY_PROVIDER=aws-kms and they are whole; every problem is added to ``reader``."""
    key = reader.matching("PAYLOAD_AWS_KMS_KEY_ID", _AWS_KMS_KEY, _AWS_KMS_KEY_RULE)
    region = reader.matching("PAYLOAD_AWS_REGION", _AWS_REGION, "must be an AWS region, e.g. eu-west-1")
    endpoint = reader.matching("PAYLOAD_AWS_KMS_ENDPOINT", _URL, "must be an http(s) URL")
    timeout_ms = reader.count("PAYLOAD_AWS_KMS_TIMEOUT_MS", 100, PAYLOAD_AWS_KMS_TIMEOUT_MS_DEFAULT)
    if provider != AWS_KMS:
        # A KMS key without its provider chosen is a half-made switch: say so rather than ignore it.
        if reader.text("PAYLOAD_AWS_KMS_KEY_ID") is not None:
            reader.problem(
                "PAYLOAD_AWS_KMS_KEY_ID", f"is set but PAYLOAD_KEY_PROVIDER is {provider}: set PAYLOAD_KEY_PROVIDER={AWS_KMS} to use it, or unset it"
            )
        return None
    if mode == "off":
        reader.problem("PAYLOAD_ENCRYPTION", f"is off but PAYLOAD_KEY_PROVIDER is {provider}: unset one of them")
    if reader.text("PAYLOAD_AWS_KMS_KEY_ID") is None:
        reader.problem("PAYLOAD_AWS_KMS_KEY_ID", f"is required with PAYLOAD_KEY_PROVIDER={AWS_KMS}: the id, ARN or alias of the KMS key that wraps data keys")
    arn_region = arn_region_of(key)
    if arn_region and region and arn_region != region:
        reader.problem("PAYLOAD_AWS_REGION", f"is {region}, but PAYLOAD_AWS_KMS_KEY_ID is an ARN in {arn_region}: unset one, or make them agree")
    if key is None:
        return None
    return AwsKmsSettings(key=key, region=region or arn_region, endpoint=endpoint, timeout_s=timeout_ms / 1000)
