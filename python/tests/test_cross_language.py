"""Byte compatibility both ways: payloads the TypeScript codec wrote, read here, and payloads this codec
writes, read by the TypeScript codec (scripts/payload-vectors.ts) in the same run: the committed
fixtures of test/fixtures/payload-vectors/ and live files, for configured keys, vault-transit and aws-kms; and
payloads kept in the payload store (the local directory, and S3 on a real MinIO), references and objects."""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from pathlib import Path

import aioboto3
import pytest
from temporalio.contrib.aws.s3driver import S3StorageDriver as StockS3StorageDriver
from temporalio.contrib.aws.s3driver.aioboto3 import new_aioboto3_client

from aggregation_connections.payload_store import S3StorageDriver, payload_store_driver_for, payload_store_from_env
from aggregation_connections.settings import codec_from_env

from .conftest import run_typescript
from .minio import REGION, Minio, create_bucket
from .moto import Moto
from .openbao import REPO, OpenBao, worker_policy
from .payload_vectors import materialize, read, read_stored, write, write_stored

FIXTURES = REPO / "test/fixtures/payload-vectors"
FIXTURE_KEY = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="
ELSEWHERE = {"TEMPORAL_ADDRESS": "temporal.bank.internal:7233"}
STATIC = {**ELSEWHERE, "PAYLOAD_ENCRYPTION_KEY": FIXTURE_KEY, "PAYLOAD_ENCRYPTION_KEY_ID": "vectors-static"}


async def python_reads(file: Path, env: Mapping[str, str]) -> None:
    codec = codec_from_env(env)
    assert codec is not None
    assert await read(codec, str(file)) == 0


async def python_writes(file: Path, env: Mapping[str, str]) -> None:
    codec = codec_from_env(env)
    assert codec is not None
    assert await write(codec, str(file)) == 0


def typescript(command: str, file: Path, env: Mapping[str, str]) -> str:
    result = run_typescript(["scripts/payload-vectors.ts", command, str(file)], dict(env))
    assert result.returncode == 0, f"TypeScript could not {command} {file}:\n{result.stdout}\n{result.stderr}"
    return result.stdout


async def both_ways(tmp_path: Path, python_env: Mapping[str, str], typescript_env: Mapping[str, str]) -> None:
    await python_writes(tmp_path / "python.json", python_env)
    assert typescript("read", tmp_path / "python.json", typescript_env).count("written by python") == 5
    typescript("write", tmp_path / "typescript.json", typescript_env)
    await python_reads(tmp_path / "typescript.json", python_env)


async def test_reads_the_committed_typescript_fixture_with_its_key_kept_after_a_rotation() -> None:
    rotated = {
        **ELSEWHERE,
        "PAYLOAD_ENCRYPTION_KEY": "A" * 43 + "=",
        "PAYLOAD_ENCRYPTION_KEY_ID": "after-rotation",
        "PAYLOAD_DECRYPTION_KEYS": f"vectors-static:{FIXTURE_KEY}",
    }
    await python_reads(FIXTURES / "typescript-static.json", rotated)


async def test_the_committed_python_fixture_is_what_this_codec_reads() -> None:
    await python_reads(FIXTURES / "python-static.json", STATIC)


async def test_configured_keys_both_ways_in_one_run(tmp_path: Path) -> None:
    await both_ways(tmp_path, STATIC, STATIC)


async def test_vault_transit_with_a_token_both_ways(tmp_path: Path, openbao: OpenBao) -> None:
    token = openbao.token("pytest-worker", worker_policy(openbao.transit_key))
    env = {**ELSEWHERE, "PAYLOAD_KEY_PROVIDER": "vault-transit", "PAYLOAD_VAULT_ADDR": openbao.address, "PAYLOAD_VAULT_TOKEN": token}
    await both_ways(tmp_path, env, env)
    assert '"ZW52ZWxvcGUtdjE="' in (tmp_path / "python.json").read_text()  # encryption-format: envelope-v1


async def test_vault_transit_over_tls_with_approle_both_ways(tmp_path: Path, openbao_tls: OpenBao) -> None:
    assert openbao_tls.ca_file is not None
    role_id, secret_id = openbao_tls.app_role("pytest-pipeline", worker_policy(openbao_tls.transit_key))
    env = {
        **ELSEWHERE,
        "PAYLOAD_KEY_PROVIDER": "vault-transit",
        "PAYLOAD_VAULT_ADDR": openbao_tls.address,
        "PAYLOAD_VAULT_ROLE_ID": role_id,
        "PAYLOAD_VAULT_SECRET_ID": secret_id,
        "PAYLOAD_VAULT_CA_FILE": openbao_tls.ca_file,
    }
    await both_ways(tmp_path, env, env)


async def test_aws_kms_both_ways(tmp_path: Path, moto: Moto, monkeypatch: pytest.MonkeyPatch) -> None:
    env = {**ELSEWHERE, **moto.variables()}
    # boto3 takes its credentials from the process's environment (the TypeScript side gets them in env).
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", env["AWS_ACCESS_KEY_ID"])
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", env["AWS_SECRET_ACCESS_KEY"])
    await both_ways(tmp_path, env, env)
    # Each side names the key ARN KMS answered, configured by ARN here and by key id there.
    by_key_id = {**env, "PAYLOAD_AWS_KMS_KEY_ID": moto.key_uuid}
    typescript("write", tmp_path / "by-key-id.json", by_key_id)
    await python_reads(tmp_path / "by-key-id.json", env)
    named = base64.b64encode(f"aws-kms:{moto.key_arn}".encode()).decode()
    for file in ("by-key-id.json", "python.json", "typescript.json"):
        written = json.loads((tmp_path / file).read_text())
        assert {vector["encoded"]["metadata"]["encryption-key-id"] for vector in written["payloads"]} == {named}, file


async def test_typescript_refuses_a_python_payload_under_a_key_it_lacks(tmp_path: Path) -> None:
    await python_writes(tmp_path / "python.json", STATIC)
    other = {**ELSEWHERE, "PAYLOAD_ENCRYPTION_KEY": "A" * 43 + "=", "PAYLOAD_ENCRYPTION_KEY_ID": "other"}
    result = run_typescript(["scripts/payload-vectors.ts", "read", str(tmp_path / "python.json")], other)
    assert result.returncode != 0
    assert 'payload encrypted with key id "vectors-static", which is not configured here' in result.stderr


@pytest.mark.parametrize("fixture", ["typescript-static.json", "python-static.json"])
def test_typescript_reads_both_committed_fixtures(fixture: str) -> None:
    assert typescript("read", FIXTURES / fixture, STATIC).count("read ") == 5


# --- payloads kept in the payload store ------------------------------------------------------------


def stored_env(directory: Path) -> dict[str, str]:
    return {**STATIC, "PAYLOAD_STORE": "local", "PAYLOAD_STORE_DIRECTORY": str(directory)}


async def python_reads_stored(file: Path, env: Mapping[str, str]) -> None:
    codec = codec_from_env(env)
    driver = payload_store_driver_for(payload_store_from_env(env))
    assert codec is not None and driver is not None
    try:
        assert await read_stored(codec, driver, str(file)) == 0
    finally:
        if isinstance(driver, S3StorageDriver):
            await driver.close()


@pytest.mark.parametrize("fixture", ["typescript-stored.json", "typescript-stored-camelcase-claims.json"])
async def test_reads_the_committed_typescript_stored_fixtures(fixture: str, tmp_path: Path) -> None:
    """The worker's references and objects as it writes them now, and as it wrote them before the claims
    took the stock drivers' spelling (hashAlgorithm, hashValue)."""
    materialize(FIXTURES / fixture, tmp_path / "store")
    await python_reads_stored(FIXTURES / fixture, stored_env(tmp_path / "store"))


async def test_stored_payloads_both_ways_through_the_local_directory(tmp_path: Path) -> None:
    env = stored_env(tmp_path / "store")
    codec = codec_from_env(env)
    driver = payload_store_driver_for(payload_store_from_env(env))
    assert codec is not None and driver is not None
    assert await write_stored(codec, driver, str(tmp_path / "python.json")) == 0
    out = typescript("read-stored", tmp_path / "python.json", env)
    assert out.count("written by python") == 3 and "claim hash_algorithm hash_value key" in out, out
    typescript("write-stored", tmp_path / "typescript.json", env)
    await python_reads_stored(tmp_path / "typescript.json", env)
    # Both sides filed them under the same workflow directory, named the same way.
    assert {path.parent.name for path in (tmp_path / "store").rglob("*") if path.is_file()} == {"vectors%2Fstored%20%C3%BC"}


async def test_stored_payloads_both_ways_through_s3(tmp_path: Path, minio: Minio) -> None:
    """On a real MinIO, with a prefix: each side reads the other's, and the stock driver reads TypeScript's."""
    await create_bucket(minio, "cross-language")
    env = {**STATIC, **minio.store_env(bucket="cross-language", prefix="temporal/vectors")}
    codec = codec_from_env(env)
    driver = payload_store_driver_for(payload_store_from_env(env))
    assert codec is not None and isinstance(driver, S3StorageDriver)
    try:
        assert await write_stored(codec, driver, str(tmp_path / "python.json")) == 0
    finally:
        await driver.close()
    assert typescript("read-stored", tmp_path / "python.json", env).count("written by python") == 3
    typescript("write-stored", tmp_path / "typescript.json", env)
    await python_reads_stored(tmp_path / "typescript.json", env)

    # The stock driver of temporalio.contrib.aws.s3driver, as a Python team would configure it, reads what the worker stored.
    async with aioboto3.Session().client("s3", endpoint_url=minio.endpoint, region_name=REGION) as client:
        stock = StockS3StorageDriver(new_aioboto3_client(client), bucket="cross-language")
        assert await read_stored(codec, stock, str(tmp_path / "typescript.json")) == 0
