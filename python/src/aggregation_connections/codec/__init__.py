"""The payload codec of the TypeScript worker, in Python: docs/payload-format.md's static and envelope-v1
formats, configured keys and Vault's or OpenBao's transit engine."""

from .encryption_codec import EncryptionCodec
from .envelope_keys import DataKeyCacheSettings, EnvelopeKeySource
from .errors import (
    KeyProviderRefusedError,
    KeyProviderUnavailableError,
    KeyVersionRevokedError,
    PayloadDecryptionError,
    UnknownEncryptionKeyError,
)
from .key_provider import EncryptionSettings, TransitEncryption, key_source_for
from .key_source import EncryptionKeys, KeySource, StaticKeySource
from .local_key import LocalKeyFileError, read_or_create_local_key
from .vault_client import AppRoleAuth, TokenAuth, VaultSettings
from .vault_transit import VAULT_TRANSIT, TransitKey

__all__ = [
    "VAULT_TRANSIT",
    "AppRoleAuth",
    "DataKeyCacheSettings",
    "EncryptionCodec",
    "EncryptionKeys",
    "EncryptionSettings",
    "EnvelopeKeySource",
    "KeyProviderRefusedError",
    "KeyProviderUnavailableError",
    "KeySource",
    "KeyVersionRevokedError",
    "LocalKeyFileError",
    "PayloadDecryptionError",
    "StaticKeySource",
    "TokenAuth",
    "TransitEncryption",
    "TransitKey",
    "UnknownEncryptionKeyError",
    "VaultSettings",
    "key_source_for",
    "read_or_create_local_key",
]
