"""Keys per tenant in static mode (src/codec/static-tenant-keys.ts): with PAYLOAD_KEY_PROVIDER=static and
PAYLOAD_TENANT_KEYS_DIR, each tenant has its own key file ``<dir>/<customerId>.key``, lines
``<key id>:<base64 of 32 bytes>`` of mode 0600. The first line's key seals that tenant's payloads
(static format, ``encryption-tenant`` = the tenant); every line's key opens them. Payloads of no tenant
keep the product's configured keys, byte for byte as without the directory.

A tenant's file is read when first needed and again when the copy in memory is older than
TENANT_KEY_FILE_RECHECK_S, so a rotation (a new first line) or a forget (the file deleted) reaches every
process within that; a payload naming a key id the copy lacks has the file read again once. A file that
is gone makes its tenant's payloads a KeyDestroyedError and is dropped from memory at once. Sealing for a
tenant without a file creates one only with Temporal on this machine (as local_key.py: whichever process
comes first, TypeScript or Python, wins the hard link); elsewhere it is a TenantKeyMissingError, and
opening never creates one."""

from __future__ import annotations

import base64
import binascii
import os
import re
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from ..contract.names import ID_SEGMENT_RULE, ID_SEGMENT_SOURCE
from .errors import KeyDestroyedError, TenantKeyFileError, TenantKeyMissingError
from .key_source import EncryptionKeys, OpeningKey, SealingKey, StaticKeySource
from .payload_format import DATA_KEY_BYTES, KEY_ID_METADATA_KEY, Metadata, metadata_text, read_envelope, static_tenant

#: How old a tenant's key file copy in memory may get before it is read again (TS TENANT_KEY_FILE_RECHECK_MS).
TENANT_KEY_FILE_RECHECK_S: Final = 10.0

_KEY_ID = re.compile(r"[A-Za-z0-9._-]{1,64}")
_ID_SEGMENT = re.compile(ID_SEGMENT_SOURCE)
_LINE_RULE = f'must be "<key id>:<base64 of {DATA_KEY_BYTES} bytes>", the key id 1 to 64 letters, digits, ".", "_" or "-"'


def tenant_key_file_path(directory: str, tenant: str) -> str:
    """Where ``tenant``'s key file is (``tenant`` a customer id: it names the file)."""
    return os.path.join(directory, f"{tenant}.key")


def read_tenant_key_file(path: str, tenant: str) -> StaticKeySource | None:
    """A tenant's key file as a key source of that tenant (its first key seals), or None when there is no file;
    TenantKeyFileError when it cannot be read, is open to group or others, or holds anything but key lines."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return None
    except OSError as error:
        raise TenantKeyFileError(path, f"cannot be read: {error.strerror or error}") from error
    try:
        with os.fdopen(fd, "rb") as file:
            mode = os.fstat(file.fileno()).st_mode
            if mode & 0o077:
                raise TenantKeyFileError(path, f"is readable or writable by group or others (mode {mode & 0o777:04o}): chmod 600 it")
            raw = file.read()
    except OSError as error:
        raise TenantKeyFileError(path, f"cannot be read: {error.strerror or error}") from error
    try:
        # A byte order mark some editors write is no part of the first line.
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise TenantKeyFileError(path, f'is not text: it must hold lines "<key id>:<base64 of {DATA_KEY_BYTES} bytes>"') from None
    return _parse_tenant_keys(path, text, tenant)


def _parse_tenant_keys(path: str, text: str, tenant: str) -> StaticKeySource:
    keys: dict[str, bytes] = {}
    for number, raw_line in enumerate(text.split("\n"), start=1):
        line = raw_line.strip()
        if line == "":
            continue
        key_id, colon, encoded = line.partition(":")
        if not colon or not _KEY_ID.fullmatch(key_id):
            raise TenantKeyFileError(path, f"line {number} {_LINE_RULE}")
        if key_id in keys:
            raise TenantKeyFileError(path, f'line {number}: key id "{key_id}" appears twice; give each key its own id')
        key = _decode_key(encoded)
        if key is None:
            raise TenantKeyFileError(path, f'line {number} (key id "{key_id}"): the key must be standard base64 (padded) of exactly {DATA_KEY_BYTES} bytes')
        keys[key_id] = key
    if not keys:
        raise TenantKeyFileError(path, f'holds no key: it must hold lines "<key id>:<base64 of {DATA_KEY_BYTES} bytes>", the first one sealing')
    first_id = next(iter(keys))
    return StaticKeySource(EncryptionKeys(first_id, keys[first_id], keys), tenant)


def _decode_key(text: str) -> bytes | None:
    """Standard, padded base64 of exactly 32 bytes, or None."""
    try:
        key = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return None
    # Canonical: the text is what encoding the key gives (no missing padding, no stray bits).
    return key if len(key) == DATA_KEY_BYTES and base64.b64encode(key).decode("ascii") == text else None


def create_tenant_key_file(path: str) -> None:
    """Writes a new key file at ``path`` unless one exists (the first process to write it wins): the
    directory made with mode 0700, the file whole with mode 0600, one line ``tenant-<16 hex>:<base64>``."""
    try:
        os.makedirs(os.path.dirname(path) or ".", mode=0o700, exist_ok=True)
    except OSError as error:
        raise TenantKeyFileError(path, f"cannot be created: its directory: {error.strerror or error}") from error
    draft = f"{path}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
    try:
        fd = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="ascii") as out:
            out.write(f"tenant-{secrets.token_hex(8)}:{base64.b64encode(secrets.token_bytes(DATA_KEY_BYTES)).decode('ascii')}\n")
        try:
            # A hard link appears whole and fails if the file exists: processes sealing at once agree on the first one's key.
            os.link(draft, path)
        except FileExistsError:
            pass
    except OSError as error:
        raise TenantKeyFileError(path, f"cannot be created: {error.strerror or error}") from error
    finally:
        Path(draft).unlink(missing_ok=True)


@dataclass(frozen=True)
class _TenantKeys:
    source: StaticKeySource
    read_at: float


class StaticTenantKeySource:
    """The product's configured keys for payloads of no tenant, and each tenant's key file for its own."""

    def __init__(
        self,
        product: StaticKeySource,
        directory: str,
        *,
        create_missing: bool = False,
        now: Callable[[], float] = time.monotonic,
    ) -> None:
        """``create_missing``: a tenant without a key file gets one when its first payload is sealed (only
        with Temporal on this machine); ``now``: the clock the copies in memory age by (seconds)."""
        if product.tenant is not None:
            raise ValueError("StaticTenantKeySource: the product's keys have no tenant")
        self._product = product
        self._directory = directory
        self._create_missing = create_missing
        self._now = now
        self._tenants: dict[str, _TenantKeys] = {}

    @property
    def key_id(self) -> str:
        """The product key's id (a tenant's payloads name their own)."""
        return self._product.key_id

    @property
    def directory(self) -> str:
        return self._directory

    @property
    def cached_tenants(self) -> frozenset[str]:
        """The tenants whose key file this process holds a copy of."""
        return frozenset(self._tenants)

    def path_of(self, tenant: str) -> str:
        return tenant_key_file_path(self._directory, tenant)

    async def sealing_key(self, uses: int, tenant: str | None = None) -> SealingKey:
        """The product's key for payloads of no tenant; a tenant's file's first key for its own (the file
        created first with Temporal on this machine, else TenantKeyMissingError)."""
        if tenant is None:
            return await self._product.sealing_key(uses)
        if not _ID_SEGMENT.fullmatch(tenant):
            # Never the case for an id the product makes (a customer id is an id segment); no file is looked up under such a name.
            raise TenantKeyFileError(tenant_key_file_path(self._directory, "<customerId>"), f'customer id "{tenant[:32]}" {ID_SEGMENT_RULE}')
        source, _ = self._keys_of(tenant, create=self._create_missing)
        if source is None:
            raise TenantKeyMissingError(tenant, self.path_of(tenant))
        return await source.sealing_key(uses)

    async def opening_key(self, metadata: Metadata) -> OpeningKey:
        return self.opening_key_now(metadata)

    def opening_key_now(self, metadata: Metadata) -> OpeningKey:
        """A tenant's static payload through its key file (read again once if it lacks the payload's key
        id); everything else as the product's keys open it. Never creates a file."""
        key_id = metadata_text(metadata, KEY_ID_METADATA_KEY)
        if read_envelope(metadata) is not None or key_id is None:
            return self._product.opening_key_now(metadata)
        tenant = static_tenant(metadata, key_id)
        if tenant is None:
            return self._product.opening_key_now(metadata)
        source, fresh = self._keys_of(tenant, create=False)
        if source is not None and key_id not in source.key_ids and not fresh:
            # Another process may have rotated the tenant's key since this copy was read.
            source = self._read(tenant, create=False)
        if source is None:
            raise KeyDestroyedError.tenant_key_file_gone(key_id, self.path_of(tenant), tenant)
        return source.opening_key_now(metadata)

    def _keys_of(self, tenant: str, *, create: bool) -> tuple[StaticKeySource | None, bool]:
        """The tenant's keys (None: no file) and whether they were read just now."""
        cached = self._tenants.get(tenant)
        if cached is not None and self._now() - cached.read_at < TENANT_KEY_FILE_RECHECK_S:
            return cached.source, False
        return self._read(tenant, create=create), True

    def _read(self, tenant: str, *, create: bool) -> StaticKeySource | None:
        path = self.path_of(tenant)
        source = read_tenant_key_file(path, tenant)
        if source is None and create:
            create_tenant_key_file(path)
            source = read_tenant_key_file(path, tenant)
            if source is None:
                raise TenantKeyFileError(path, "was created and is gone already (deleted at once?)")
        if source is None:
            # Forgotten: none of its keys stays in memory.
            self._tenants.pop(tenant, None)
            return None
        self._tenants[tenant] = _TenantKeys(source, self._now())
        return source
