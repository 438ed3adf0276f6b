"""The payload store's settings, read from the variables the worker reads and parsed as
src/settings/payload-store.ts parses them: PAYLOAD_STORE (auto|local|s3|off; auto: a local directory
with Temporal on this machine, none elsewhere), PAYLOAD_STORE_DIRECTORY, PAYLOAD_STORE_S3_BUCKET,
_PREFIX, _ENDPOINT, _REGION, _FORCE_PATH_STYLE and PAYLOAD_STORE_THRESHOLD_BYTES. Empty values count as
unset; every bad value is one line of a ConfigError naming its variable. S3 credentials come from the
AWS default chain (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, a profile, or a role), as the worker's.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

# The worker's limits, choices and defaults (src/payload-store/settings.ts, src/settings/payload-store.ts),
# generated into contract/names.py.
from ..contract.names import (
    HISTORY_PAYLOAD_LIMIT_BYTES as HISTORY_PAYLOAD_LIMIT_BYTES,
    PAYLOAD_STORE_CHOICES,
    PAYLOAD_STORE_DEFAULT,
    PAYLOAD_STORE_DIRECTORY_DEFAULT,
    PAYLOAD_STORE_S3_FORCE_PATH_STYLE_DEFAULT,
    PAYLOAD_STORE_THRESHOLD_BYTES_DEFAULT,
    TEMPORAL_ADDRESS_DEFAULT,
)
from ..settings.encryption import ConfigError, is_loopback

#: Payloads of at least this many encoded bytes leave history (src/payload-store/settings.ts says why 128 KiB).
DEFAULT_PAYLOAD_SIZE_THRESHOLD_BYTES = PAYLOAD_STORE_THRESHOLD_BYTES_DEFAULT
DEFAULT_DIRECTORY = PAYLOAD_STORE_DIRECTORY_DEFAULT
_BUCKET = re.compile(r"[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]")
_PREFIX_SEGMENT = re.compile(r"[A-Za-z0-9._=+-]+")
_URL = re.compile(r"https?://[^\s/?#]+(/\S*)?")
_BOOLEANS = {"true": True, "1": True, "false": False, "0": False}
_NUMBER = re.compile(r"\s*[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?\s*")


@dataclass(frozen=True)
class PayloadStoreOff:
    """No store: every payload stays in history (the server refuses payloads over 2 MiB)."""

    kind: Literal["off"] = "off"


@dataclass(frozen=True)
class LocalPayloadStore:
    """The worker's local directory: the dev stack, the demo and tests; one machine only."""

    directory: str = DEFAULT_DIRECTORY
    threshold_bytes: int = DEFAULT_PAYLOAD_SIZE_THRESHOLD_BYTES
    kind: Literal["local"] = "local"


@dataclass(frozen=True)
class S3PayloadStore:
    """S3 or an S3-compatible server (MinIO): production."""

    bucket: str
    #: Normalized: no leading or trailing "/"; None when none.
    prefix: str | None = None
    endpoint: str | None = None
    region: str | None = None
    force_path_style: bool = False
    threshold_bytes: int = DEFAULT_PAYLOAD_SIZE_THRESHOLD_BYTES
    kind: Literal["s3"] = "s3"


PayloadStoreSettings = PayloadStoreOff | LocalPayloadStore | S3PayloadStore


def payload_store_from_env(env: Mapping[str, str] | None = None) -> PayloadStoreSettings:
    """The store the worker's variables describe; a ConfigError lists every bad variable."""
    source = os.environ if env is None else env
    values = {name: value.strip() for name, value in source.items() if value.strip() != ""}
    problems: list[str] = []

    kind = values.get("PAYLOAD_STORE", PAYLOAD_STORE_DEFAULT)
    if kind not in PAYLOAD_STORE_CHOICES:
        problems.append(f"PAYLOAD_STORE: must be one of {', '.join(repr(choice) for choice in PAYLOAD_STORE_CHOICES)}, got {kind!r}")
        kind = "off"
    threshold = DEFAULT_PAYLOAD_SIZE_THRESHOLD_BYTES
    if (text := values.get("PAYLOAD_STORE_THRESHOLD_BYTES")) is not None:
        # As zod's coerce.number().int(): a number written any way JavaScript reads it, whole.
        number = float(text) if _NUMBER.fullmatch(text) else float("nan")
        if not number.is_integer() or not 0 <= number <= HISTORY_PAYLOAD_LIMIT_BYTES:
            problems.append(f"PAYLOAD_STORE_THRESHOLD_BYTES: must be a whole number of bytes from 0 to {HISTORY_PAYLOAD_LIMIT_BYTES} (256 KiB), got {text!r}")
        else:
            threshold = int(number)
    force_path_style: bool = PAYLOAD_STORE_S3_FORCE_PATH_STYLE_DEFAULT
    if (text := values.get("PAYLOAD_STORE_S3_FORCE_PATH_STYLE")) is not None:
        if text not in _BOOLEANS:
            problems.append(f"PAYLOAD_STORE_S3_FORCE_PATH_STYLE: must be one of 'true', 'false', '1', '0', got {text!r}")
        force_path_style = _BOOLEANS.get(text, PAYLOAD_STORE_S3_FORCE_PATH_STYLE_DEFAULT)
    endpoint = values.get("PAYLOAD_STORE_S3_ENDPOINT")
    if endpoint is not None and not _URL.fullmatch(endpoint):
        problems.append(f"PAYLOAD_STORE_S3_ENDPOINT: must be an http(s) URL, got {endpoint!r}")
    bucket = values.get("PAYLOAD_STORE_S3_BUCKET")
    prefix = values.get("PAYLOAD_STORE_S3_PREFIX")
    if kind == "s3":
        if bucket is None:
            problems.append("PAYLOAD_STORE_S3_BUCKET: is required with PAYLOAD_STORE=s3")
        elif not _BUCKET.fullmatch(bucket):
            problems.append(f'PAYLOAD_STORE_S3_BUCKET: {bucket!r} is not an S3 bucket name (3-63 lower-case letters, digits, "." or "-")')
        if prefix is not None:
            prefix = prefix.strip("/") or None
            if prefix is not None and any(not _PREFIX_SEGMENT.fullmatch(part) or part in (".", "..") for part in prefix.split("/")):
                problems.append(
                    f'PAYLOAD_STORE_S3_PREFIX: {values["PAYLOAD_STORE_S3_PREFIX"]!r}: each "/"-separated part must be letters, digits, '
                    '".", "_", "=", "+" or "-" (not "." or "..")'
                )
    if problems:
        raise ConfigError(problems)
    if kind == "auto":
        kind = "local" if is_loopback(values.get("TEMPORAL_ADDRESS", TEMPORAL_ADDRESS_DEFAULT)) else "off"
    if kind == "local":
        return LocalPayloadStore(directory=values.get("PAYLOAD_STORE_DIRECTORY", DEFAULT_DIRECTORY), threshold_bytes=threshold)
    if kind == "s3":
        return S3PayloadStore(
            bucket=bucket or "",
            prefix=prefix,
            endpoint=endpoint,
            region=values.get("PAYLOAD_STORE_S3_REGION"),
            force_path_style=force_path_style,
            threshold_bytes=threshold,
        )
    return PayloadStoreOff()
