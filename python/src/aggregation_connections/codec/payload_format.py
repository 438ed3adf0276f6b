"""The encrypted payload's wire format (docs/payload-format.md; src/codec/payload-format.ts).

Both formats: metadata ``encoding`` = "binary/encrypted"; data = nonce (12 bytes) ‖ AES-256-GCM
ciphertext ‖ tag (16 bytes); the plaintext is the whole original Payload, proto-encoded; associated data:
the payload's workflow binding when it has one (payload_binding.py), none otherwise.
- static (format 0, no ``encryption-format``): ``encryption-key-id`` names a configured key;
  ``encryption-tenant``, when a tenant's key file holds it, that tenant's customer id (static_tenant_keys.py).
- envelope-v1: ``encryption-format`` = "envelope-v1", ``encryption-key-id`` = "<provider>:<KMS key>",
  ``encryption-key-version`` (decimal) and ``encryption-wrapped-key`` (the data key as the KMS wrapped it).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from temporalio.api.common.v1 import Payload

from ..contract.names import ID_SEGMENT_RULE, ID_SEGMENT_SOURCE
from .errors import PayloadDecryptionError

ENCRYPTED_ENCODING = "binary/encrypted"
ENCODING_METADATA_KEY = "encoding"
KEY_ID_METADATA_KEY = "encryption-key-id"
FORMAT_METADATA_KEY = "encryption-format"
KEY_VERSION_METADATA_KEY = "encryption-key-version"
WRAPPED_KEY_METADATA_KEY = "encryption-wrapped-key"
TENANT_METADATA_KEY = "encryption-tenant"
ENVELOPE_FORMAT = "envelope-v1"
DATA_KEY_BYTES = 32
NONCE_BYTES = 12
TAG_BYTES = 16

_VERSION = re.compile(r"[1-9][0-9]{0,9}")
_TENANT = re.compile(r"[A-Za-z0-9._-]{1,128}")
_ID_SEGMENT = re.compile(ID_SEGMENT_SOURCE)

Metadata = Mapping[str, bytes]


def metadata_text(metadata: Metadata, key: str) -> str | None:
    """A metadata value as text, or None when absent or empty."""
    raw = metadata.get(key)
    return raw.decode("utf-8", errors="replace") if raw else None


def is_encrypted(payload: Payload) -> bool:
    """True when the payload's metadata says ``encoding: binary/encrypted``."""
    return metadata_text(payload.metadata, ENCODING_METADATA_KEY) == ENCRYPTED_ENCODING


@dataclass(frozen=True)
class EnvelopeMetadata:
    """What an envelope-v1 payload says of its data key."""

    key_id: str
    key_version: int
    wrapped_key: str
    #: The tenant whose key sealed it (``encryption-tenant``); None: the product's key.
    tenant: str | None = None


def envelope_metadata(envelope: EnvelopeMetadata) -> dict[str, bytes]:
    """The metadata an envelope-v1 payload carries."""
    return {
        ENCODING_METADATA_KEY: ENCRYPTED_ENCODING.encode(),
        FORMAT_METADATA_KEY: ENVELOPE_FORMAT.encode(),
        KEY_ID_METADATA_KEY: envelope.key_id.encode(),
        KEY_VERSION_METADATA_KEY: str(envelope.key_version).encode(),
        WRAPPED_KEY_METADATA_KEY: envelope.wrapped_key.encode(),
        **({} if envelope.tenant is None else {TENANT_METADATA_KEY: envelope.tenant.encode()}),
    }


def static_metadata(key_id: str, tenant: str | None = None) -> dict[str, bytes]:
    """The metadata a static-format payload carries (a tenant's key file's key: its customer id too)."""
    return {
        ENCODING_METADATA_KEY: ENCRYPTED_ENCODING.encode(),
        KEY_ID_METADATA_KEY: key_id.encode(),
        **({} if tenant is None else {TENANT_METADATA_KEY: tenant.encode()}),
    }


def static_tenant(metadata: Metadata, key_id: str) -> str | None:
    """The tenant whose key file sealed a static-format payload (``encryption-tenant``), or None: the product's keys.
    A label that is no customer id (the id-segment rule: it names a file) is refused by name, its first 32 characters."""
    tenant = metadata_text(metadata, TENANT_METADATA_KEY)
    if tenant is not None and not _ID_SEGMENT.fullmatch(tenant):
        raise PayloadDecryptionError(
            key_id, f'static payload (key id "{key_id}") has {TENANT_METADATA_KEY} "{tenant[:32]}", not a customer id: it {ID_SEGMENT_RULE}'
        )
    return tenant


def read_envelope(metadata: Metadata) -> EnvelopeMetadata | None:
    """An encrypted payload's envelope metadata, or None for the static format; bad metadata is refused by name."""
    fmt = metadata_text(metadata, FORMAT_METADATA_KEY)
    if fmt is None:
        return None
    key_id = metadata_text(metadata, KEY_ID_METADATA_KEY)
    if fmt != ENVELOPE_FORMAT:
        raise PayloadDecryptionError(
            key_id,
            f'encrypted payload of {FORMAT_METADATA_KEY} "{fmt[:64]}", which this process does not read (it reads "{ENVELOPE_FORMAT}")',
        )
    if key_id is None:
        raise PayloadDecryptionError(None, f"{ENVELOPE_FORMAT} payload without {KEY_ID_METADATA_KEY} metadata")
    version = metadata_text(metadata, KEY_VERSION_METADATA_KEY)
    if version is None or not _VERSION.fullmatch(version):
        shown = "null" if version is None else repr(version[:32])
        raise PayloadDecryptionError(
            key_id,
            f'{ENVELOPE_FORMAT} payload (key id "{key_id}") has {KEY_VERSION_METADATA_KEY} {shown}: must be a key version, a whole number from 1',
        )
    wrapped_key = metadata_text(metadata, WRAPPED_KEY_METADATA_KEY)
    if wrapped_key is None:
        raise PayloadDecryptionError(key_id, f'{ENVELOPE_FORMAT} payload (key id "{key_id}") without {WRAPPED_KEY_METADATA_KEY} metadata')
    tenant = metadata_text(metadata, TENANT_METADATA_KEY)
    if tenant is not None and not _TENANT.fullmatch(tenant):
        raise PayloadDecryptionError(
            key_id,
            f'{ENVELOPE_FORMAT} payload (key id "{key_id}") has {TENANT_METADATA_KEY} "{tenant[:32]}": must be a customer id (letters, digits, ".", "_", "-")',
        )
    return EnvelopeMetadata(key_id=key_id, key_version=int(version), wrapped_key=wrapped_key, tenant=tenant)


def seal_payload(key: AESGCM, payload: Payload, nonce: bytes | None = None, associated_data: bytes | None = None) -> bytes:
    """nonce ‖ ciphertext ‖ tag of the proto-encoded payload; a random nonce unless one is given (test vectors);
    ``associated_data``: its workflow binding (payload_binding.py)."""
    nonce = os.urandom(NONCE_BYTES) if nonce is None else nonce
    if len(nonce) != NONCE_BYTES:
        raise ValueError(f"a nonce is {NONCE_BYTES} bytes, got {len(nonce)}")
    return nonce + key.encrypt(nonce, payload.SerializeToString(deterministic=True), associated_data)


def open_payload(key: AESGCM, key_id: str, data: bytes, associated_data: bytes | None = None) -> Payload:
    """The payload sealed in ``data``; a wrong key or altered bytes are a PayloadDecryptionError naming the key id."""
    if len(data) < NONCE_BYTES + TAG_BYTES:
        raise PayloadDecryptionError(key_id, f'encrypted payload (key id "{key_id}") is too short: {len(data)} bytes')
    try:
        plaintext = key.decrypt(data[:NONCE_BYTES], data[NONCE_BYTES:], associated_data)
    except InvalidTag:
        raise PayloadDecryptionError(
            key_id,
            f'cannot decrypt a payload with key id "{key_id}": it was altered, or encrypted with another key under the same id',
        ) from None
    return Payload.FromString(plaintext)
