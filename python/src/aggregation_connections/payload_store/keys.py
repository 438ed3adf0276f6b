"""Where a stored payload lives, as src/payload-store/object-keys.ts files it (relative to a directory
or a key prefix), and the claims that point at it:

    <namespace>/workflows/<workflow id>/<sha256>    payloads of a workflow and of its activities
    <namespace>/activities/<activity id>/<sha256>   payloads of a standalone activity
    <namespace>/unscoped/<sha256>                   payloads the SDK gave no identity for

Segments are percent-encoded down to [A-Za-z0-9._-] with no leading dot; a long id is cut and suffixed
with its own hash. The name is the SHA-256 of the stored bytes (the serialized Payload message).

Claims carry ``key``, ``hash_algorithm`` and ``hash_value`` (plus ``bucket`` on S3), the spelling of
Temporal's stock S3 drivers; claims the TypeScript worker wrote before used ``hashAlgorithm`` and
``hashValue`` and are read too.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass

from temporalio.converter import StorageDriverActivityInfo, StorageDriverWorkflowInfo

HASH_ALGORITHM = "sha256"
_MAX_SEGMENT_CHARS = 120
_CUT_SEGMENT_CHARS = 80
_SEGMENT_HASH_CHARS = 32
# Stands for a missing namespace; never produced by encoding a value (a lone "~" is always escaped).
_NO_NAMESPACE = "~"
_SEGMENT = rf"(?!\.)(?:[A-Za-z0-9._-]|%[0-9A-F]{{2}})+(?:~[0-9a-f]{{{_SEGMENT_HASH_CHARS}}})?"
_RELATIVE_KEY = re.compile(rf"(?P<namespace>{_SEGMENT}|~)/(?:(?P<kind>workflows|activities)/(?P<id>{_SEGMENT})|unscoped)/(?P<sha256>[0-9a-f]{{64}})")
_KEPT = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-")


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def encode_key_segment(value: str) -> str:
    """Percent-encodes one path segment (UTF-8, upper-case hex), shortening it when it is long."""
    encoded = ""
    for byte in value.encode("utf-8"):
        keep = byte in _KEPT and not (byte == ord(".") and encoded == "")
        encoded += chr(byte) if keep else f"%{byte:02X}"
    if len(encoded) <= _MAX_SEGMENT_CHARS:
        return encoded
    # Cut on a whole character or escape, never inside "%XX".
    cut = encoded[:_CUT_SEGMENT_CHARS]
    escape = cut.rfind("%")
    if escape > _CUT_SEGMENT_CHARS - 3:
        cut = cut[:escape]
    return f"{cut}~{sha256_hex(value.encode('utf-8'))[:_SEGMENT_HASH_CHARS]}"


def payload_key(target: StorageDriverWorkflowInfo | StorageDriverActivityInfo | None, sha256: str) -> str:
    """The key of a payload with this hash, stored for this workflow or activity."""
    namespace = encode_key_segment(target.namespace) if target is not None and target.namespace else _NO_NAMESPACE
    if target is not None and target.id:
        kind = "workflows" if isinstance(target, StorageDriverWorkflowInfo) else "activities"
        return f"{namespace}/{kind}/{encode_key_segment(target.id)}/{sha256}"
    return f"{namespace}/unscoped/{sha256}"


def claim_data_for(key: str, sha256: str, **extra: str) -> dict[str, str]:
    """The claim data of a stored payload; ``key`` is the full key (prefix included)."""
    return {**extra, "key": key, "hash_algorithm": HASH_ALGORITHM, "hash_value": sha256}


@dataclass(frozen=True)
class CheckedClaim:
    """A claim this store will follow: its full key, the key relative to the root and the expected hash."""

    key: str
    relative_key: str
    sha256: str


def check_claim(claim_data: Mapping[str, str], root: str) -> CheckedClaim | str:
    """Checks untrusted claim data against the layout: ``key`` must be ``root`` followed by a key of this
    layout named after ``hash_value``. Returns the reason otherwise."""
    key = claim_data.get("key")
    for snake, camel in (("hash_algorithm", "hashAlgorithm"), ("hash_value", "hashValue")):
        if snake in claim_data and camel in claim_data and claim_data[snake] != claim_data[camel]:
            return f"the claim's {snake} and {camel} differ"
    hash_algorithm = claim_data.get("hash_algorithm", claim_data.get("hashAlgorithm"))
    hash_value = claim_data.get("hash_value", claim_data.get("hashValue"))
    if not isinstance(key, str) or key == "":
        return "the claim has no key"
    if hash_algorithm != HASH_ALGORITHM:
        return f"unsupported hash algorithm {hash_algorithm!r} (expected {HASH_ALGORITHM})"
    if not isinstance(hash_value, str):
        return "the claim has no hash value"
    if not key.startswith(root):
        return f"key {key[:300]!r} is outside this store's prefix {root!r}"
    relative_key = key[len(root) :]
    match = _RELATIVE_KEY.fullmatch(relative_key)
    if match is None:
        return f"key {key[:300]!r} is not a payload key of this store"
    if match.group("sha256") != hash_value:
        return f"key {key} is not named after the claimed hash {hash_value[:80]!r}"
    return CheckedClaim(key, relative_key, match.group("sha256"))
