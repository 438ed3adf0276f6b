"""The payload codec of the TypeScript worker, in Python: docs/payload-format.md's static and envelope-v1
formats, configured keys (a key file per tenant besides, in static mode), Vault's or OpenBao's transit engine and AWS KMS."""

from .aws_kms import AWS_KMS, AWS_KMS_ENCRYPTION_CONTEXT, AwsCredentials, AwsKmsSettings
from .encryption_codec import EncryptionCodec
from .envelope_keys import DataKeyCacheSettings, EnvelopeKeySource
from .errors import (
    KeyDestroyedError,
    KeyDisabledError,
    KeyProviderRefusedError,
    KeyProviderUnavailableError,
    KeyVersionRevokedError,
    PayloadDecryptionError,
    PayloadMisboundError,
    PayloadNotSealedError,
    TenantKeyFileError,
    TenantKeyMissingError,
    UnknownEncryptionKeyError,
)
from .key_provider import AwsKmsEncryption, EncryptionSettings, StaticTenantEncryption, TransitEncryption, key_source_for
from .key_source import EncryptionKeys, KeySource, StaticKeySource
from .local_key import LocalKeyFileError, read_or_create_local_key
from .static_tenant_keys import StaticTenantKeySource
from .vault_client import AppRoleAuth, TokenAuth, VaultSettings
from .vault_transit import VAULT_TRANSIT, TransitKey

__all__ = [
    "AWS_KMS",
    "AWS_KMS_ENCRYPTION_CONTEXT",
    "VAULT_TRANSIT",
    "AppRoleAuth",
    "AwsCredentials",
    "AwsKmsEncryption",
    "AwsKmsSettings",
    "DataKeyCacheSettings",
    "EncryptionCodec",
    "EncryptionKeys",
    "EncryptionSettings",
    "EnvelopeKeySource",
    "KeyDestroyedError",
    "KeyDisabledError",
    "KeyProviderRefusedError",
    "KeyProviderUnavailableError",
    "KeySource",
    "KeyVersionRevokedError",
    "LocalKeyFileError",
    "PayloadDecryptionError",
    "PayloadMisboundError",
    "PayloadNotSealedError",
    "StaticKeySource",
    "StaticTenantEncryption",
    "StaticTenantKeySource",
    "TenantKeyFileError",
    "TenantKeyMissingError",
    "TokenAuth",
    "TransitEncryption",
    "TransitKey",
    "UnknownEncryptionKeyError",
    "VaultSettings",
    "key_source_for",
    "read_or_create_local_key",
]
