"""A StorageDriver over a local directory, as src/payload-store/local-directory-driver.ts keeps it: the
dev stack's and the demo's store (one machine). Files follow keys.py's layout under ``directory``.

- Writes are atomic: a temp file beside the final name, fsynced, then renamed over it.
- Claims are untrusted (they come from history): only keys of the layout are followed, the resolved
  path must stay inside ``directory``, and the bytes must hash to the claimed value.
- Files and directories are private to the user (0600/0700): with encryption off they hold plaintext.
"""

from __future__ import annotations

import asyncio
import os
import secrets
from collections.abc import Sequence
from pathlib import Path

from temporalio.api.common.v1 import Payload
from temporalio.converter import StorageDriver, StorageDriverClaim, StorageDriverRetrieveContext, StorageDriverStoreContext

from .errors import PayloadClaimRejectedError, PayloadStoreOperationError, StoredPayloadNotFoundError
from .keys import check_claim, claim_data_for, payload_key
from .stored_payload import serialize_payload, verified_payload

LOCAL_DIRECTORY_DRIVER_NAME = "local-directory"
LOCAL_DIRECTORY_DRIVER_TYPE = "aggregation-connections.local-directory"


class LocalDirectoryStorageDriver(StorageDriver):
    """Reads and writes the worker's local payload store (PAYLOAD_STORE=local, PAYLOAD_STORE_DIRECTORY)."""

    def __init__(self, directory: str | os.PathLike[str], name: str = LOCAL_DIRECTORY_DRIVER_NAME) -> None:
        if str(directory).strip() == "":
            raise ValueError("LocalDirectoryStorageDriver: the directory must not be empty")
        #: Absolute; relative paths resolve against the working directory, as the worker's do.
        self.directory = Path(directory).resolve()
        self._name = name

    @property
    def location(self) -> str:
        return str(self.directory)

    def name(self) -> str:
        return self._name

    def type(self) -> str:
        return LOCAL_DIRECTORY_DRIVER_TYPE

    async def store(self, context: StorageDriverStoreContext, payloads: Sequence[Payload]) -> list[StorageDriverClaim]:
        claims: list[StorageDriverClaim] = []
        for payload in payloads:
            data, sha256 = serialize_payload(payload)
            key = payload_key(context.target, sha256)
            await asyncio.to_thread(self._write, key, data)
            claims.append(StorageDriverClaim(claim_data_for(key, sha256)))
        return claims

    async def retrieve(self, context: StorageDriverRetrieveContext, claims: Sequence[StorageDriverClaim]) -> list[Payload]:
        return [await asyncio.to_thread(self._read, claim) for claim in claims]

    def _write(self, key: str, data: bytes) -> None:
        path = self.directory / key
        # Written even when the file exists: the same name holds the same bytes, and rewriting heals a damaged copy.
        temp = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
        try:
            path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            descriptor = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(descriptor, "wb") as file:
                file.write(data)
                file.flush()
                os.fsync(file.fileno())
            os.replace(temp, path)
        except OSError as error:
            temp.unlink(missing_ok=True)
            raise PayloadStoreOperationError(self._name, self.location, "store", key, error) from error

    def _read(self, claim: StorageDriverClaim) -> Payload:
        checked = check_claim(claim.claim_data, "")
        if isinstance(checked, str):
            raise PayloadClaimRejectedError(self._name, self.location, checked, claim.claim_data)
        path = (self.directory / checked.relative_key).resolve()
        # The layout check already excludes "..", "/" and hidden names; this is the second line of defence.
        if not path.is_relative_to(self.directory) or path == self.directory:
            raise PayloadClaimRejectedError(self._name, self.location, f"key {checked.key} resolves outside the directory", claim.claim_data)
        try:
            data = path.read_bytes()
        except FileNotFoundError as error:
            raise StoredPayloadNotFoundError(self._name, self.location, checked.key) from error
        except OSError as error:
            raise PayloadStoreOperationError(self._name, self.location, "retrieve", checked.key, error) from error
        return verified_payload(data, checked, self._name, self.location)
