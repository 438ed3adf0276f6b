"""The aws-kms key provider (src/codec/aws-kms.ts): AWS KMS makes (``GenerateDataKey``, AES_256) and
unwraps (``Decrypt``) the data keys of envelope-v1 payloads, both under the encryption context
{purpose: temporal-payloads}. The key id beside a payload is "aws-kms:<key ARN>" as KMS answered it, so a
payload written through an alias still names its key after the alias moves; ``encryption-key-version`` is
always 1 (AWS KMS names no backing-key version) and a reader refuses any other.

boto3 is synchronous: each call runs in a thread so the event loop (a client, a worker) keeps going.
Its errors become the TypeScript side's types: no answer, 5xx, throttling are KeyProviderUnavailableError
(retry); a disabled key or one pending deletion is KeyDisabledError; access denied, no such key, no
credentials are KeyProviderRefusedError naming the key; a wrapped key KMS will not open is a payload this
process can never read (PayloadDecryptionError)."""

from __future__ import annotations

import asyncio
import base64
import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING

import boto3
from botocore.config import Config
from botocore.exceptions import ClientError, NoCredentialsError, NoRegionError, PartialCredentialsError

from .envelope_keys import DataKey
from .errors import KeyDisabledError, KeyProviderRefusedError, KeyProviderUnavailableError, PayloadDecryptionError
from .payload_format import EnvelopeMetadata

if TYPE_CHECKING:
    from types_boto3_kms.client import KMSClient

AWS_KMS = "aws-kms"
_KEY_ID_PREFIX = f"{AWS_KMS}:"
#: Bound to every data key AWS KMS wraps for payloads; Decrypt must present the same (docs/payload-format.md).
AWS_KMS_ENCRYPTION_CONTEXT: Mapping[str, str] = MappingProxyType({"purpose": "temporal-payloads"})


def aws_kms_encryption_context(tenant: str | None) -> dict[str, str]:
    """The encryption context of a data key: the product's, and its tenant's when a tenant's (``encryption-tenant``)."""
    return dict(AWS_KMS_ENCRYPTION_CONTEXT) if tenant is None else {**AWS_KMS_ENCRYPTION_CONTEXT, "tenant": tenant}


#: AWS KMS names no backing-key version: every aws-kms envelope is version 1.
AWS_KMS_KEY_VERSION = 1
_BASE64 = re.compile(r"[A-Za-z0-9+/]+={0,2}")
# What KMS answers for a key that exists but may not be used now: the operator's to re-enable.
_DISABLED = frozenset({"DisabledException", "KMSInvalidStateException"})
# What KMS answers for a wrapped key it will never open with this key.
_UNOPENABLE = frozenset({"InvalidCiphertextException", "IncorrectKeyException"})
_UNAVAILABLE = frozenset({"ThrottlingException", "ThrottledException", "TooManyRequestsException", "RequestLimitExceeded", "TimeoutError", "RequestTimeout"})


def aws_kms_key_id(key: str) -> str:
    """The key id written beside payloads whose data keys AWS KMS key ``key`` (id, ARN or alias) wrapped."""
    return f"{_KEY_ID_PREFIX}{key}"


def aws_kms_key_of(envelope: EnvelopeMetadata) -> str:
    """The KMS key of a payload's aws-kms envelope; PayloadDecryptionError when the metadata is not one."""
    key_id = envelope.key_id
    if not key_id.startswith(_KEY_ID_PREFIX) or key_id == _KEY_ID_PREFIX:
        raise PayloadDecryptionError(
            key_id,
            f'payload\'s data key is wrapped by key id "{key_id}", not by an {AWS_KMS} key ("{_KEY_ID_PREFIX}<key id or ARN>"), '
            "which this process's provider is",
        )
    if envelope.key_version != AWS_KMS_KEY_VERSION:
        raise PayloadDecryptionError(
            key_id,
            f"payload's encryption-key-version is {envelope.key_version}, but {AWS_KMS} envelopes are always version {AWS_KMS_KEY_VERSION} "
            "(AWS KMS names no key version)",
        )
    if not _BASE64.fullmatch(envelope.wrapped_key):
        raise PayloadDecryptionError(key_id, "payload's wrapped data key is not base64 (an AWS KMS CiphertextBlob)")
    return key_id[len(_KEY_ID_PREFIX) :]


@dataclass(frozen=True)
class AwsCredentials:
    """Credentials given outright (the tests'); otherwise boto3's default chain finds them."""

    access_key_id: str
    secret_access_key: str = field(repr=False)


@dataclass(frozen=True)
class AwsKmsSettings:
    """How to reach AWS KMS (PAYLOAD_AWS_*)."""

    #: Key id, key ARN, alias name or alias ARN that new data keys are made under.
    key: str
    #: None: boto3's (AWS_REGION, AWS_DEFAULT_REGION, the profile).
    region: str | None = None
    #: A VPC endpoint or a stand-in (the tests' moto); None: the region's public endpoint.
    endpoint: str | None = None
    #: How long one call may take to connect, and to answer (boto3 retries throttling and 5xx twice first).
    timeout_s: float = 5.0
    credentials: AwsCredentials | None = None


def aws_kms_client(settings: AwsKmsSettings) -> KMSClient:
    """A boto3 KMS client on ``settings``; NoRegionError when neither they nor boto3's chain name a region."""
    config = Config(connect_timeout=settings.timeout_s, read_timeout=settings.timeout_s, retries={"max_attempts": 3, "mode": "standard"})
    credentials = settings.credentials
    return boto3.session.Session().client(
        "kms",
        region_name=settings.region,
        endpoint_url=settings.endpoint,
        config=config,
        aws_access_key_id=credentials.access_key_id if credentials else None,
        aws_secret_access_key=credentials.secret_access_key if credentials else None,
    )


class AwsKms:
    def __init__(self, settings: AwsKmsSettings, tenant: str | None = None, *, client_of: AwsKms | None = None) -> None:
        self._settings = settings
        self._key = settings.key
        self._key_id = aws_kms_key_id(settings.key)
        self._tenant = tenant
        # A tenant's wrapper uses the product's client: one per process, not one per tenant.
        self._client_of = client_of
        self._client: KMSClient | None = None
        self._client_lock = threading.Lock()

    @property
    def key_id(self) -> str:
        return self._key_id

    @property
    def tenant(self) -> str | None:
        return self._tenant

    def for_tenant(self, tenant: str) -> AwsKms:
        """The same key, the tenant bound in each data key's encryption context."""
        return AwsKms(self._settings, tenant, client_of=self._client_of or self)

    async def new_data_key(self) -> DataKey:
        try:
            answer = await asyncio.to_thread(
                lambda: self._kms().generate_data_key(KeyId=self._key, KeySpec="AES_256", EncryptionContext=aws_kms_encryption_context(self._tenant))
            )
        except Exception as error:
            raise _typed_error(error, "GenerateDataKey", self._key) from error
        plaintext, wrapped, key_arn = answer.get("Plaintext"), answer.get("CiphertextBlob"), answer.get("KeyId")
        if not plaintext or not wrapped:
            raise KeyProviderRefusedError(AWS_KMS, "GenerateDataKey", 200, f'an answer without Plaintext and CiphertextBlob for key "{self._key}"')
        return DataKey(plaintext, base64.b64encode(wrapped).decode(), AWS_KMS_KEY_VERSION, aws_kms_key_id(key_arn) if key_arn else None)

    async def unwrap(self, envelope: EnvelopeMetadata) -> bytes:
        key = aws_kms_key_of(envelope)
        blob = base64.b64decode(envelope.wrapped_key)
        try:
            answer = await asyncio.to_thread(
                lambda: self._kms().decrypt(KeyId=key, CiphertextBlob=blob, EncryptionContext=aws_kms_encryption_context(envelope.tenant))
            )
        except Exception as error:
            name, message, _ = _error_parts(error)
            if name in _UNOPENABLE:
                raise PayloadDecryptionError(envelope.key_id, f'{AWS_KMS} cannot unwrap the payload\'s data key with key "{key}": {name}: {message}') from error
            raise _typed_error(error, "Decrypt", key) from error
        plaintext = answer.get("Plaintext")
        if not plaintext:
            raise KeyProviderRefusedError(AWS_KMS, "Decrypt", 200, f'an answer without Plaintext for key "{key}"')
        return plaintext

    def _kms(self) -> KMSClient:
        if self._client_of is not None:
            return self._client_of._kms()
        # Made on first use, in a worker thread: boto3's sessions are not thread-safe, its clients are.
        with self._client_lock:
            if self._client is None:
                self._client = aws_kms_client(self._settings)
            return self._client


def _error_parts(error: Exception) -> tuple[str, str, int | None]:
    """A boto3 error's code (KMS's exception name, else the Python class), message and HTTP status (None: no answer)."""
    if isinstance(error, ClientError):
        detail = error.response.get("Error", {})
        status = error.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
        return str(detail.get("Code") or type(error).__name__), str(detail.get("Message") or error), status
    return type(error).__name__, str(error), None


def _typed_error(error: Exception, operation: str, key: str) -> Exception:
    """A boto3 error as this codebase's kind: retry (unavailable), the key disabled, or refused."""
    name, message, status = _error_parts(error)
    detail = f'key "{key}": {name}: {message[:400]}'
    if name in _DISABLED:
        return KeyDisabledError(AWS_KMS, operation, key, f"{name}: {message[:400]}")
    setup = _setup_hint(error)
    if setup:
        return KeyProviderRefusedError(AWS_KMS, operation, status or 0, f"{detail}{setup}")
    # No HTTP answer at all (refused, reset, timed out), a 5xx or throttling: KMS cannot serve now.
    if status is None or status == 429 or status >= 500 or name in _UNAVAILABLE:
        return KeyProviderUnavailableError(AWS_KMS, operation, detail)
    return KeyProviderRefusedError(AWS_KMS, operation, status, detail)


def _setup_hint(error: Exception) -> str | None:
    """What boto3 fails with before asking KMS when this process is not set up: the operator's to fix, not an outage."""
    if isinstance(error, (NoCredentialsError, PartialCredentialsError)):
        return " (no AWS credentials: boto3's default chain looks at AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, a profile, and an instance or task role)"
    if isinstance(error, NoRegionError):
        return " (no region: set PAYLOAD_AWS_REGION, or give PAYLOAD_AWS_KMS_KEY_ID as an ARN)"
    return None
