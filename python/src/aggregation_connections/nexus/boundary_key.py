"""The caller's boundary key (docs/nexus.md): the lender's own key, which seals what its workflows send
through the endpoint and opens what comes back. The lender gives the product the same key as a file of
one line, ``<keyId>:<base64 of 32 bytes>`` (NEXUS_ENDPOINT_KEY_FILES, src/nexus/configured-workers.ts);
the product's own keys never leave the product."""

from __future__ import annotations

import base64
import binascii
import secrets
from pathlib import Path

from ..codec.key_source import EncryptionKeys
from ..contract.names import PAYLOAD_KEY_BYTES


class BoundaryKeyFileError(ValueError):
    """A boundary key file that cannot be read, or does not hold ``<keyId>:<base64 of 32 bytes>``."""


def parse_boundary_key(text: str, source: str = "the boundary key") -> EncryptionKeys:
    """``<keyId>:<base64 of 32 bytes>`` (surrounding whitespace ignored), as the product reads it."""
    line = text.strip()
    key_id, colon, encoded = line.rpartition(":")
    try:
        key = base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError):
        key = b""
    if not colon or not key_id or len(key) != PAYLOAD_KEY_BYTES:
        raise BoundaryKeyFileError(f"{source} must hold <keyId>:<base64 of {PAYLOAD_KEY_BYTES} bytes>")
    return EncryptionKeys(key_id=key_id, key=key)


def read_boundary_key(path: str | Path) -> EncryptionKeys:
    """The key of a boundary key file (BoundaryKeyFileError when it cannot be read or is malformed)."""
    try:
        text = Path(path).read_text("utf-8")
    except OSError as error:
        raise BoundaryKeyFileError(f"cannot read the boundary key file {path}: {error.strerror or error}") from error
    return parse_boundary_key(text, f"the boundary key file {path}")


def new_boundary_key(key_id: str) -> EncryptionKeys:
    """A fresh random key under ``key_id``."""
    return EncryptionKeys(key_id=key_id, key=secrets.token_bytes(PAYLOAD_KEY_BYTES))


def boundary_key_text(keys: EncryptionKeys) -> str:
    """The file's line for the product (``<keyId>:<base64>`` and a newline)."""
    return f"{keys.key_id}:{base64.b64encode(keys.key).decode('ascii')}\n"
