"""A StorageDriver over S3 (AWS, or an S3-compatible server such as MinIO), as
src/payload-store/s3-driver.ts keeps it: keys of keys.py's layout under an optional prefix,
``<prefix>/<namespace>/workflows/<workflow id>/<sha256>``, and claims with ``bucket``, ``key``,
``hash_algorithm`` and ``hash_value``.

The S3 calls go through the stock driver's client abstraction (temporalio.contrib.aws.s3driver's
S3StorageDriverClient, aioboto3 by default), but the stock S3StorageDriver itself is not used: it has no
key prefix, files payloads under ``v0/ns/<ns>/wt/<type>/wi/<id>/ri/<run>/...`` (a layout the worker
neither writes nor deletes by workflow id), and follows whatever bucket and key a claim from history
names. A stock driver does read what this one writes (the claim fields are the same).

Claims are untrusted: only this bucket, only keys of the layout under the prefix, and the bytes must
hash to the claimed value. Credentials come from the AWS default chain (environment, profile, role).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Sequence

from temporalio.api.common.v1 import Payload
from temporalio.contrib.aws.s3driver import S3StorageDriverClient
from temporalio.converter import StorageDriver, StorageDriverClaim, StorageDriverRetrieveContext, StorageDriverStoreContext

from .errors import PayloadClaimRejectedError, PayloadStoreOperationError, StoredPayloadNotFoundError
from .keys import check_claim, claim_data_for, payload_key
from .settings import S3PayloadStore
from .stored_payload import serialize_payload, verified_payload

S3_DRIVER_NAME = "aws.s3driver"
S3_DRIVER_TYPE = "aggregation-connections.s3"
# S3-compatible servers (MinIO) accept any region; AWS itself needs the bucket's.
_DEFAULT_REGION_WITH_ENDPOINT = "us-east-1"
_NOT_FOUND_CODES = ("NoSuchKey", "404", "NotFound")


class S3StorageDriver(StorageDriver):
    """Reads and writes the worker's S3 payload store (PAYLOAD_STORE=s3, PAYLOAD_STORE_S3_*).

    ``client``: an S3StorageDriverClient to use; by default one over aioboto3 is opened on first use
    from the settings' endpoint, region and path style (``await driver.close()`` closes it).
    """

    def __init__(self, settings: S3PayloadStore, client: S3StorageDriverClient | None = None, name: str = S3_DRIVER_NAME) -> None:
        self.settings = settings
        self.bucket = settings.bucket
        #: The prefix as keys start with it: "prefix/" or "".
        self.root = f"{settings.prefix}/" if settings.prefix else ""
        endpoint = f" at {settings.endpoint}" if settings.endpoint and client is None else ""
        self.location = f"s3://{self.bucket}/{self.root}{endpoint}"
        self._name = name
        self._client = client
        self._exit_stack: contextlib.AsyncExitStack | None = None
        self._opening = asyncio.Lock()

    def name(self) -> str:
        return self._name

    def type(self) -> str:
        return S3_DRIVER_TYPE

    async def store(self, context: StorageDriverStoreContext, payloads: Sequence[Payload]) -> list[StorageDriverClaim]:
        client = await self._s3()

        async def upload(payload: Payload) -> StorageDriverClaim:
            data, sha256 = serialize_payload(payload)
            key = self.root + payload_key(context.target, sha256)
            try:
                await client.put_object(bucket=self.bucket, key=key, data=data)
            except Exception as error:
                raise PayloadStoreOperationError(self._name, self.location, "store", key, error) from error
            return StorageDriverClaim(claim_data_for(key, sha256, bucket=self.bucket))

        return list(await asyncio.gather(*(upload(payload) for payload in payloads)))

    async def retrieve(self, context: StorageDriverRetrieveContext, claims: Sequence[StorageDriverClaim]) -> list[Payload]:
        client = await self._s3()

        async def download(claim: StorageDriverClaim) -> Payload:
            bucket = claim.claim_data.get("bucket")
            if bucket is not None and bucket != self.bucket:
                raise PayloadClaimRejectedError(self._name, self.location, f"the claim names bucket {bucket[:100]!r}, not {self.bucket}", claim.claim_data)
            checked = check_claim(claim.claim_data, self.root)
            if isinstance(checked, str):
                raise PayloadClaimRejectedError(self._name, self.location, checked, claim.claim_data)
            try:
                data = await client.get_object(bucket=self.bucket, key=checked.key)
            except Exception as error:
                if _error_code(error) in _NOT_FOUND_CODES:
                    raise StoredPayloadNotFoundError(self._name, self.location, checked.key) from error
                raise PayloadStoreOperationError(self._name, self.location, "retrieve", checked.key, error) from error
            return verified_payload(data, checked, self._name, self.location)

        return list(await asyncio.gather(*(download(claim) for claim in claims)))

    async def close(self) -> None:
        """Closes the aioboto3 client this driver opened (a client given to it is the caller's)."""
        if self._exit_stack is not None:
            stack, self._exit_stack, self._client = self._exit_stack, None, None
            await stack.aclose()

    async def _s3(self) -> S3StorageDriverClient:
        async with self._opening:
            client = self._client
            if client is None:
                self._exit_stack = contextlib.AsyncExitStack()
                client = self._client = await self._exit_stack.enter_async_context(_aioboto3_client(self.settings))
            return client


@contextlib.asynccontextmanager
async def _aioboto3_client(settings: S3PayloadStore) -> AsyncIterator[S3StorageDriverClient]:
    # Imported here: only a process that uses S3 pays for loading botocore.
    import aioboto3
    from aiobotocore.config import AioConfig
    from temporalio.contrib.aws.s3driver.aioboto3 import new_aioboto3_client

    region = settings.region or (_DEFAULT_REGION_WITH_ENDPOINT if settings.endpoint else None)
    config = AioConfig(s3={"addressing_style": "path" if settings.force_path_style else "auto"})
    async with aioboto3.Session().client("s3", endpoint_url=settings.endpoint, region_name=region, config=config) as s3:
        yield new_aioboto3_client(s3)


def _error_code(error: BaseException) -> str | None:
    response = getattr(error, "response", None)
    if isinstance(response, dict):
        code = response.get("Error", {}).get("Code")
        return str(code) if code is not None else None
    return None
