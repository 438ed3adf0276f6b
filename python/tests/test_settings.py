"""The codec's settings read from the worker's variables, parsed as src/settings/ parses them."""

from __future__ import annotations

import base64
import os
from pathlib import Path

import pytest

from aggregation_connections.codec import AppRoleAuth, EncryptionKeys, TokenAuth, TransitEncryption
from aggregation_connections.settings import ConfigError, encryption_from_env

KEY = base64.b64encode(bytes(range(32))).decode()
OLD = base64.b64encode(bytes(32)).decode()


def test_reads_the_key_its_id_and_earlier_keys() -> None:
    encryption = encryption_from_env({"PAYLOAD_ENCRYPTION_KEY": KEY, "PAYLOAD_ENCRYPTION_KEY_ID": "k2", "PAYLOAD_DECRYPTION_KEYS": f" k1:{OLD} ,"})
    assert encryption == EncryptionKeys("k2", bytes(range(32)), {"k1": bytes(32)})


def test_reads_url_safe_base64_without_padding() -> None:
    text = base64.urlsafe_b64encode(bytes([251] * 32)).decode().rstrip("=")
    encryption = encryption_from_env({"PAYLOAD_ENCRYPTION_KEY": text})
    assert isinstance(encryption, EncryptionKeys) and encryption.key == bytes([251] * 32) and encryption.key_id == "default"


def test_empty_values_count_as_unset_and_off_means_no_codec() -> None:
    assert encryption_from_env({"PAYLOAD_ENCRYPTION": "off", "PAYLOAD_ENCRYPTION_KEY": ""}) is None


def test_names_every_bad_variable_at_once() -> None:
    with pytest.raises(ConfigError) as caught:
        encryption_from_env(
            {
                "PAYLOAD_ENCRYPTION_KEY": base64.b64encode(bytes(16)).decode(),
                "PAYLOAD_ENCRYPTION_KEY_ID": "bad id",
                "PAYLOAD_DECRYPTION_KEYS": "nocolon,k1:!!,k1:" + OLD,
                "PAYLOAD_ENCRYPTION": "sometimes",
            }
        )
    problems = caught.value.problems
    assert "PAYLOAD_ENCRYPTION_KEY: must be base64 of exactly 32 bytes, got 16 bytes (generate one with `openssl rand -base64 32`)" in problems
    assert 'PAYLOAD_ENCRYPTION_KEY_ID: must be 1 to 64 letters, digits, ".", "_" or "-"' in problems
    assert "PAYLOAD_DECRYPTION_KEYS: entry 1 must be <key id>:<base64 key>" in problems
    assert "PAYLOAD_DECRYPTION_KEYS: entry 2 (key id k1): the key must be base64 (generate one with `openssl rand -base64 32`)" in problems
    assert any(problem.startswith("PAYLOAD_ENCRYPTION: must be one of") for problem in problems)


def test_requires_a_key_with_temporal_elsewhere() -> None:
    with pytest.raises(ConfigError, match="PAYLOAD_ENCRYPTION_KEY: is required with Temporal at temporal.bank.internal:7233, not on this machine"):
        encryption_from_env({"TEMPORAL_ADDRESS": "temporal.bank.internal:7233"})


def test_with_temporal_on_this_machine_creates_the_local_key_file_once_and_reads_it(tmp_path: Path) -> None:
    path = tmp_path / "keys" / "payload-encryption.key"
    first = encryption_from_env({"PAYLOAD_ENCRYPTION_KEY_FILE": str(path), "TEMPORAL_ADDRESS": "127.0.0.1:7233"})
    second = encryption_from_env({"PAYLOAD_ENCRYPTION_KEY_FILE": str(path)})
    assert isinstance(first, EncryptionKeys) and first == second
    assert first.key_id.startswith("local-") and len(first.key) == 32
    assert os.stat(path).st_mode & 0o777 == 0o600
    assert path.read_text() == f"{first.key_id}:{base64.b64encode(first.key).decode()}\n"


def test_with_a_kms_neither_makes_nor_reads_the_local_key_unless_listed(tmp_path: Path) -> None:
    path = tmp_path / "payload-encryption.key"
    kms = {
        "PAYLOAD_KEY_PROVIDER": "vault-transit",
        "PAYLOAD_VAULT_ADDR": "http://127.0.0.1:8200",
        "PAYLOAD_VAULT_TOKEN": "s.test",
        "PAYLOAD_ENCRYPTION_KEY_FILE": str(path),
    }
    encryption = encryption_from_env(kms)
    assert isinstance(encryption, TransitEncryption) and encryption.static_keys is None
    assert not path.exists(), "not made"
    listed_key = base64.b64encode(bytes(range(32))).decode()
    listed = encryption_from_env({**kms, "PAYLOAD_DECRYPTION_KEYS": f"local-0000abcd:{listed_key}"})
    assert isinstance(listed, TransitEncryption) and listed.static_keys is not None and listed.static_keys.key_id == "local-0000abcd"


def test_names_a_damaged_local_key_file(tmp_path: Path) -> None:
    path = tmp_path / "payload-encryption.key"
    path.write_text("not a key\n")
    with pytest.raises(ConfigError, match="PAYLOAD_ENCRYPTION_KEY_FILE: payload key file .* must hold one line"):
        encryption_from_env({"PAYLOAD_ENCRYPTION_KEY_FILE": str(path)})


def test_reads_vault_transit_with_a_token_and_keeps_configured_keys_for_static_payloads() -> None:
    encryption = encryption_from_env(
        {
            "PAYLOAD_KEY_PROVIDER": "vault-transit",
            "PAYLOAD_VAULT_ADDR": "https://vault.internal:8200",
            "PAYLOAD_VAULT_TOKEN": "s.token",
            "PAYLOAD_VAULT_NAMESPACE": "lending",
            "PAYLOAD_VAULT_TRANSIT_KEY": "pipeline",
            "PAYLOAD_DATA_KEY_MAX_USES": "10",
            "PAYLOAD_ENCRYPTION_KEY": KEY,
            "TEMPORAL_ADDRESS": "temporal.bank.internal:7233",
        }
    )
    assert isinstance(encryption, TransitEncryption)
    assert encryption.key_id == "vault-transit:pipeline"
    assert encryption.vault.auth == TokenAuth("s.token") and encryption.vault.namespace == "lending"
    assert encryption.cache.data_key_max_uses == 10 and encryption.cache.data_key_lifetime_s == 900
    assert encryption.static_keys == EncryptionKeys("default", bytes(range(32)))


def test_reads_approle_auth_at_its_mount() -> None:
    encryption = encryption_from_env(
        {
            "PAYLOAD_KEY_PROVIDER": "vault-transit",
            "PAYLOAD_VAULT_ADDR": "http://127.0.0.1:8200",
            "PAYLOAD_VAULT_ROLE_ID": "role",
            "PAYLOAD_VAULT_SECRET_ID": "secret",
            "PAYLOAD_VAULT_APPROLE_MOUNT": "apps/approle",
            "TEMPORAL_ADDRESS": "temporal.bank.internal:7233",
        }
    )
    assert isinstance(encryption, TransitEncryption) and encryption.vault.auth == AppRoleAuth("role", "secret", "apps/approle")
    assert encryption.static_keys is None


def test_names_what_vault_transit_lacks(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        encryption_from_env(
            {
                "PAYLOAD_KEY_PROVIDER": "vault-transit",
                "PAYLOAD_VAULT_ROLE_ID": "role",
                "PAYLOAD_VAULT_CA_FILE": str(tmp_path / "missing.pem"),
                "PAYLOAD_VAULT_TIMEOUT_MS": "50",
            }
        )
    problems = caught.value.problems
    assert "PAYLOAD_VAULT_ADDR: is required with PAYLOAD_KEY_PROVIDER=vault-transit" in problems
    assert "PAYLOAD_VAULT_SECRET_ID: is required with AppRole auth (both PAYLOAD_VAULT_ROLE_ID and PAYLOAD_VAULT_SECRET_ID)" in problems
    assert "PAYLOAD_VAULT_TIMEOUT_MS: must be a whole number, at least 100" in problems
    assert any(problem.startswith("PAYLOAD_VAULT_CA_FILE: cannot be read") for problem in problems)


def test_refuses_a_vault_address_with_the_static_provider() -> None:
    with pytest.raises(ConfigError, match="PAYLOAD_VAULT_ADDR: is set but PAYLOAD_KEY_PROVIDER is static"):
        encryption_from_env({"PAYLOAD_ENCRYPTION_KEY": KEY, "PAYLOAD_VAULT_ADDR": "http://127.0.0.1:8200"})


def test_refuses_a_kms_in_clear_on_another_machine_and_allows_loopback_or_a_lab() -> None:
    vault = {"TEMPORAL_ADDRESS": "temporal.internal:7233", "PAYLOAD_KEY_PROVIDER": "vault-transit", "PAYLOAD_VAULT_TOKEN": "t"}
    with pytest.raises(ConfigError) as caught:
        encryption_from_env({**vault, "PAYLOAD_VAULT_ADDR": "http://vault.internal:8200"})
    assert (
        "PAYLOAD_VAULT_ADDR: is http:// to vault.internal, not on this machine: the KMS token and the plaintext data keys would cross "
        "the network in clear; use https:// (PAYLOAD_VAULT_CA_FILE for a private CA), or set PAYLOAD_KMS_ALLOW_INSECURE=true for a lab"
    ) in caught.value.problems
    aws = {
        "TEMPORAL_ADDRESS": "temporal.internal:7233",
        "PAYLOAD_KEY_PROVIDER": "aws-kms",
        "PAYLOAD_AWS_KMS_KEY_ID": "alias/payloads",
        "PAYLOAD_AWS_REGION": "eu-west-1",
    }
    with pytest.raises(ConfigError, match=r"PAYLOAD_AWS_KMS_ENDPOINT: is http:// to 10\.0\.0\.5, not on this machine"):
        encryption_from_env({**aws, "PAYLOAD_AWS_KMS_ENDPOINT": "http://10.0.0.5:4566"})
    for local in ("http://127.0.0.1:8200", "http://localhost:8200", "http://[::1]:8200", "https://vault.internal:8200"):
        assert encryption_from_env({**vault, "PAYLOAD_VAULT_ADDR": local}) is not None, local
    assert encryption_from_env({**vault, "PAYLOAD_VAULT_ADDR": "http://vault.internal:8200", "PAYLOAD_KMS_ALLOW_INSECURE": "true"}) is not None
    with pytest.raises(ConfigError, match="PAYLOAD_KMS_ALLOW_INSECURE: must be one of"):
        encryption_from_env({**vault, "PAYLOAD_VAULT_ADDR": "http://vault.internal:8200", "PAYLOAD_KMS_ALLOW_INSECURE": "yes"})
