"""The key source chosen by the settings (src/codec/key-provider.ts): configured keys (the static
format), or Vault's or OpenBao's transit engine (envelope-v1; configured keys, when given, still read
the static payloads written before the switch)."""

from __future__ import annotations

from dataclasses import dataclass, field

from .envelope_keys import DataKeyCacheSettings, EnvelopeKeySource
from .key_source import EncryptionKeys, KeySource, StaticKeySource
from .vault_client import VaultClient, VaultSettings
from .vault_transit import VAULT_TRANSIT, TransitKey, VaultTransit, transit_key_id


@dataclass(frozen=True)
class TransitEncryption:
    """A process's encryption by vault-transit."""

    vault: VaultSettings
    transit: TransitKey = field(default_factory=TransitKey)
    cache: DataKeyCacheSettings = field(default_factory=DataKeyCacheSettings)
    # Configured keys kept to read static-format payloads (decrypt only).
    static_keys: EncryptionKeys | None = None

    @property
    def key_id(self) -> str:
        return transit_key_id(self.transit.key)


EncryptionSettings = EncryptionKeys | TransitEncryption


def key_source_for(encryption: EncryptionSettings) -> KeySource:
    """A new key source (share one per process: it holds the data key and the cache of unwrapped keys)."""
    if isinstance(encryption, EncryptionKeys):
        return StaticKeySource(encryption)
    static = StaticKeySource(encryption.static_keys) if encryption.static_keys is not None else None
    return EnvelopeKeySource(VaultTransit(VaultClient(encryption.vault, VAULT_TRANSIT), encryption.transit), encryption.cache, static)
