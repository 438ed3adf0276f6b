"""The bytes a driver stores for a payload, as src/payload-store/stored-payload.ts keeps them: the whole
Payload message (metadata and data), protobuf-serialized, named by its SHA-256; read back only when the
bytes still hash to what the claim says."""

from __future__ import annotations

from temporalio.api.common.v1 import Payload

from .errors import StoredPayloadIntegrityError
from .keys import CheckedClaim, sha256_hex


def serialize_payload(payload: Payload) -> tuple[bytes, str]:
    """The stored bytes and their SHA-256 (hex)."""
    data = payload.SerializeToString(deterministic=True)
    return data, sha256_hex(data)


def verified_payload(data: bytes, checked: CheckedClaim, driver: str, location: str) -> Payload:
    """The Payload of stored bytes; StoredPayloadIntegrityError when they no longer match the claim."""
    actual = sha256_hex(data)
    if actual != checked.sha256:
        raise StoredPayloadIntegrityError(driver, location, checked.key, checked.sha256, actual)
    payload = Payload()
    payload.ParseFromString(data)
    return payload
