"""Byte compatibility both ways: payloads the TypeScript codec wrote, read here, and payloads this codec
writes, read by the TypeScript codec (scripts/payload-vectors.ts) in the same run: the committed
fixtures of test/fixtures/payload-vectors/ and live files, for configured keys, vault-transit and aws-kms."""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from pathlib import Path

import pytest

from aggregation_connections.settings import codec_from_env

from .conftest import run_typescript
from .moto import Moto
from .openbao import REPO, OpenBao, worker_policy
from .payload_vectors import read, write

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
    rotated = {**ELSEWHERE, "PAYLOAD_ENCRYPTION_KEY": "A" * 43 + "=", "PAYLOAD_ENCRYPTION_KEY_ID": "after-rotation", "PAYLOAD_DECRYPTION_KEYS": f"vectors-static:{FIXTURE_KEY}"}
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
