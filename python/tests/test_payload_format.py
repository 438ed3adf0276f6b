"""docs/payload-format.md's test vectors and rules, checked against the Python codec."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from temporalio.api.common.v1 import Payload
from temporalio.converter import WorkflowSerializationContext

from aggregation_connections.codec import (
    EncryptionCodec,
    EncryptionKeys,
    PayloadDecryptionError,
    PayloadMisboundError,
    PayloadNotSealedError,
    StaticKeySource,
    StaticTenantKeySource,
    UnknownEncryptionKeyError,
)
from aggregation_connections.codec.aws_kms import aws_kms_encryption_context, aws_kms_key_of
from aggregation_connections.codec.payload_binding import binding_associated_data
from aggregation_connections.codec.payload_format import envelope_metadata, open_payload, read_envelope, seal_payload

from .conftest import doc_vectors

VECTORS = {vector["name"]: vector for vector in doc_vectors()}
PLAIN = Payload(metadata={"encoding": b"json/plain"}, data=b'{"password":"Everyday"}')


def metadata_of(vector: dict[str, object]) -> dict[str, bytes]:
    metadata = vector["metadata"]
    assert isinstance(metadata, dict)
    return {key: str(value).encode() for key, value in metadata.items()}


def test_the_docs_show_every_format() -> None:
    assert set(VECTORS) == {"static", "static-tenant", "envelope-v1", "envelope-v1-aws-kms", "envelope-v1-tenant", "static-tenant-bound", "envelope-v1-bound"}


@pytest.mark.parametrize(
    "name", ["static", "static-tenant", "envelope-v1", "envelope-v1-aws-kms", "envelope-v1-tenant", "static-tenant-bound", "envelope-v1-bound"]
)
def test_seals_the_same_bytes_as_the_vector_and_opens_them(name: str) -> None:
    vector = VECTORS[name]
    key = AESGCM(bytes.fromhex(vector.get("key") or vector["dataKey"]))
    assert PLAIN.SerializeToString(deterministic=True).hex() == vector["plaintext"]
    aad = bytes.fromhex(vector["associatedData"]) if "associatedData" in vector else None
    if aad is not None:
        metadata = vector["metadata"]
        assert binding_associated_data(metadata.get("encryption-tenant"), metadata["encryption-workflow-id"]) == aad
    sealed = seal_payload(key, PLAIN, bytes.fromhex(vector["nonce"]), associated_data=aad)
    assert sealed.hex() == vector["data"]
    assert open_payload(key, "any", bytes.fromhex(vector["data"]), aad) == PLAIN


async def test_the_codec_opens_the_static_vector_with_the_configured_key() -> None:
    vector = VECTORS["static"]
    codec = EncryptionCodec(EncryptionKeys("default", bytes.fromhex(vector["key"])))
    [decoded] = await codec.decode([Payload(metadata=metadata_of(vector), data=bytes.fromhex(vector["data"]))])
    assert decoded == PLAIN


async def test_the_codec_opens_the_static_tenant_vector_with_the_tenants_key_file(tmp_path: Path) -> None:
    vector = VECTORS["static-tenant"]
    payload = Payload(metadata=metadata_of(vector), data=bytes.fromhex(vector["data"]))
    key_file = tmp_path / "lender-a.key"
    key_file.write_text(f"lender-a-2026-11:{base64.b64encode(bytes.fromhex(vector['key'])).decode()}\n")
    key_file.chmod(0o600)
    source = StaticTenantKeySource(StaticKeySource(EncryptionKeys("default", bytes(32))), str(tmp_path))
    codec = EncryptionCodec(source)
    assert await codec.decode([payload]) == [PLAIN]
    # Sealing for the tenant's workflow writes the bound vector's metadata byte for byte (the workflow id names the tenant).
    context = WorkflowSerializationContext(namespace="default", workflow_id="connection-lender-a:app-42")
    [sealed] = await codec.with_context(context).encode([PLAIN])
    assert dict(sealed.metadata) == metadata_of(VECTORS["static-tenant-bound"])
    bound = Payload(metadata=metadata_of(VECTORS["static-tenant-bound"]), data=bytes.fromhex(VECTORS["static-tenant-bound"]["data"]))
    assert await codec.with_context(context).decode([bound, sealed]) == [PLAIN, PLAIN]
    # Copied into another workflow of the same tenant, it is refused before it is opened, naming both ids.
    other = codec.with_context(WorkflowSerializationContext(namespace="default", workflow_id="connection-lender-a:app-43"))
    with pytest.raises(PayloadMisboundError, match='sealed for workflow "connection-lender-a:app-42" sent to workflow "connection-lender-a:app-43"'):
        await other.decode([bound])
    # A schedule's run reads what its action was sealed for; edited binding metadata fails the tag.
    run = codec.with_context(WorkflowSerializationContext(namespace="default", workflow_id="connection-lender-a:app-42-2026-12-02T02:00:00Z"))
    assert await run.decode([bound]) == [PLAIN]
    edited = Payload(metadata={**bound.metadata, "encryption-workflow-id": b"connection-lender-a:app-43"}, data=bound.data)
    with pytest.raises(PayloadDecryptionError, match="it was altered"):
        await other.decode([edited])
    # The product's keys alone do not open it: it names its tenant.
    with pytest.raises(PayloadDecryptionError, match='of tenant "lender-a": this process has no keys per tenant'):
        await EncryptionCodec(EncryptionKeys("lender-a-2026-11", bytes.fromhex(vector["key"]))).decode([payload])


def test_reads_the_envelope_vectors_metadata() -> None:
    envelope = read_envelope(metadata_of(VECTORS["envelope-v1"]))
    assert envelope is not None
    assert (envelope.key_id, envelope.key_version) == ("vault-transit:aggregation-payloads", 3)
    assert envelope.wrapped_key.startswith("vault:v3:")


def test_the_aws_kms_reader_accepts_its_vectors_metadata_and_names_the_key_it_would_ask_decrypt_for() -> None:
    envelope = read_envelope(metadata_of(VECTORS["envelope-v1-aws-kms"]))
    assert envelope is not None
    assert envelope.key_version == 1
    assert aws_kms_key_of(envelope) == "arn:aws:kms:eu-west-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab"
    assert read_envelope(metadata_of(VECTORS["static"])) is None


def test_reads_the_tenant_of_a_tenants_envelope_and_passes_it_in_aws_kms_context() -> None:
    envelope = read_envelope(metadata_of(VECTORS["envelope-v1-tenant"]))
    assert envelope is not None
    assert (envelope.key_id, envelope.key_version, envelope.tenant) == ("vault-transit:aggregation-payloads-tenant-lender-a", 1, "lender-a")
    assert aws_kms_encryption_context(envelope.tenant) == {"purpose": "temporal-payloads", "tenant": "lender-a"}
    assert aws_kms_encryption_context(None) == {"purpose": "temporal-payloads"}
    assert envelope_metadata(envelope) == metadata_of(VECTORS["envelope-v1-tenant"]), "written back byte for byte"


def test_refuses_an_encryption_tenant_that_is_not_a_customer_id() -> None:
    metadata = {**metadata_of(VECTORS["envelope-v1-tenant"]), "encryption-tenant": b"lender a/../b"}
    with pytest.raises(PayloadDecryptionError, match="must be a customer id"):
        read_envelope(metadata)


async def test_encodes_with_a_fresh_nonce_each_time_and_round_trips() -> None:
    codec = EncryptionCodec(EncryptionKeys("k1", bytes(32)))
    first, second = await codec.encode([PLAIN, PLAIN])
    assert first.metadata["encoding"] == b"binary/encrypted" and first.metadata["encryption-key-id"] == b"k1"
    assert first.data[:12] != second.data[:12]
    assert await codec.decode([first, second]) == [PLAIN, PLAIN]


async def test_refuses_a_payload_that_is_not_sealed_by_name_without_quoting_it() -> None:
    codec = EncryptionCodec(EncryptionKeys("k1", bytes(32)))
    [sealed] = await codec.encode([PLAIN])
    with pytest.raises(PayloadNotSealedError) as refused:
        await codec.decode([sealed, PLAIN])
    assert isinstance(refused.value, PayloadDecryptionError)
    assert refused.value.encoding == "json/plain"
    assert str(refused.value).startswith('payload not sealed: its encoding is "json/plain"')
    assert "Everyday" not in str(refused.value)
    with pytest.raises(PayloadNotSealedError, match=r'encoding is "\(none\)"'):
        await codec.decode([Payload()])


async def test_a_replay_alone_reads_a_payload_that_is_not_sealed() -> None:
    codec = EncryptionCodec(EncryptionKeys("k1", bytes(32)), read_unsealed_for_replay=True)
    assert await codec.decode([PLAIN]) == [PLAIN]


async def test_refuses_altered_bytes_naming_the_key_id() -> None:
    codec = EncryptionCodec(EncryptionKeys("k1", bytes(32)))
    [sealed] = await codec.encode([PLAIN])
    altered = Payload(metadata=sealed.metadata, data=sealed.data[:-1] + bytes([sealed.data[-1] ^ 1]))
    with pytest.raises(PayloadDecryptionError, match='key id "k1": it was altered'):
        await codec.decode([altered])


async def test_names_an_unknown_key_id_and_the_known_ones() -> None:
    writer = EncryptionCodec(EncryptionKeys("old", bytes(32)))
    reader = EncryptionCodec(EncryptionKeys("new", bytes(range(32))))
    [sealed] = await writer.encode([PLAIN])
    with pytest.raises(UnknownEncryptionKeyError, match='key id "old", which is not configured here \\(known: "new"\\)') as caught:
        await reader.decode([sealed])
    assert caught.value.key_id == "old"


async def test_reads_an_earlier_key_kept_for_decryption() -> None:
    writer = EncryptionCodec(EncryptionKeys("old", bytes(32)))
    reader = EncryptionCodec(EncryptionKeys("new", bytes(range(32)), {"old": bytes(32)}))
    [sealed] = await writer.encode([PLAIN])
    assert await reader.decode([sealed]) == [PLAIN]


async def test_refuses_an_envelope_payload_without_a_key_provider() -> None:
    vector = VECTORS["envelope-v1"]
    codec = EncryptionCodec(EncryptionKeys("default", bytes(32)))
    with pytest.raises(PayloadDecryptionError, match="no key provider for it: set PAYLOAD_KEY_PROVIDER"):
        await codec.decode([Payload(metadata=metadata_of(vector), data=bytes.fromhex(vector["data"]))])


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"encryption-format": b"envelope-v9"}, 'encryption-format "envelope-v9", which this process does not read'),
        ({"encryption-key-version": b"0"}, "must be a key version, a whole number from 1"),
        ({"encryption-wrapped-key": b""}, "without encryption-wrapped-key metadata"),
    ],
)
def test_refuses_bad_envelope_metadata_by_name(change: dict[str, bytes], message: str) -> None:
    with pytest.raises(PayloadDecryptionError, match=message):
        read_envelope({**metadata_of(VECTORS["envelope-v1"]), **change})


def test_refuses_a_key_that_is_not_32_bytes() -> None:
    with pytest.raises(ValueError, match='key "short" must be 32 bytes, got 16'):
        StaticKeySource(EncryptionKeys("short", bytes(16)))
