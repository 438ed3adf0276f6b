"""Keys per tenant in static mode (PAYLOAD_TENANT_KEYS_DIR; codec/static_tenant_keys.py): a key file per
tenant, its first line sealing, the tenant read from the serialization context's workflow id as for a KMS's
keys per tenant; rotation and forgetting reach a process within TENANT_KEY_FILE_RECHECK_S."""

from __future__ import annotations

import asyncio
import base64
import os
import re
import threading
from pathlib import Path

import pytest
from temporalio.api.common.v1 import Payload
from temporalio.converter import ActivitySerializationContext, WorkflowSerializationContext

from aggregation_connections.codec import (
    EncryptionCodec,
    EncryptionKeys,
    KeyDestroyedError,
    PayloadDecryptionError,
    StaticKeySource,
    StaticTenantEncryption,
    StaticTenantKeySource,
    TenantKeyFileError,
    TenantKeyMissingError,
    UnknownEncryptionKeyError,
    key_source_for,
)

# Imported from its module: a TENANT_ string in codec/__init__.py's __all__ would read as a variable to test_names.py.
from aggregation_connections.codec.static_tenant_keys import TENANT_KEY_FILE_RECHECK_S, create_tenant_key_file
from aggregation_connections.contract.names import ID_SEGMENT_RULE
from aggregation_connections.settings import ConfigError, codec_from_env, encryption_from_env

PLAIN = Payload(metadata={"encoding": b"json/plain"}, data=b'{"password":"Everyday"}')
PRODUCT = EncryptionKeys("default", bytes(range(32)))
KEY_A1 = bytes([0xA1] * 32)
KEY_A2 = bytes([0xA2] * 32)
KEY_B1 = bytes([0xB1] * 32)


def b64(key: bytes) -> str:
    return base64.b64encode(key).decode()


class Clock:
    """A monotonic clock the test moves."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def write_key_file(directory: Path, tenant: str, text: str, mode: int = 0o600) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{tenant}.key"
    path.write_text(text)
    os.chmod(path, mode)
    return path


def source_on(directory: Path, clock: Clock | None = None, *, create_missing: bool = False) -> StaticTenantKeySource:
    return StaticTenantKeySource(StaticKeySource(PRODUCT), str(directory), create_missing=create_missing, now=clock or Clock())


def in_workflow(workflow_id: str) -> WorkflowSerializationContext:
    return WorkflowSerializationContext(namespace="default", workflow_id=workflow_id)


async def seal(source: StaticTenantKeySource, workflow_id: str | None) -> Payload:
    """One payload sealed as the SDK has the codec seal it: in the serialization context of its workflow."""
    codec = EncryptionCodec(source)
    if workflow_id is not None:
        codec = codec.with_context(in_workflow(workflow_id))
    [sealed] = await codec.encode([PLAIN])
    return sealed


async def open_with(source: StaticTenantKeySource | StaticKeySource, payload: Payload) -> Payload:
    [opened] = await EncryptionCodec(source).decode([payload])
    return opened


async def test_seals_a_tenants_payloads_with_its_files_first_key_and_names_the_tenant(tmp_path: Path) -> None:
    write_key_file(tmp_path, "lender-a", f"a-2:{b64(KEY_A2)}\na-1:{b64(KEY_A1)}\n")
    source = source_on(tmp_path)
    sealed = await seal(source, "connection-lender-a:app-1")
    assert dict(sealed.metadata) == {
        "encoding": b"binary/encrypted",
        "encryption-key-id": b"a-2",
        "encryption-tenant": b"lender-a",
        # Bound to the workflow it was sealed for (docs/payload-format.md, "The workflow binding").
        "encryption-binding": b"workflow-v1",
        "encryption-workflow-id": b"connection-lender-a:app-1",
    }
    assert "encryption-format" not in sealed.metadata
    # The same tenant through an activity's context and the other kinds of its workflow ids.
    codec = EncryptionCodec(source).with_context(
        ActivitySerializationContext(
            namespace="default",
            activity_id="1",
            activity_type="a",
            activity_task_queue="q",
            workflow_id="book-entry-lender-a:7",
            workflow_type="w",
            is_local=False,
        )
    )
    [of_activity] = await codec.encode([PLAIN])
    assert of_activity.metadata["encryption-tenant"] == b"lender-a" and of_activity.metadata["encryption-key-id"] == b"a-2"
    assert (await seal(source, "throttle-lender-a")).metadata["encryption-key-id"] == b"a-2"
    # Sealed with the first line's key: a source holding that key alone opens it.
    only_a2 = StaticKeySource(EncryptionKeys("a-2", KEY_A2), tenant="lender-a")
    assert await open_with(only_a2, sealed) == PLAIN
    assert await open_with(source, sealed) == PLAIN


async def test_payloads_of_no_tenant_keep_the_product_key_byte_for_byte(tmp_path: Path) -> None:
    write_key_file(tmp_path, "lender-a", f"a-1:{b64(KEY_A1)}\n")
    source = source_on(tmp_path)
    today = await seal_without_tenant_keys(None)
    for workflow_id in (None, "fleet-budget", "a-pipelines-own-id"):
        sealed = await seal(source, workflow_id)
        # The product's key, as a process without keys per tenant seals; bound to its workflow when it has one.
        binding = {} if workflow_id is None else {"encryption-binding": b"workflow-v1", "encryption-workflow-id": workflow_id.encode()}
        assert dict(today.metadata) == {"encoding": b"binary/encrypted", "encryption-key-id": b"default"}
        assert dict(sealed.metadata) == {**today.metadata, **binding}
        # A process without keys per tenant opens them, and this one opens today's.
        assert await open_with(StaticKeySource(PRODUCT), sealed) == PLAIN
    assert await open_with(source, today) == PLAIN
    assert source.key_id == "default"
    assert source.cached_tenants == frozenset()


async def seal_without_tenant_keys(workflow_id: str | None) -> Payload:
    codec = EncryptionCodec(PRODUCT)
    if workflow_id is not None:
        codec = codec.with_context(in_workflow(workflow_id))
    [sealed] = await codec.encode([PLAIN])
    return sealed


async def test_a_reader_with_one_tenants_file_opens_its_payloads_and_not_anothers(tmp_path: Path) -> None:
    writer_dir, reader_dir = tmp_path / "writer", tmp_path / "reader"
    write_key_file(writer_dir, "lender-a", f"a-1:{b64(KEY_A1)}\n")
    write_key_file(writer_dir, "lender-b", f"b-1:{b64(KEY_B1)}\n")
    write_key_file(reader_dir, "lender-a", f"a-1:{b64(KEY_A1)}\n")
    writer, reader = source_on(writer_dir), source_on(reader_dir)
    of_a = await seal(writer, "connection-lender-a:app-1")
    of_b = await seal(writer, "connection-lender-b:app-1")
    assert await open_with(reader, of_a) == PLAIN
    with pytest.raises(KeyDestroyedError) as caught:
        await open_with(reader, of_b)
    path = str(reader_dir / "lender-b.key")
    assert str(caught.value) == (
        f'key destroyed: the payload was sealed with key "b-1" of tenant "lender-b", whose key file {path} is gone; '
        "its payloads stay unreadable for good, as forgetting a lender intends"
    )
    assert (caught.value.key_id, caught.value.key_name, caught.value.tenant) == ("b-1", path, "lender-b")
    assert not Path(path).exists(), "opening never creates a file"
    # Relabelled to a tenant whose file lacks its key: the key id is unknown there.
    relabelled = Payload(metadata={**of_b.metadata, "encryption-tenant": b"lender-a"}, data=of_b.data)
    with pytest.raises(UnknownEncryptionKeyError) as unknown:
        await open_with(reader, relabelled)
    assert unknown.value.key_id == "b-1" and unknown.value.known_key_ids == ("a-1",)


async def test_a_loopback_reader_never_creates_a_file_when_opening(tmp_path: Path) -> None:
    writer_dir = tmp_path / "writer"
    write_key_file(writer_dir, "lender-b", f"b-1:{b64(KEY_B1)}\n")
    of_b = await seal(source_on(writer_dir), "connection-lender-b:app-1")
    reader_dir = tmp_path / "reader"
    with pytest.raises(KeyDestroyedError):
        await open_with(source_on(reader_dir, create_missing=True), of_b)
    assert not reader_dir.exists()


async def test_a_rotation_is_sealed_with_after_the_recheck_and_old_payloads_still_open(tmp_path: Path) -> None:
    path = write_key_file(tmp_path, "lender-a", f"a-1:{b64(KEY_A1)}\n")
    clock = Clock()
    source = source_on(tmp_path, clock)
    old = await seal(source, "connection-lender-a:app-1")
    assert old.metadata["encryption-key-id"] == b"a-1"
    path.write_text(f"a-2:{b64(KEY_A2)}\na-1:{b64(KEY_A1)}\n")
    clock.advance(TENANT_KEY_FILE_RECHECK_S - 1)
    assert (await seal(source, "connection-lender-a:app-1")).metadata["encryption-key-id"] == b"a-1", "the copy in memory until it is 10 s old"
    clock.advance(1)
    new = await seal(source, "connection-lender-a:app-1")
    assert new.metadata["encryption-key-id"] == b"a-2"
    assert await EncryptionCodec(source).decode([old, new]) == [PLAIN, PLAIN]


async def test_a_key_rotated_by_another_process_opens_at_once_by_reading_the_file_again(tmp_path: Path) -> None:
    path = write_key_file(tmp_path, "lender-a", f"a-1:{b64(KEY_A1)}\n")
    clock = Clock()
    reader = source_on(tmp_path, clock)
    assert await open_with(reader, await seal(source_on(tmp_path), "connection-lender-a:app-1")) == PLAIN
    path.write_text(f"a-2:{b64(KEY_A2)}\na-1:{b64(KEY_A1)}\n")
    rotated = await seal(source_on(tmp_path), "connection-lender-a:app-1")
    assert rotated.metadata["encryption-key-id"] == b"a-2"
    assert await open_with(reader, rotated) == PLAIN, "read again once though the copy is fresh"
    unknown = Payload(metadata={**rotated.metadata, "encryption-key-id": b"a-9"}, data=rotated.data)
    with pytest.raises(UnknownEncryptionKeyError) as caught:
        await open_with(reader, unknown)
    assert caught.value.known_key_ids == ("a-2", "a-1")


async def test_a_forgotten_tenants_payloads_fail_as_key_destroyed_after_the_recheck_and_its_keys_are_dropped(tmp_path: Path) -> None:
    path = write_key_file(tmp_path, "lender-a", f"a-1:{b64(KEY_A1)}\n")
    write_key_file(tmp_path, "lender-b", f"b-1:{b64(KEY_B1)}\n")
    clock = Clock()
    source = source_on(tmp_path, clock)
    of_a = await seal(source, "connection-lender-a:app-1")
    of_b = await seal(source, "connection-lender-b:app-1")
    assert source.cached_tenants == {"lender-a", "lender-b"}
    path.unlink()
    assert await open_with(source, of_a) == PLAIN, "the copy in memory until it is 10 s old"
    clock.advance(TENANT_KEY_FILE_RECHECK_S)
    with pytest.raises(
        KeyDestroyedError, match=r'^key destroyed: the payload was sealed with key "a-1" of tenant "lender-a", whose key file .*lender-a\.key is gone'
    ) as caught:
        await open_with(source, of_a)
    assert caught.value.tenant == "lender-a" and caught.value.key_name == str(path)
    assert source.cached_tenants == {"lender-b"}, "its keys dropped at once"
    with pytest.raises(KeyDestroyedError):
        await open_with(source, of_a)
    assert await open_with(source, of_b) == PLAIN, "the other tenants read on"
    with pytest.raises(TenantKeyMissingError):
        await seal(source, "connection-lender-a:app-2")
    assert not path.exists()


async def test_a_file_deleted_is_seen_at_once_when_a_payload_names_a_key_the_copy_lacks(tmp_path: Path) -> None:
    path = write_key_file(tmp_path, "lender-a", f"a-1:{b64(KEY_A1)}\n")
    source = source_on(tmp_path)
    of_a = await seal(source, "connection-lender-a:app-1")
    path.unlink()
    unknown = Payload(metadata={**of_a.metadata, "encryption-key-id": b"a-2"}, data=of_a.data)
    with pytest.raises(KeyDestroyedError):
        await open_with(source, unknown)
    assert source.cached_tenants == frozenset()


async def test_with_temporal_on_this_machine_sealing_creates_a_tenants_file(tmp_path: Path) -> None:
    directory = tmp_path / "state" / "tenant-keys"
    source = source_on(directory, create_missing=True)
    sealed = await seal(source, "connection-lender-a:app-1")
    path = directory / "lender-a.key"
    assert os.stat(path).st_mode & 0o777 == 0o600
    assert os.stat(directory).st_mode & 0o777 == 0o700
    text = path.read_text()
    match = re.fullmatch(r"(tenant-[0-9a-f]{16}):([A-Za-z0-9+/]{43}=)\n", text)
    assert match is not None, text
    assert sealed.metadata["encryption-key-id"] == match.group(1).encode()
    assert sealed.metadata["encryption-tenant"] == b"lender-a"
    assert sorted(os.listdir(directory)) == ["lender-a.key"], "no temp file left"
    # Another process (not on loopback) reads what was made.
    reader = source_on(directory)
    assert await open_with(reader, sealed) == PLAIN
    assert (await seal(reader, "refresh-lender-a:r")).metadata["encryption-key-id"] == match.group(1).encode()


def test_processes_creating_a_tenants_file_at_once_agree_on_one_key(tmp_path: Path) -> None:
    directory = tmp_path / "tenant-keys"
    sources = [source_on(directory, create_missing=True) for _ in range(8)]
    start = threading.Barrier(len(sources))
    key_ids: list[bytes] = []

    def seal_in_thread(source: StaticTenantKeySource) -> None:
        start.wait()
        key_ids.append(asyncio.run(seal(source, "connection-lender-a:app-1")).metadata["encryption-key-id"])

    threads = [threading.Thread(target=seal_in_thread, args=(source,)) for source in sources]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(key_ids) == len(sources) and len(set(key_ids)) == 1
    assert sorted(os.listdir(directory)) == ["lender-a.key"]
    # The loser of the link keeps the winner's file as it is.
    before = (directory / "lender-a.key").read_text()
    create_tenant_key_file(str(directory / "lender-a.key"))
    assert (directory / "lender-a.key").read_text() == before
    assert sorted(os.listdir(directory)) == ["lender-a.key"]


async def test_elsewhere_a_tenant_without_a_file_is_refused_and_nothing_written(tmp_path: Path) -> None:
    directory = tmp_path / "tenant-keys"
    source = source_on(directory)
    with pytest.raises(TenantKeyMissingError) as caught:
        await seal(source, "connection-lender-z:app-1")
    path = directory / "lender-z.key"
    assert str(caught.value) == f'tenant "lender-z" has no payload key: no file {path}; onboard the tenant first (docs/operations.md, "Tenant onboarding")'
    assert (caught.value.tenant, caught.value.path) == ("lender-z", str(path))
    assert not directory.exists()


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (f"{b64(KEY_A1)}\n", "line 1 must be"),
        (f"\n  a-1:{b64(KEY_A1)}  \nbad id!:{b64(KEY_A2)}\n", "line 3 must be"),
        (f"a-1:{b64(KEY_A1)}\na-2:{b64(bytes(16))}\n", 'line 2 (key id "a-2"): the key must be standard base64 (padded) of exactly 32 bytes'),
        (f"a-1:{b64(KEY_A1).rstrip('=')}\n", 'line 1 (key id "a-1"): the key must be standard base64'),
        (f"a-1:{b64(bytes([0xFB] * 32)).replace('+', '-').replace('/', '_')}\n", 'line 1 (key id "a-1"): the key must be standard base64'),
        (f"a-1:{b64(KEY_A1)}\n\na-1:{b64(KEY_A2)}\n", 'line 3: key id "a-1" appears twice'),
        (f"a-1:{b64(KEY_A1)}\r\nbad\r\n", "line 2 must be"),
        ("\n  \n", "holds no key"),
    ],
)
async def test_names_the_file_and_line_of_a_bad_key_file_and_never_its_keys(tmp_path: Path, text: str, problem: str) -> None:
    path = write_key_file(tmp_path, "lender-a", text)
    with pytest.raises(TenantKeyFileError) as caught:
        await seal(source_on(tmp_path), "connection-lender-a:app-1")
    message = str(caught.value)
    assert message.startswith(f"tenant key file {path}: "), message
    assert problem in message
    assert caught.value.path == str(path)
    for secret in (KEY_A1, KEY_A2, bytes(16), bytes([0xFB] * 32)):
        assert b64(secret).rstrip("=")[:20] not in message and b64(secret).replace("+", "-").replace("/", "_")[:20] not in message


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604, 0o620])
async def test_refuses_a_key_file_open_to_group_or_others(tmp_path: Path, mode: int) -> None:
    path = write_key_file(tmp_path, "lender-a", f"a-1:{b64(KEY_A1)}\n", mode)
    with pytest.raises(TenantKeyFileError) as caught:
        await seal(source_on(tmp_path), "connection-lender-a:app-1")
    assert str(caught.value) == f"tenant key file {path}: is readable or writable by group or others (mode {mode:04o}): chmod 600 it"


async def test_reads_a_key_file_of_mode_0400_with_crlf_lines_and_a_byte_order_mark(tmp_path: Path) -> None:
    write_key_file(tmp_path, "lender-a", f"\ufeffa-2:{b64(KEY_A2)}\r\n  a-1:{b64(KEY_A1)}\t\r\n", 0o400)
    source = source_on(tmp_path)
    assert (await seal(source, "connection-lender-a:app-1")).metadata["encryption-key-id"] == b"a-2"
    [of_a1] = await EncryptionCodec(StaticKeySource(EncryptionKeys("a-1", KEY_A1), tenant="lender-a")).encode([PLAIN])
    assert await open_with(source, of_a1) == PLAIN


async def test_refuses_an_encryption_tenant_that_is_no_customer_id_by_its_first_32_characters(tmp_path: Path) -> None:
    write_key_file(tmp_path, "lender-a", f"a-1:{b64(KEY_A1)}\n")
    source = source_on(tmp_path)
    of_a = await seal(source, "connection-lender-a:app-1")
    for label in ("../lender-a", ".lender-a", "x" * 65, "lender a"):
        relabelled = Payload(metadata={**of_a.metadata, "encryption-tenant": label.encode()}, data=of_a.data)
        with pytest.raises(PayloadDecryptionError, match="not a customer id") as caught:
            await open_with(source, relabelled)
        assert f'has encryption-tenant "{label[:32]}", not a customer id' in str(caught.value)
        assert "x" * 33 not in str(caught.value)
        assert not isinstance(caught.value, KeyDestroyedError)
    assert os.listdir(tmp_path) == ["lender-a.key"]


async def test_a_process_without_keys_per_tenant_refuses_a_tenants_static_payload_by_name(tmp_path: Path) -> None:
    write_key_file(tmp_path, "lender-a", f"default:{b64(PRODUCT.key)}\n")
    of_a = await seal(source_on(tmp_path), "connection-lender-a:app-1")
    with pytest.raises(PayloadDecryptionError) as caught:
        await EncryptionCodec(PRODUCT).decode([of_a])
    assert (
        str(caught.value) == 'payload sealed with key "default" of tenant "lender-a": this process has no keys per tenant in static mode '
        "(PAYLOAD_TENANT_KEYS_DIR with PAYLOAD_KEY_PROVIDER=static)"
    )
    assert caught.value.key_id == "default"


async def test_a_tenant_that_is_no_customer_id_is_never_looked_up(tmp_path: Path) -> None:
    source = source_on(tmp_path, create_missing=True)
    with pytest.raises(TenantKeyFileError) as caught:
        await source.sealing_key(1, ".hidden")
    assert str(caught.value) == f'tenant key file {tmp_path / "<customerId>.key"}: customer id ".hidden" ' + ID_SEGMENT_RULE
    assert os.listdir(tmp_path) == []


# The settings: PAYLOAD_TENANT_KEYS_DIR, static mode only.

KEY = base64.b64encode(bytes(range(32))).decode()
ELSEWHERE = {"TEMPORAL_ADDRESS": "temporal.bank.internal:7233", "PAYLOAD_ENCRYPTION_KEY": KEY}


def test_reads_the_tenant_keys_dir_from_the_environment(tmp_path: Path) -> None:
    encryption = encryption_from_env({**ELSEWHERE, "PAYLOAD_TENANT_KEYS_DIR": " state/tenant-keys "})
    assert encryption == StaticTenantEncryption(EncryptionKeys("default", bytes(range(32))), "state/tenant-keys", create_missing_tenant_keys=False)
    assert encryption_from_env(ELSEWHERE) == EncryptionKeys("default", bytes(range(32))), "unset: as today"
    assert encryption_from_env({**ELSEWHERE, "PAYLOAD_TENANT_KEYS_DIR": "", "PAYLOAD_TENANT_KEYS": "true"}) == EncryptionKeys("default", bytes(range(32)))
    local = encryption_from_env(
        {"TEMPORAL_ADDRESS": "127.0.0.1:7233", "PAYLOAD_ENCRYPTION_KEY_FILE": str(tmp_path / "payload.key"), "PAYLOAD_TENANT_KEYS_DIR": str(tmp_path / "t")}
    )
    assert isinstance(local, StaticTenantEncryption) and local.create_missing_tenant_keys and local.keys.key_id.startswith("local-")
    assert isinstance(key_source_for(local), StaticTenantKeySource)


async def test_the_codec_of_the_environment_seals_a_tenants_payloads_with_its_file(tmp_path: Path) -> None:
    write_key_file(tmp_path, "lender-a", f"a-1:{b64(KEY_A1)}\n")
    codec = codec_from_env({**ELSEWHERE, "PAYLOAD_TENANT_KEYS_DIR": str(tmp_path)})
    assert codec is not None and codec.key_id == "default"
    [sealed] = await codec.with_context(in_workflow("connection-lender-a:app-1")).encode([PLAIN])
    assert sealed.metadata["encryption-key-id"] == b"a-1" and sealed.metadata["encryption-tenant"] == b"lender-a"
    assert await codec.decode([sealed]) == [PLAIN]


@pytest.mark.parametrize(
    ("env", "problem"),
    [
        (
            {"PAYLOAD_KEY_PROVIDER": "vault-transit", "PAYLOAD_VAULT_ADDR": "https://vault.internal:8200", "PAYLOAD_VAULT_TOKEN": "s.t"},
            "PAYLOAD_TENANT_KEYS_DIR: is set but PAYLOAD_KEY_PROVIDER is vault-transit: a KMS keeps a key per tenant itself (PAYLOAD_TENANT_KEYS)",
        ),
        (
            {"PAYLOAD_KEY_PROVIDER": "aws-kms", "PAYLOAD_AWS_KMS_KEY_ID": "alias/payloads", "PAYLOAD_AWS_REGION": "eu-west-1"},
            "PAYLOAD_TENANT_KEYS_DIR: is set but PAYLOAD_KEY_PROVIDER is aws-kms: a KMS keeps a key per tenant itself (PAYLOAD_TENANT_KEYS)",
        ),
        ({"PAYLOAD_ENCRYPTION": "off", "PAYLOAD_ENCRYPTION_KEY": ""}, "PAYLOAD_TENANT_KEYS_DIR: is set but PAYLOAD_ENCRYPTION is off: unset one of them"),
        ({"PAYLOAD_TENANT_KEYS": "false"}, "PAYLOAD_TENANT_KEYS_DIR: is set but PAYLOAD_TENANT_KEYS is false: unset one of them"),
        ({"PAYLOAD_TENANT_KEYS": "0"}, "PAYLOAD_TENANT_KEYS_DIR: is set but PAYLOAD_TENANT_KEYS is false: unset one of them"),
    ],
)
def test_refuses_the_tenant_keys_dir_outside_static_mode_with_keys_per_tenant(env: dict[str, str], problem: str) -> None:
    with pytest.raises(ConfigError) as caught:
        encryption_from_env({**ELSEWHERE, "PAYLOAD_TENANT_KEYS_DIR": "state/tenant-keys", **env})
    assert problem in caught.value.problems, caught.value.problems
