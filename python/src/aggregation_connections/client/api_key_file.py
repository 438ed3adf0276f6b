"""The Temporal token renewed from TEMPORAL_API_KEY_FILE while a client is open, as
src/temporal/api-key-file.ts renews the TypeScript client's: an asyncio task re-reads the file every
``recheck_ms`` and sets a changed token on the live client (temporalio's ``Client.api_key`` setter, which
updates the connection the client's calls go through), so a pipeline keeps calling past its first token's
expiry without reconnecting. A file that becomes unreadable, empty or malformed keeps the last token:
said once on the ``logging`` logger of this module (``aggregation_connections.client.api_key_file``), and
once more when it recovers. The token is never logged."""

from __future__ import annotations

import asyncio
import logging
import weakref
from collections.abc import Sequence
from typing import Protocol

from ..settings.api_key_file import ApiKeyFileSettings, TemporalApiKeyFileError, read_api_key_file

logger = logging.getLogger(__name__)


class ApiKeyHolder(Protocol):
    """A live client whose token can change: temporalio's ``Client`` is one (its ``api_key`` property has a setter)."""

    api_key: str | None


class ApiKeyFileWatch:
    """Re-reads the token file every ``recheck_ms`` on the running event loop and gives a changed token to
    every holder (held weakly: a client dropped without ``close`` ends the watch). A check never overlaps
    another. A read that fails keeps the last token: its problem is logged once (not again until the file
    has recovered), and the recovery too."""

    def __init__(self, settings: ApiKeyFileSettings, current: str, holders: Sequence[ApiKeyHolder], log: logging.Logger = logger) -> None:
        self.path = settings.path
        self.recheck_ms = settings.recheck_ms
        self._token = current
        self._holders = [weakref.ref(holder) for holder in holders]
        self._log = log
        self._failing: str | None = None
        self._stopped = False
        self._lock = asyncio.Lock()
        self._meta = {"temporal_api_key_file": str(self.path)}
        self._task = asyncio.get_running_loop().create_task(self._run(), name=f"TEMPORAL_API_KEY_FILE {self.path}")

    @property
    def running(self) -> bool:
        """Whether the file is still re-read (false once stopped, or once its client is gone)."""
        return not self._task.done()

    async def check(self) -> None:
        """Reads the file once now and applies a changed token (what the task does every ``recheck_ms``)."""
        async with self._lock:
            await self._check_once()

    async def stop(self) -> None:
        """Stops re-reading; a check under way is cancelled (a token it had not set yet stays unset)."""
        self._stopped = True
        self._task.cancel()
        try:
            await self._task
        except asyncio.CancelledError:
            # Ours; a stop() that is itself cancelled passes its own cancellation on.
            current = asyncio.current_task()
            if current is not None and current.cancelling():
                raise

    async def _run(self) -> None:
        while not self._stopped:
            await asyncio.sleep(self.recheck_ms / 1000)
            if not any(holder() is not None for holder in self._holders):
                return
            try:
                await self.check()
            except Exception as error:  # a check's own failure never ends the renewal
                self._log.warning("TEMPORAL_API_KEY_FILE: checking %s failed: %s", self.path, self._redacted(str(error)), extra=self._meta)

    async def _check_once(self) -> None:
        try:
            token = await asyncio.to_thread(read_api_key_file, self.path)
        except TemporalApiKeyFileError as error:
            if self._failing is None:
                self._log.warning("TEMPORAL_API_KEY_FILE: %s; keeping the last token until the file holds one again", error.reason, extra=self._meta)
            self._failing = error.reason
            return
        if self._failing is not None:
            self._failing = None
            unchanged = " (unchanged)" if token == self._token else ""
            self._log.info("TEMPORAL_API_KEY_FILE: %s holds a token again%s", self.path, unchanged, extra=self._meta)
        if token == self._token or self._stopped:
            return
        if self._apply(token):
            self._token = token
            self._log.info("TEMPORAL_API_KEY_FILE: renewed the Temporal token from %s", self.path, extra=self._meta)

    def _apply(self, token: str) -> bool:
        """Sets the token on every live holder; False (said, without the token) when one refused it."""
        refused: Exception | None = None
        for reference in self._holders:
            holder = reference()
            if holder is None:
                continue
            try:
                holder.api_key = token
            except Exception as error:
                refused = refused or error
        if refused is None:
            return True
        said = self._redacted(str(refused), token)
        self._log.warning(
            "TEMPORAL_API_KEY_FILE: the connections did not take the renewed token from %s (%s); trying again at the next check",
            self.path,
            said,
            extra=self._meta,
        )
        return False

    def _redacted(self, text: str, *tokens: str) -> str:
        """An error's words with any token in them replaced (the SDK's are not known to echo one; this makes sure)."""
        for token in (self._token, *tokens):
            text = text.replace(token, "<token>")
        return text


def watch_api_key_file(settings: ApiKeyFileSettings, current: str, holders: Sequence[ApiKeyHolder], log: logging.Logger = logger) -> ApiKeyFileWatch:
    """Keeps ``holders`` (live clients) on the token in ``settings.path``, starting from ``current``, the
    token they were opened with: a task on the running loop until ``stop()``."""
    return ApiKeyFileWatch(settings, current, holders, log)


__all__ = ["ApiKeyFileWatch", "ApiKeyHolder", "watch_api_key_file"]
