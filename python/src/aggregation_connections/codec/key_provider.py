"""The key source chosen by the settings (src/codec/key-provider.ts): configured keys (the static
format; with PAYLOAD_TENANT_KEYS_DIR a key file per tenant besides, static_tenant_keys.py), or a KMS's
data keys, Vault's or OpenBao's transit engine or AWS KMS (envelope-v1; configured keys, when given,
still read the static payloads written before the switch)."""

from __future__ import annotations

from dataclasses import dataclass, field

from .aws_kms import AwsKms, AwsKmsSettings, aws_kms_key_id
from .envelope_keys import DataKeyCacheSettings, EnvelopeKeySource, KeyWrapper
from .key_source import EncryptionKeys, KeySource, StaticKeySource
from .static_tenant_keys import StaticTenantKeySource
from .tenant_keys import TenantKeySource
from .vault_client import VaultClient, VaultSettings
from .vault_transit import VAULT_TRANSIT, TransitKey, VaultTransit, transit_key_id


@dataclass(frozen=True)
class StaticTenantEncryption:
    """A process's encryption by configured keys with a key file per tenant (PAYLOAD_TENANT_KEYS_DIR)."""

    # The product's keys: they seal payloads of no tenant and open every static payload without a tenant.
    keys: EncryptionKeys
    # Where each tenant's <customerId>.key is (relative: to the working directory).
    tenant_keys_dir: str
    # Whether a tenant's missing file is created when its first payload is sealed (Temporal on this machine).
    create_missing_tenant_keys: bool = False

    @property
    def key_id(self) -> str:
        return self.keys.key_id


@dataclass(frozen=True)
class TransitEncryption:
    """A process's encryption by vault-transit."""

    vault: VaultSettings
    transit: TransitKey = field(default_factory=TransitKey)
    cache: DataKeyCacheSettings = field(default_factory=DataKeyCacheSettings)
    # Configured keys kept to read static-format payloads (decrypt only).
    static_keys: EncryptionKeys | None = None
    # Each tenant's payloads sealed under its own key (PAYLOAD_TENANT_KEYS); False: all under key_id.
    tenant_keys: bool = True

    @property
    def key_id(self) -> str:
        return transit_key_id(self.transit.key)


@dataclass(frozen=True)
class AwsKmsEncryption:
    """A process's encryption by aws-kms."""

    aws: AwsKmsSettings
    cache: DataKeyCacheSettings = field(default_factory=DataKeyCacheSettings)
    # Configured keys kept to read static-format payloads (decrypt only).
    static_keys: EncryptionKeys | None = None
    # Each tenant's payloads sealed under its own key (PAYLOAD_TENANT_KEYS); False: all under key_id.
    tenant_keys: bool = True

    @property
    def key_id(self) -> str:
        """As configured; payloads name the key ARN KMS answers."""
        return aws_kms_key_id(self.aws.key)


EncryptionSettings = EncryptionKeys | StaticTenantEncryption | TransitEncryption | AwsKmsEncryption


def key_source_for(encryption: EncryptionSettings) -> KeySource:
    """A new key source (share one per process: it holds the data key and the cache of unwrapped keys)."""
    if isinstance(encryption, EncryptionKeys):
        return StaticKeySource(encryption)
    if isinstance(encryption, StaticTenantEncryption):
        return StaticTenantKeySource(StaticKeySource(encryption.keys), encryption.tenant_keys_dir, create_missing=encryption.create_missing_tenant_keys)
    static = StaticKeySource(encryption.static_keys) if encryption.static_keys is not None else None
    wrapper: KeyWrapper = (
        AwsKms(encryption.aws) if isinstance(encryption, AwsKmsEncryption) else VaultTransit(VaultClient(encryption.vault, VAULT_TRANSIT), encryption.transit)
    )
    product = EnvelopeKeySource(wrapper, encryption.cache, static)
    if not encryption.tenant_keys:
        return product
    return TenantKeySource(product, lambda tenant: EnvelopeKeySource(wrapper.for_tenant(tenant), encryption.cache, static))
