"""TEMPORAL_API_KEY_FILE, as src/temporal/api-key-file.ts reads it: the Temporal token in a file that a
sidecar renews (a Kubernetes projected service-account token, a Vault agent template), read at start and
again every TEMPORAL_API_KEY_FILE_RECHECK_MS by the client's renewal (client/api_key_file.py). What the
file holds is one token: printable ASCII without spaces, surrounding whitespace and a final newline
dropped. Every message names the path and never the content."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ..contract.names import TEMPORAL_API_KEY_FILE_RECHECK_MS_MIN
from .temporal_env_config import cannot_read

#: What a token may hold: printable ASCII without spaces (an HTTP header's ``Bearer <token>``); a JWT or an API key is.
_TOKEN = re.compile(r"[\x21-\x7e]+")
#: TEMPORAL_API_KEY_FILE_RECHECK_MS's least value, generated from src/settings/temporal.ts.
RECHECK_MS_MIN = TEMPORAL_API_KEY_FILE_RECHECK_MS_MIN


@dataclass(frozen=True)
class ApiKeyFileSettings:
    """TEMPORAL_API_KEY_FILE and how often it is read again (TEMPORAL_API_KEY_FILE_RECHECK_MS, milliseconds)."""

    path: Path
    recheck_ms: int


class TemporalApiKeyFileError(Exception):
    """The token file gives no token: ``reason`` names the path (missing, unreadable, empty, not one token), never the content."""

    def __init__(self, path: Path | str, reason: str) -> None:
        super().__init__(f"TEMPORAL_API_KEY_FILE: {reason}")
        self.path = str(path)
        self.reason = reason


def read_api_key_file(path: Path | str) -> str:
    """The file's token; TemporalApiKeyFileError naming the path when it holds none."""
    try:
        # Bytes that are not UTF-8 become U+FFFD, which is no token character: refused as the TypeScript side refuses them.
        content = Path(path).read_bytes().decode("utf-8", errors="replace")
    except OSError as error:
        raise TemporalApiKeyFileError(path, cannot_read(str(path), error)) from error
    token = content.strip()
    if token == "":
        raise TemporalApiKeyFileError(path, f"{path} is empty")
    if not _TOKEN.fullmatch(token):
        raise TemporalApiKeyFileError(path, f"{path} does not hold one token (it has spaces, line breaks or characters outside printable ASCII inside)")
    return token
