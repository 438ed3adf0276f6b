"""Where the codec gets its keys (src/codec/key-source.ts): the key new payloads are sealed with (and
the metadata naming it), and the key a payload's metadata names. StaticKeySource is configured keys
(the static format); envelope_keys.py is a KMS's data keys (envelope-v1)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol

from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from .errors import PayloadDecryptionError, UnknownEncryptionKeyError
from .payload_format import DATA_KEY_BYTES, KEY_ID_METADATA_KEY, Metadata, metadata_text, read_envelope, static_metadata, static_tenant


@dataclass(frozen=True)
class SealingKey:
    """The key the next payloads are sealed with, and the metadata written beside them."""

    key: AESGCM
    key_id: str
    metadata: Mapping[str, bytes]


@dataclass(frozen=True)
class OpeningKey:
    key: AESGCM
    key_id: str


class KeySource(Protocol):
    @property
    def key_id(self) -> str:
        """The id written beside new payloads."""
        ...

    async def sealing_key(self, uses: int, tenant: str | None = None) -> SealingKey:
        """The key for the next ``uses`` payloads of ``tenant`` (None: of no tenant); a source of one key ignores the tenant."""
        ...

    async def opening_key(self, metadata: Metadata) -> OpeningKey:
        """The key an encrypted payload's metadata names; PayloadDecryptionError when it names none this process can have."""
        ...


@dataclass(frozen=True)
class EncryptionKeys:
    """Configured keys: ``key`` (32 bytes) seals under ``key_id``; ``decryption_keys`` only open."""

    key_id: str
    key: bytes = field(repr=False)
    decryption_keys: Mapping[str, bytes] = field(default_factory=dict, repr=False)


class StaticKeySource:
    """Configured keys: the current one seals, any of them opens the payloads that name it. The product's
    keys have no tenant; a tenant's key file (static_tenant_keys.py) is a source of its own, whose payloads
    say whose they are (``encryption-tenant``), and each source opens only its own."""

    def __init__(self, keys: EncryptionKeys, tenant: str | None = None) -> None:
        if keys.key_id == "":
            raise ValueError("EncryptionCodec: the key id must not be empty")
        opened = {key_id: _checked_key(key_id, raw) for key_id, raw in keys.decryption_keys.items()}
        current = _checked_key(keys.key_id, keys.key)
        opened[keys.key_id] = current
        self._key_id = keys.key_id
        self._keys = opened
        self._tenant = tenant
        self._sealing = SealingKey(current, keys.key_id, static_metadata(keys.key_id, tenant))

    @property
    def key_id(self) -> str:
        return self._key_id

    @property
    def tenant(self) -> str | None:
        """The tenant whose key file these keys are; None: the product's."""
        return self._tenant

    @property
    def key_ids(self) -> list[str]:
        """Every key id this source opens with (the current one first)."""
        return [self._key_id, *(key_id for key_id in self._keys if key_id != self._key_id)]

    async def sealing_key(self, uses: int, tenant: str | None = None) -> SealingKey:
        return self._sealing

    async def opening_key(self, metadata: Metadata) -> OpeningKey:
        return self.opening_key_now(metadata)

    def opening_key_now(self, metadata: Metadata) -> OpeningKey:
        envelope = read_envelope(metadata)
        if envelope is not None:
            raise PayloadDecryptionError(
                envelope.key_id,
                f'payload\'s data key is wrapped by key id "{envelope.key_id}" (version {envelope.key_version}), and this process '
                "has no key provider for it: set PAYLOAD_KEY_PROVIDER as its writer had it",
            )
        key_id = metadata_text(metadata, KEY_ID_METADATA_KEY)
        if key_id is None:
            raise PayloadDecryptionError(None, f"encrypted payload without {KEY_ID_METADATA_KEY} metadata")
        tenant = static_tenant(metadata, key_id)
        if tenant != self._tenant:
            if self._tenant is None:
                raise PayloadDecryptionError(
                    key_id,
                    f'payload sealed with key "{key_id}" of tenant "{tenant}": this process has no keys per tenant in static mode '
                    "(PAYLOAD_TENANT_KEYS_DIR with PAYLOAD_KEY_PROVIDER=static)",
                )
            whose = "the product" if tenant is None else f'tenant "{tenant}"'
            raise PayloadDecryptionError(key_id, f'payload sealed with key "{key_id}" of {whose}, not of tenant "{self._tenant}"')
        key = self._keys.get(key_id)
        if key is None:
            raise UnknownEncryptionKeyError(key_id, self.key_ids)
        return OpeningKey(key, key_id)


def _checked_key(key_id: str, key: bytes) -> AESGCM:
    if len(key) != DATA_KEY_BYTES:
        raise ValueError(f'EncryptionCodec: key "{key_id}" must be {DATA_KEY_BYTES} bytes, got {len(key)}')
    return AESGCM(key)
