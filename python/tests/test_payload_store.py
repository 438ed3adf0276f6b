"""The payload store's drivers in Python: the worker's layout and claims, untrusted claims refused, the
settings parsed as the worker parses them, and S3 against a real MinIO, where Temporal's stock S3 driver
(temporalio.contrib.aws.s3driver) reads what this driver stores."""

from __future__ import annotations

from pathlib import Path

import aioboto3
import pytest
from temporalio.api.common.v1 import Payload
from temporalio.contrib.aws.s3driver import S3StorageDriver as StockS3StorageDriver
from temporalio.contrib.aws.s3driver.aioboto3 import new_aioboto3_client
from temporalio.converter import (
    StorageDriverActivityInfo,
    StorageDriverClaim,
    StorageDriverRetrieveContext,
    StorageDriverStoreContext,
    StorageDriverWorkflowInfo,
)

from aggregation_connections.payload_store import (
    LocalDirectoryStorageDriver,
    LocalPayloadStore,
    PayloadClaimRejectedError,
    PayloadStoreOff,
    S3PayloadStore,
    S3StorageDriver,
    StoredPayloadIntegrityError,
    StoredPayloadNotFoundError,
    encode_key_segment,
    external_storage_for,
    payload_key,
    payload_store_from_env,
)
from aggregation_connections.settings import ConfigError

from .minio import REGION, Minio, create_bucket

HASH = "c" * 64


def workflow(workflow_id: str) -> StorageDriverStoreContext:
    return StorageDriverStoreContext(target=StorageDriverWorkflowInfo(namespace="default", id=workflow_id, type="connectionWorkflow"))


def payload(text: str) -> Payload:
    return Payload(metadata={"encoding": b"json/plain"}, data=text.encode())


# --- layout and settings ---------------------------------------------------------------------------


def test_keys_are_the_workers_layout() -> None:
    # The same strings as test/payload-store/object-keys.test.ts expects of the TypeScript side.
    assert encode_key_segment("login/1 ü") == "login%2F1%20%C3%BC"
    assert encode_key_segment(".hidden") == "%2Ehidden"
    long = encode_key_segment("x" * 200)
    assert len(long) == 80 + 1 + 32 and long.startswith("x" * 80 + "~")
    assert payload_key(StorageDriverWorkflowInfo(namespace="default", id="w/1"), HASH) == f"default/workflows/w%2F1/{HASH}"
    assert payload_key(StorageDriverActivityInfo(namespace="default", id="a"), HASH) == f"default/activities/a/{HASH}"
    assert payload_key(None, HASH) == f"~/unscoped/{HASH}"


def test_settings_are_parsed_as_the_worker_parses_them() -> None:
    assert payload_store_from_env({"TEMPORAL_ADDRESS": "localhost:7233"}) == LocalPayloadStore(".temporal/payloads", 131072)
    assert payload_store_from_env({"TEMPORAL_ADDRESS": "temporal.bank.internal:7233"}) == PayloadStoreOff()
    assert payload_store_from_env(
        {"PAYLOAD_STORE": "local", "PAYLOAD_STORE_DIRECTORY": "/var/payloads", "PAYLOAD_STORE_THRESHOLD_BYTES": "4096"}
    ) == LocalPayloadStore("/var/payloads", 4096)
    s3 = payload_store_from_env(
        {
            "PAYLOAD_STORE": "s3",
            "PAYLOAD_STORE_S3_BUCKET": "lender-payloads",
            "PAYLOAD_STORE_S3_PREFIX": "/temporal/prod/",
            "PAYLOAD_STORE_S3_ENDPOINT": "http://127.0.0.1:9000",
            "PAYLOAD_STORE_S3_FORCE_PATH_STYLE": "1",
        }
    )
    assert s3 == S3PayloadStore("lender-payloads", "temporal/prod", "http://127.0.0.1:9000", None, True, 131072)
    assert payload_store_from_env({"PAYLOAD_STORE": "", "TEMPORAL_ADDRESS": "127.0.0.1:7233"}).kind == "local"  # empty counts as unset


def test_a_bad_setting_is_a_config_error_naming_its_variable() -> None:
    with pytest.raises(ConfigError) as error:
        payload_store_from_env(
            {
                "PAYLOAD_STORE": "s3",
                "PAYLOAD_STORE_S3_BUCKET": "Not_A_Bucket",
                "PAYLOAD_STORE_S3_PREFIX": "a/../b",
                "PAYLOAD_STORE_S3_ENDPOINT": "s3.example.com",
                "PAYLOAD_STORE_S3_FORCE_PATH_STYLE": "yes",
                "PAYLOAD_STORE_THRESHOLD_BYTES": "300000",
            }
        )
    named = [problem.split(":", 1)[0] for problem in error.value.problems]
    assert named == [
        "PAYLOAD_STORE_THRESHOLD_BYTES",
        "PAYLOAD_STORE_S3_FORCE_PATH_STYLE",
        "PAYLOAD_STORE_S3_ENDPOINT",
        "PAYLOAD_STORE_S3_BUCKET",
        "PAYLOAD_STORE_S3_PREFIX",
    ], error.value.problems
    with pytest.raises(ConfigError, match="PAYLOAD_STORE_S3_BUCKET: is required with PAYLOAD_STORE=s3"):
        payload_store_from_env({"PAYLOAD_STORE": "s3"})
    with pytest.raises(ConfigError, match="PAYLOAD_STORE: must be one of 'auto', 'local', 's3', 'off', got 'disk'"):
        payload_store_from_env({"PAYLOAD_STORE": "disk"})
    with pytest.raises(ConfigError, match="PAYLOAD_STORE_THRESHOLD_BYTES: must be a whole number"):
        payload_store_from_env({"PAYLOAD_STORE_THRESHOLD_BYTES": "1.5"})


def test_external_storage_takes_the_settings_threshold() -> None:
    storage = external_storage_for(LocalPayloadStore("/tmp/x", 2048))
    assert storage is not None and storage.payload_size_threshold == 2048
    assert external_storage_for(PayloadStoreOff()) is None


# --- the local directory ---------------------------------------------------------------------------


async def test_the_local_driver_stores_privately_and_reads_back(tmp_path: Path) -> None:
    driver = LocalDirectoryStorageDriver(tmp_path / "store")
    first, second = payload('{"a":1}'), payload('{"b":2}')
    claims = await driver.store(workflow("login/1"), [first, second])
    for claim in claims:
        assert sorted(claim.claim_data) == ["hash_algorithm", "hash_value", "key"]
        assert claim.claim_data["key"] == f"default/workflows/login%2F1/{claim.claim_data['hash_value']}"
        path = tmp_path / "store" / claim.claim_data["key"]
        assert path.stat().st_mode & 0o777 == 0o600 and path.parent.stat().st_mode & 0o777 == 0o700
    assert await driver.retrieve(StorageDriverRetrieveContext(), claims) == [first, second]
    # A claim written before the stock spelling reads too.
    [claim] = claims[:1]
    old = {"key": claim.claim_data["key"], "hashAlgorithm": "sha256", "hashValue": claim.claim_data["hash_value"]}
    assert await driver.retrieve(StorageDriverRetrieveContext(), [StorageDriverClaim(old)]) == [first]


async def test_the_local_driver_refuses_tampered_claims_missing_and_corrupt_payloads(tmp_path: Path) -> None:
    driver = LocalDirectoryStorageDriver(tmp_path / "store")
    [claim] = await driver.store(workflow("w"), [payload('"secret"')])
    key, sha = claim.claim_data["key"], claim.claim_data["hash_value"]
    zeros = "0" * 64
    for tampered in (
        {**claim.claim_data, "key": "../../../../etc/passwd"},
        {**claim.claim_data, "key": f"default/workflows/../../../{sha}"},
        {**claim.claim_data, "key": f"elsewhere/{key}"},
        {**claim.claim_data, "hash_value": zeros},
        {**claim.claim_data, "hash_algorithm": "md5"},
        {**claim.claim_data, "hashValue": zeros},
        {"hash_algorithm": "sha256", "hash_value": sha},
    ):
        with pytest.raises(PayloadClaimRejectedError) as rejected:
            await driver.retrieve(StorageDriverRetrieveContext(), [StorageDriverClaim(tampered)])
        assert str(driver.directory) in str(rejected.value)
    missing = StorageDriverClaim({"key": f"default/workflows/w/{'a' * 64}", "hash_algorithm": "sha256", "hash_value": "a" * 64})
    with pytest.raises(StoredPayloadNotFoundError, match="not found in"):
        await driver.retrieve(StorageDriverRetrieveContext(), [missing])
    path = driver.directory / key
    path.write_bytes(path.read_bytes().replace(b"secret", b"SECRET"))
    with pytest.raises(StoredPayloadIntegrityError) as corrupt:
        await driver.retrieve(StorageDriverRetrieveContext(), [claim])
    assert corrupt.value.expected_sha256 == sha


# --- S3 on a real MinIO ----------------------------------------------------------------------------


@pytest.fixture
async def s3(minio: Minio) -> aioboto3.Session:
    await create_bucket(minio, minio.bucket)
    return aioboto3.Session()


def s3_settings(minio: Minio, prefix: str | None = None) -> S3PayloadStore:
    settings = payload_store_from_env({**minio.store_env(prefix=prefix), "TEMPORAL_ADDRESS": "temporal.bank.internal:7233"})
    assert isinstance(settings, S3PayloadStore)
    return settings


async def test_the_s3_driver_stores_under_the_prefix_and_reads_back(minio: Minio, s3: aioboto3.Session) -> None:
    driver = S3StorageDriver(s3_settings(minio, "temporal/pytest"))
    try:
        stored = [payload('{"accounts":[1,2,3]}'), payload('"x"')]
        claims = await driver.store(workflow("login-1"), stored)
        for claim in claims:
            assert sorted(claim.claim_data) == ["bucket", "hash_algorithm", "hash_value", "key"]
            assert claim.claim_data["bucket"] == minio.bucket
            assert claim.claim_data["key"] == f"temporal/pytest/default/workflows/login-1/{claim.claim_data['hash_value']}"
        assert await driver.retrieve(StorageDriverRetrieveContext(), claims) == stored
        with pytest.raises(PayloadClaimRejectedError, match="names bucket 'other'"):
            await driver.retrieve(StorageDriverRetrieveContext(), [StorageDriverClaim({**claims[0].claim_data, "bucket": "other"})])
        with pytest.raises(PayloadClaimRejectedError, match="outside this store's prefix"):
            await driver.retrieve(
                StorageDriverRetrieveContext(), [StorageDriverClaim({**claims[0].claim_data, "key": claims[0].claim_data["key"].removeprefix("temporal/")})]
            )
        sha = "b" * 64
        missing = StorageDriverClaim(
            {"bucket": minio.bucket, "key": f"temporal/pytest/default/workflows/gone/{sha}", "hash_algorithm": "sha256", "hash_value": sha}
        )
        with pytest.raises(StoredPayloadNotFoundError, match=f"s3://{minio.bucket}/temporal/pytest/"):
            await driver.retrieve(StorageDriverRetrieveContext(), [missing])
    finally:
        await driver.close()


async def test_temporals_stock_s3_driver_reads_what_this_driver_stores(minio: Minio, s3: aioboto3.Session) -> None:
    """Issue 34, point 4: a stock driver reads our payloads. The claim is what history keeps, unchanged."""
    driver = S3StorageDriver(s3_settings(minio, "temporal/stock"))
    stored = payload('{"products":"large"}')
    try:
        claims = await driver.store(workflow("login-2"), [stored])
    finally:
        await driver.close()
    async with s3.client("s3", endpoint_url=minio.endpoint, region_name=REGION) as client:
        stock = StockS3StorageDriver(new_aioboto3_client(client), bucket=minio.bucket)
        assert stock.name() == driver.name() == "aws.s3driver"  # references name the driver: the stock one is found by ours
        assert await stock.retrieve(StorageDriverRetrieveContext(), claims) == [stored]
        # What the stock driver writes is its own layout, which this driver refuses to follow (see docs/python-pipeline.md).
        [stock_claim] = await stock.store(workflow("login-2"), [stored])
        assert stock_claim.claim_data["key"].startswith("v0/ns/default/wt/connectionWorkflow/wi/login-2/ri/null/d/sha256/")
    ours = S3StorageDriver(s3_settings(minio))
    try:
        with pytest.raises(PayloadClaimRejectedError, match="is not a payload key of this store"):
            await ours.retrieve(StorageDriverRetrieveContext(), [stock_claim])
    finally:
        await ours.close()
