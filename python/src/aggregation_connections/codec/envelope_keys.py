"""Envelope encryption's keys, cached so that a KMS is never asked once per payload
(src/codec/envelope-keys.ts): one data key at a time seals new payloads, for a bounded lifetime and a
bounded number of payloads; data keys unwrapped for reading stay in a bounded cache for a lifetime.
Concurrent callers share one request. While the KMS is down, cached keys keep working until they expire."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from cachetools import TTLCache
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from ..contract.names import (
    PAYLOAD_DATA_KEY_LIFETIME_S_DEFAULT,
    PAYLOAD_DATA_KEY_MAX_USES_DEFAULT,
    PAYLOAD_UNWRAPPED_KEY_CACHE_SIZE_DEFAULT,
    PAYLOAD_UNWRAPPED_KEY_LIFETIME_S_DEFAULT,
)
from .errors import PayloadDecryptionError
from .key_source import KeySource, OpeningKey, SealingKey
from .payload_format import (
    DATA_KEY_BYTES,
    KEY_ID_METADATA_KEY,
    EnvelopeMetadata,
    Metadata,
    envelope_metadata,
    metadata_text,
    read_envelope,
)


@dataclass(frozen=True)
class DataKey:
    """A new data key, in clear and as the KMS wrapped it."""

    plaintext: bytes
    wrapped_key: str
    key_version: int
    # The key id to write beside its payloads when the KMS names the key more exactly than the
    # wrapper's key_id (AWS: the key ARN behind an alias or a key id).
    key_id: str | None = None


class KeyWrapper(Protocol):
    """What a KMS does for envelope encryption (vault_transit.py, aws_kms.py)."""

    @property
    def key_id(self) -> str: ...

    @property
    def tenant(self) -> str | None:
        """The tenant whose key this wrapper's data keys are made under (written beside them); None: the product's."""
        ...

    async def new_data_key(self) -> DataKey: ...

    async def unwrap(self, envelope: EnvelopeMetadata) -> bytes: ...

    def for_tenant(self, tenant: str) -> KeyWrapper:
        """The same KMS making data keys under ``tenant``'s key (tenant_keys.py)."""
        ...


@dataclass(frozen=True)
class DataKeyCacheSettings:
    """How long and how much a data key is used (PAYLOAD_DATA_KEY_*, PAYLOAD_UNWRAPPED_KEY_*; the defaults are the worker's)."""

    data_key_lifetime_s: float = PAYLOAD_DATA_KEY_LIFETIME_S_DEFAULT
    data_key_max_uses: int = PAYLOAD_DATA_KEY_MAX_USES_DEFAULT
    unwrapped_key_lifetime_s: float = PAYLOAD_UNWRAPPED_KEY_LIFETIME_S_DEFAULT
    unwrapped_key_cache_size: int = PAYLOAD_UNWRAPPED_KEY_CACHE_SIZE_DEFAULT


class _CurrentDataKey:
    def __init__(self, sealing: SealingKey, expires_at: float, uses_left: int) -> None:
        self.sealing = sealing
        self.expires_at = expires_at
        self.uses_left = uses_left


class EnvelopeKeySource:
    def __init__(
        self,
        wrapper: KeyWrapper,
        settings: DataKeyCacheSettings,
        static_keys: KeySource | None = None,
        now: Callable[[], float] = time.monotonic,
    ) -> None:
        self._wrapper = wrapper
        self._settings = settings
        self._static_keys = static_keys
        self._now = now
        self._current: _CurrentDataKey | None = None
        self._making: asyncio.Future[_CurrentDataKey] | None = None
        self._unwrapped = _unwrapped_key_cache(settings, now)
        self._unwrapping: dict[str, asyncio.Future[AESGCM]] = {}

    @property
    def key_id(self) -> str:
        return self._wrapper.key_id

    async def sealing_key(self, uses: int, tenant: str | None = None) -> SealingKey:
        """The key for the next ``uses`` payloads (a source of one KMS key: ``tenant`` is its wrapper's)."""
        taken = self._take(uses)
        if taken is not None:
            return taken
        while True:
            # Every batch waiting for a new data key shares one request.
            if self._making is None:
                self._making = asyncio.ensure_future(self._make_data_key())
                self._making.add_done_callback(self._made)
            made = await asyncio.shield(self._making)
            taken = self._take(uses)
            if taken is not None:
                return taken
            # A batch larger than a data key's uses still gets the key made for it.
            if self._current is made and made.uses_left == self._settings.data_key_max_uses:
                made.uses_left = 0
                return made.sealing

    def _made(self, _: asyncio.Future[_CurrentDataKey]) -> None:
        self._making = None

    async def opening_key(self, metadata: Metadata) -> OpeningKey:
        envelope = read_envelope(metadata)
        if envelope is None:
            if self._static_keys is not None:
                return await self._static_keys.opening_key(metadata)
            key_id = metadata_text(metadata, KEY_ID_METADATA_KEY)
            raise PayloadDecryptionError(
                key_id,
                f'payload encrypted with configured key id "{key_id or "(none)"}" (the static format), and this process has no '
                "configured keys: set PAYLOAD_ENCRYPTION_KEY and PAYLOAD_ENCRYPTION_KEY_ID to the key that wrote it",
            )
        # The tenant too: a KMS binds it to the wrapped key, so a payload relabelled to another tenant is not a hit.
        cache_key = f"{envelope.key_id}\n{envelope.wrapped_key}\n{envelope.tenant or ''}"
        cached = self._unwrapped.get(cache_key)
        if cached is not None:
            return OpeningKey(cached, envelope.key_id)
        pending = self._unwrapping.get(cache_key)
        if pending is None:
            pending = asyncio.ensure_future(self._unwrap(envelope, cache_key))
            self._unwrapping[cache_key] = pending
            pending.add_done_callback(lambda _: self._unwrapping.pop(cache_key, None))
        return OpeningKey(await asyncio.shield(pending), envelope.key_id)

    def _take(self, uses: int) -> SealingKey | None:
        current = self._current
        if current is None or current.expires_at <= self._now() or current.uses_left < uses:
            return None
        current.uses_left -= uses
        return current.sealing

    async def _make_data_key(self) -> _CurrentDataKey:
        data_key = await self._wrapper.new_data_key()
        key_id = data_key.key_id or self._wrapper.key_id
        key = _data_key_of(data_key.plaintext, key_id)
        metadata = envelope_metadata(EnvelopeMetadata(key_id, data_key.key_version, data_key.wrapped_key, self._wrapper.tenant))
        made = _CurrentDataKey(SealingKey(key, key_id, metadata), self._now() + self._settings.data_key_lifetime_s, self._settings.data_key_max_uses)
        self._current = made
        # This process's own payloads open without asking the KMS.
        self._unwrapped[f"{key_id}\n{data_key.wrapped_key}\n{self._wrapper.tenant or ''}"] = key
        return made

    async def _unwrap(self, envelope: EnvelopeMetadata, cache_key: str) -> AESGCM:
        key = _data_key_of(await self._wrapper.unwrap(envelope), envelope.key_id)
        self._unwrapped[cache_key] = key
        return key


def _unwrapped_key_cache(settings: DataKeyCacheSettings, now: Callable[[], float]) -> TTLCache[str, AESGCM]:
    """At most unwrapped_key_cache_size keys, the least recently used going first, each for
    unwrapped_key_lifetime_s from when it was set (src/codec/expiring-cache.ts); an expired key is a miss
    and is dropped before a live one is pushed out."""
    if settings.unwrapped_key_cache_size < 1:
        raise ValueError(f"DataKeyCacheSettings: unwrapped_key_cache_size must be a whole number from 1, got {settings.unwrapped_key_cache_size}")
    if not settings.unwrapped_key_lifetime_s > 0:
        raise ValueError(f"DataKeyCacheSettings: unwrapped_key_lifetime_s must be above 0, got {settings.unwrapped_key_lifetime_s}")
    return TTLCache(settings.unwrapped_key_cache_size, settings.unwrapped_key_lifetime_s, timer=now)


def _data_key_of(plaintext: bytes, key_id: str) -> AESGCM:
    if len(plaintext) != DATA_KEY_BYTES:
        raise PayloadDecryptionError(key_id, f'the KMS returned a data key of {len(plaintext)} bytes for key id "{key_id}", not {DATA_KEY_BYTES}')
    return AESGCM(plaintext)
