"""The vault-transit key provider against a real OpenBao: data keys made once and reused within their
uses, unwrapped keys cached, revocation, a provider that is down or refuses, the namespace header."""

from __future__ import annotations

import pytest
from temporalio.api.common.v1 import Payload
from temporalio.converter import WorkflowSerializationContext

from aggregation_connections.codec import (
    DataKeyCacheSettings,
    EncryptionCodec,
    KeyDestroyedError,
    KeyProviderRefusedError,
    KeyProviderUnavailableError,
    KeyVersionRevokedError,
    PayloadDecryptionError,
    TokenAuth,
    TransitEncryption,
    TransitKey,
    VaultSettings,
    key_source_for,
)

from .openbao import OpenBao, free_port, tenant_reader_policy, worker_policy

PLAIN = Payload(metadata={"encoding": b"json/plain"}, data=b'{"answer":"123456"}')


def codec_for(openbao: OpenBao, token: str, key: str | None = None, cache: DataKeyCacheSettings | None = None, namespace: str | None = None) -> EncryptionCodec:
    encryption = TransitEncryption(
        vault=VaultSettings(address=openbao.address, auth=TokenAuth(token), namespace=namespace),
        transit=TransitKey(key=key or openbao.transit_key),
        cache=cache or DataKeyCacheSettings(),
    )
    return EncryptionCodec(key_source_for(encryption))


async def test_reuses_one_data_key_within_its_uses_then_asks_for_the_next(openbao: OpenBao) -> None:
    codec = codec_for(openbao, openbao.root_token, cache=DataKeyCacheSettings(data_key_max_uses=3))
    first = await codec.encode([PLAIN, PLAIN])
    [third] = await codec.encode([PLAIN])
    [fourth] = await codec.encode([PLAIN])
    wrapped = [payload.metadata["encryption-wrapped-key"] for payload in [*first, third, fourth]]
    assert wrapped[0] == wrapped[1] == wrapped[2] != wrapped[3]
    assert first[0].metadata["encryption-key-id"] == b"vault-transit:aggregation-payloads"
    assert await codec.decode([*first, third, fourth]) == [PLAIN] * 4


async def test_a_reader_with_an_empty_cache_unwraps_the_writers_data_key_and_reads_its_payloads(openbao: OpenBao) -> None:
    writer = codec_for(openbao, openbao.root_token)
    sealed = await writer.encode([PLAIN] * 5)
    reader = codec_for(openbao, openbao.root_token)
    assert await reader.decode(sealed) == [PLAIN] * 5


async def test_a_revoked_key_version_is_named(openbao: OpenBao) -> None:
    openbao.api("POST", "transit/keys/revocable", {})
    old = await codec_for(openbao, openbao.root_token, key="revocable").encode([PLAIN])
    openbao.api("POST", "transit/keys/revocable/rotate", {})
    openbao.api("POST", "transit/keys/revocable/config", {"min_decryption_version": 2})
    fresh = codec_for(openbao, openbao.root_token, key="revocable")
    with pytest.raises(KeyVersionRevokedError, match='wrapped with version 1 of key "revocable"') as caught:
        await fresh.decode(old)
    assert caught.value.version == 1
    [new] = await fresh.encode([PLAIN])
    assert new.metadata["encryption-key-version"] == b"2"


async def test_a_provider_that_does_not_answer_is_unavailable_not_a_bad_payload(openbao: OpenBao) -> None:
    encryption = TransitEncryption(vault=VaultSettings(address=f"http://127.0.0.1:{free_port()}", auth=TokenAuth("t"), timeout_s=2))
    with pytest.raises(KeyProviderUnavailableError, match=r"vault-transit is unavailable \(datakey\)") as caught:
        await EncryptionCodec(key_source_for(encryption)).encode([PLAIN])
    assert caught.value.retryable


async def test_a_token_without_the_policy_is_refused(openbao: OpenBao) -> None:
    token = openbao.token("pytest-nothing", 'path "sys/health" { capabilities = ["read"] }')
    with pytest.raises(KeyProviderRefusedError, match=r"vault-transit refused datakey \(HTTP 403\)"):
        await codec_for(openbao, token).encode([PLAIN])


async def test_sends_the_namespace(openbao: OpenBao) -> None:
    openbao.api("POST", "sys/namespaces/lending", {})
    openbao.api("POST", "sys/mounts/transit", {"type": "transit"}, namespace="lending")
    openbao.api("POST", "transit/keys/tenant-key", {}, namespace="lending")
    sealed = await codec_for(openbao, openbao.root_token, key="tenant-key", namespace="lending").encode([PLAIN])
    assert await codec_for(openbao, openbao.root_token, key="tenant-key", namespace="lending").decode(sealed) == [PLAIN]
    # The key lives only in the namespace: without the header the root namespace has no such key.
    with pytest.raises((KeyProviderRefusedError, PayloadDecryptionError)):
        await codec_for(openbao, openbao.root_token, key="tenant-key").decode(sealed)


def in_workflow(workflow_id: str) -> WorkflowSerializationContext:
    return WorkflowSerializationContext(namespace="default", workflow_id=workflow_id)


async def test_seals_a_tenants_payloads_under_its_own_key_as_the_typescript_codec_does(openbao: OpenBao) -> None:
    worker = openbao.token("py-tenant-worker", worker_policy(openbao.transit_key))
    codec = codec_for(openbao, worker)
    [of_a] = await codec.with_context(in_workflow("connection-py-lender-a:app-1")).encode([PLAIN])
    assert of_a.metadata["encryption-key-id"] == f"vault-transit:{openbao.transit_key}-tenant-py-lender-a".encode()
    assert of_a.metadata["encryption-tenant"] == b"py-lender-a"
    [of_fleet] = await codec.with_context(in_workflow("fleet-budget")).encode([PLAIN])
    assert of_fleet.metadata["encryption-key-id"] == f"vault-transit:{openbao.transit_key}".encode()
    assert "encryption-tenant" not in of_fleet.metadata
    [of_b] = await codec.with_context(in_workflow("book-entry-py-lender-b:login-1")).encode([PLAIN])
    reader_of_a = codec_for(openbao, openbao.token("py-reader-a", tenant_reader_policy(openbao.transit_key, "py-lender-a")))
    assert await reader_of_a.decode([of_a]) == [PLAIN]
    with pytest.raises(KeyProviderRefusedError, match="HTTP 403"):
        await reader_of_a.decode([of_b])


async def test_a_forgotten_tenants_payloads_fail_by_name_and_others_read_on(openbao: OpenBao) -> None:
    worker = openbao.token("py-forget-worker", worker_policy(openbao.transit_key))
    codec = codec_for(openbao, worker)
    [of_c] = await codec.with_context(in_workflow("connection-py-lender-c:app-1")).encode([PLAIN])
    [of_d] = await codec.with_context(in_workflow("connection-py-lender-d:app-1")).encode([PLAIN])
    openbao.api("POST", f"transit/keys/{openbao.transit_key}-tenant-py-lender-c/config", {"deletion_allowed": True})
    openbao.api("DELETE", f"transit/keys/{openbao.transit_key}-tenant-py-lender-c")
    fresh = codec_for(openbao, worker)
    with pytest.raises(KeyDestroyedError, match='^key destroyed: .*tenant "py-lender-c"') as caught:
        await fresh.decode([of_c])
    assert caught.value.tenant == "py-lender-c"
    assert await fresh.decode([of_d]) == [PLAIN]
