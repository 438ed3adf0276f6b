"""The generated key of a stack on this machine (src/codec/local-key.ts): one line
``<key id>:<base64 of 32 bytes>`` in a file of mode 0600, created once by whichever process comes
first, TypeScript or Python, and then read by all of them."""

from __future__ import annotations

import base64
import binascii
import os
import re
import secrets
from dataclasses import dataclass, field
from pathlib import Path

KEY_BYTES = 32
_LINE = re.compile(r"([A-Za-z0-9._-]{1,64}):([A-Za-z0-9+/]+={0,2})\s*")


class LocalKeyFileError(Exception):
    def __init__(self, path: str, problem: str) -> None:
        super().__init__(f"payload key file {path}: {problem}")
        self.path = path


@dataclass(frozen=True)
class LocalKey:
    key_id: str
    key: bytes = field(repr=False)


def read_or_create_local_key(path: str) -> LocalKey:
    """Reads the key file, creating it first if it does not exist (the first process to write it wins)."""
    draft = f"{path}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
    try:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        key_id = f"local-{secrets.token_hex(4)}"
        fd = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as out:
            out.write(f"{key_id}:{base64.b64encode(secrets.token_bytes(KEY_BYTES)).decode()}\n")
        # A hard link appears whole and fails if the file exists: processes starting at once agree on the first one's key.
        os.link(draft, path)
    except FileExistsError:
        pass
    except OSError as error:
        raise LocalKeyFileError(path, f"cannot be created: {error}") from error
    finally:
        Path(draft).unlink(missing_ok=True)
    try:
        text = Path(path).read_text("utf-8")
    except OSError as error:
        raise LocalKeyFileError(path, f"cannot be read: {error}") from error
    return _parse_local_key(path, text)


def _parse_local_key(path: str, text: str) -> LocalKey:
    match = _LINE.fullmatch(text)
    key = None
    if match:
        try:
            key = base64.b64decode(match.group(2), validate=True)
        except binascii.Error:
            key = None
    if match is None or key is None or len(key) != KEY_BYTES:
        raise LocalKeyFileError(
            path,
            f'must hold one line "<key id>:<base64 of {KEY_BYTES} bytes>"; delete it to have a new key made '
            "(payloads encrypted with the old one become unreadable)",
        )
    return LocalKey(match.group(1), key)
