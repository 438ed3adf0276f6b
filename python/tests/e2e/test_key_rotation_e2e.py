"""A key rotation between a Python start and its result: a connection started from Python waits for its
answer while the TypeScript worker runs as its own process under key "before"; that worker stops and
another starts with PAYLOAD_ENCRYPTION_KEY "after" and "before" in PAYLOAD_DECRYPTION_KEYS (the runbook's
rotation); the Python client, rotated the same way, answers and reads the state and the result. The history
holds payloads under both keys; a client left on the old key alone cannot read what the new worker wrote.
The same with OpenBao's transit key rotated in between (vault-transit), then its old version revoked.

Run by test/python/python-e2e.test.ts with the dev server, the sandbox (E2E_AGGREGATOR_BASE_URL) and a
prebuilt workflow bundle (E2E_WORKFLOW_BUNDLE); skipped without E2E_CUSTOMER_ID."""

from __future__ import annotations

import base64
import os
import secrets
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import temporalio.client
from temporalio.api.common.v1 import Payload

from aggregation_connections.client import ConnectionsClient, connection_key
from aggregation_connections.codec import KeyVersionRevokedError, UnknownEncryptionKeyError
from aggregation_connections.contract import AnswerOutcomeAccepted, FirstStepChallenge
from aggregation_connections.settings import client_settings_from_env, codec_from_env

from ..openbao import OpenBao, worker_policy
from .worker_process import WorkerProcess, start_worker

CUSTOMER_ID = os.environ.get("E2E_CUSTOMER_ID", "")
pytestmark = [pytest.mark.e2e, pytest.mark.skipif(CUSTOMER_ID == "", reason="end-to-end: run by test/python/python-e2e.test.ts (E2E_CUSTOMER_ID unset)")]

BEFORE = {"PAYLOAD_ENCRYPTION_KEY": base64.b64encode(bytes([0x11] * 32)).decode(), "PAYLOAD_ENCRYPTION_KEY_ID": "rotation-before"}
AFTER = {
    "PAYLOAD_ENCRYPTION_KEY": base64.b64encode(bytes([0x22] * 32)).decode(),
    "PAYLOAD_ENCRYPTION_KEY_ID": "rotation-after",
    "PAYLOAD_DECRYPTION_KEYS": f"rotation-before:{BEFORE['PAYLOAD_ENCRYPTION_KEY']}",
}


@pytest.fixture
def workers() -> Iterator[list[WorkerProcess]]:
    started: list[WorkerProcess] = []
    yield started
    for worker in started:
        worker.stop()


def worker_env(task_queue: str, keys: dict[str, str]) -> dict[str, str]:
    return {
        "TEMPORAL_ADDRESS": os.environ["TEMPORAL_ADDRESS"],
        "TEMPORAL_NAMESPACE": os.environ.get("TEMPORAL_NAMESPACE", "default"),
        "TEMPORAL_TASK_QUEUE": task_queue,
        "TEMPORAL_CONFIG_FILE": os.devnull,
        "AGGREGATOR_BASE_URL": os.environ["E2E_AGGREGATOR_BASE_URL"],
        "AGGREGATOR_CUSTOMER_ID": CUSTOMER_ID,
        "WORKER_WORKFLOW_BUNDLE": os.environ["E2E_WORKFLOW_BUNDLE"],
        "WORKER_METRICS_PORT": "0",
        "LOG_LEVEL": "INFO",
        **keys,
    }


async def client_with(task_queue: str, keys: dict[str, str]) -> ConnectionsClient:
    """A pipeline's client with these keys, as its variables would give them."""
    env = {name: os.environ[name] for name in ("TEMPORAL_ADDRESS", "TEMPORAL_NAMESPACE") if name in os.environ}
    env = {**env, "TEMPORAL_TASK_QUEUE": task_queue, "AGGREGATOR_CUSTOMER_ID": CUSTOMER_ID, **keys}
    return await ConnectionsClient.connect(client_settings_from_env(env), codec_from_env(env))


def live_input() -> dict[str, Any]:
    return {
        "customerId": CUSTOMER_ID,
        "session": {"kind": "live", "institution": "SandboxBank", "username": "security_question", "password": "Everyday"},
        "products": {"accountsDetail": {"WithTransactions": True}},
        "timing": {"pollIntervalMs": 50},
    }


async def rotate_between_start_and_result(
    workers: list[WorkerProcess], before_keys: dict[str, str], after_keys: dict[str, str], rotate: Callable[[], object] = lambda: None
) -> tuple[str, Payload, Payload, ConnectionsClient]:
    """Starts a connection from Python under ``before_keys``, rotates (``rotate``, then the worker restarted
    on ``after_keys``), answers and reads it from Python under ``after_keys``; its stored input and result,
    and the client left on the old keys."""
    task_queue = f"py-rotation-{secrets.token_hex(4)}"
    key = connection_key(CUSTOMER_ID, f"py-rotation-{secrets.token_hex(4)}")

    workers.append(start_worker(worker_env(task_queue, before_keys)))
    before = await client_with(task_queue, before_keys)
    first = await before.start_and_await_first_step(key, live_input())
    assert isinstance(first, FirstStepChallenge), first
    [challenge] = first.challenge_set.challenges

    # The rotation: the worker restarts on the new key, the old one kept to read what it wrote.
    workers[-1].stop()
    assert workers[-1].process.returncode is not None
    rotate()
    workers.append(start_worker(worker_env(task_queue, after_keys)))
    after = await client_with(task_queue, after_keys)

    # The new worker replays the history written under the old key to answer the query.
    state = await after.state(key)
    assert state.status == "AwaitingAnswer", state
    outcome = await after.answer(key, {challenge.prompt: ["Montreal"]}, challenge_set_id=first.challenge_set.id)
    assert isinstance(outcome, AnswerOutcomeAccepted), outcome
    result = await after.result(key)
    assert result.customer_id == CUSTOMER_ID and result.accounts_detail is not None and len(result.accounts_detail.accounts) > 0
    assert (await after.state(key)).status == "Completed"

    raw = await temporalio.client.Client.connect(os.environ["TEMPORAL_ADDRESS"], namespace=os.environ.get("TEMPORAL_NAMESPACE", "default"))
    history = await raw.get_workflow_handle(key).fetch_history()
    [started_input] = history.events[0].workflow_execution_started_event_attributes.input.payloads
    [stored_result] = history.events[-1].workflow_execution_completed_event_attributes.result.payloads
    return key, started_input, stored_result, before


async def test_a_connection_started_under_one_configured_key_ends_under_the_next_read_from_python(workers: list[WorkerProcess]) -> None:
    key, started_input, stored_result, before = await rotate_between_start_and_result(workers, BEFORE, AFTER)
    # Temporal holds payloads under both keys: the input under the old, the result under the new.
    assert started_input.metadata["encryption-key-id"] == b"rotation-before"
    assert stored_result.metadata["encryption-key-id"] == b"rotation-after"

    # A pipeline left on the old key alone cannot read what the rotated worker wrote, and is told which key it lacks.
    with pytest.raises(UnknownEncryptionKeyError, match='key id "rotation-after", which is not configured here') as stale:
        await before.result(key)
    assert stale.value.key_id == "rotation-after"


async def test_a_transit_key_rotated_between_a_python_start_and_its_result(workers: list[WorkerProcess], openbao: OpenBao, tmp_path: Path) -> None:
    """OpenBao's transit key rotated while the connection waits (a restarted worker makes its next data key
    under the new version); then the old version revoked: the connection's input is unreadable, by name."""
    openbao.api("POST", "transit/keys/py-rotation", {})
    token = openbao.token("py-rotation-worker", worker_policy("py-rotation"))
    transit = {
        "PAYLOAD_KEY_PROVIDER": "vault-transit",
        "PAYLOAD_VAULT_ADDR": openbao.address,
        "PAYLOAD_VAULT_TOKEN": token,
        "PAYLOAD_VAULT_TRANSIT_KEY": "py-rotation",
        # Temporal is on this machine: a local key would stand in (decrypt-only); keep it out of the checkout.
        "PAYLOAD_ENCRYPTION_KEY_FILE": str(tmp_path / "payload-encryption.key"),
    }
    # Keys per tenant: the Python pipeline seals the input under the tenant's own transit key, as the worker seals the result.
    tenant_key = f"py-rotation-tenant-{CUSTOMER_ID}"
    key, started_input, stored_result, _ = await rotate_between_start_and_result(
        workers, transit, transit, lambda: openbao.api("POST", f"transit/keys/{tenant_key}/rotate", {})
    )
    for payload, version in ((started_input, b"1"), (stored_result, b"2")):
        assert payload.metadata["encryption-key-id"] == f"vault-transit:{tenant_key}".encode()
        assert payload.metadata["encryption-tenant"] == CUSTOMER_ID.encode()
        assert payload.metadata["encryption-key-version"] == version
        assert payload.metadata["encryption-wrapped-key"].startswith(b"vault:v" + version + b":")

    # Version 1 revoked: a fresh pipeline reads the result (version 2) but not the input, and is told why.
    openbao.api("POST", f"transit/keys/{tenant_key}/config", {"min_decryption_version": 2})
    codec = codec_from_env({"TEMPORAL_ADDRESS": os.environ["TEMPORAL_ADDRESS"], **transit})
    assert codec is not None
    assert len(await codec.decode([stored_result])) == 1
    with pytest.raises(KeyVersionRevokedError, match=f'wrapped with version 1 of key "{tenant_key}"'):
        await codec.decode([started_input])


async def test_a_running_connection_whose_key_version_is_revoked_says_so_when_its_state_is_read(
    workers: list[WorkerProcess], openbao: OpenBao, tmp_path: Path
) -> None:
    """A connection waiting for its answer, its tenant key's version 1 revoked and its worker restarted:
    the worker cannot read the history, so its query fails with only "Encoded failure"; the client reads
    the start input with its own keys and raises the typed error naming the key and version. Lowered
    again, the minimum lets the same connection read on."""
    openbao.api("POST", "transit/keys/py-revoked", {})
    transit = {
        "PAYLOAD_KEY_PROVIDER": "vault-transit",
        "PAYLOAD_VAULT_ADDR": openbao.address,
        "PAYLOAD_VAULT_TOKEN": openbao.token("py-revoked-worker", worker_policy("py-revoked")),
        "PAYLOAD_VAULT_TRANSIT_KEY": "py-revoked",
        "PAYLOAD_ENCRYPTION_KEY_FILE": str(tmp_path / "payload-encryption.key"),
    }
    task_queue = f"py-revoked-{secrets.token_hex(4)}"
    key = connection_key(CUSTOMER_ID, f"py-revoked-{secrets.token_hex(4)}")
    workers.append(start_worker(worker_env(task_queue, transit)))
    first = await (await client_with(task_queue, transit)).start_and_await_first_step(key, live_input())
    assert isinstance(first, FirstStepChallenge), first

    tenant_key = f"py-revoked-tenant-{CUSTOMER_ID}"
    openbao.api("POST", f"transit/keys/{tenant_key}/rotate", {})
    openbao.api("POST", f"transit/keys/{tenant_key}/config", {"min_decryption_version": 2})
    # Restarted, the worker has no unwrapped key left in memory: the KMS decides what it reads.
    workers[-1].stop()
    workers.append(start_worker(worker_env(task_queue, transit)))
    reader = await client_with(task_queue, transit)
    with pytest.raises(KeyVersionRevokedError, match=f'wrapped with version 1 of key "{tenant_key}"') as revoked:
        await reader.state(key)
    assert revoked.value.version == 1

    openbao.api("POST", f"transit/keys/{tenant_key}/config", {"min_decryption_version": 1})
    assert (await reader.state(key)).status == "AwaitingAnswer"
    await reader.cancel(key)
