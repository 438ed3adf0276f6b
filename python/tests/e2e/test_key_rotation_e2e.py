"""A key rotation between a Python start and its result: a connection started from Python waits for its
answer while the TypeScript worker runs as its own process under key "before"; that worker stops and
another starts with PAYLOAD_ENCRYPTION_KEY "after" and "before" in PAYLOAD_DECRYPTION_KEYS (the runbook's
rotation); the Python client, rotated the same way, answers and reads the state and the result. The history
holds payloads under both keys; a client left on the old key alone cannot read what the new worker wrote.

Run by test/python/python-e2e.test.ts with the dev server, the sandbox (E2E_AGGREGATOR_BASE_URL) and a
prebuilt workflow bundle (E2E_WORKFLOW_BUNDLE); skipped without E2E_CUSTOMER_ID."""

from __future__ import annotations

import base64
import os
import secrets
from collections.abc import Iterator
from typing import Any

import pytest
import temporalio.client

from aggregation_connections.client import ConnectionsClient, connection_key
from aggregation_connections.codec import UnknownEncryptionKeyError
from aggregation_connections.settings import client_settings_from_env, codec_from_env

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


async def test_a_connection_started_under_one_key_ends_under_the_next_read_from_python(workers: list[WorkerProcess]) -> None:
    task_queue = f"py-rotation-{secrets.token_hex(4)}"
    key = connection_key(CUSTOMER_ID, f"py-rotation-{secrets.token_hex(4)}")

    workers.append(start_worker(worker_env(task_queue, BEFORE)))
    before = await client_with(task_queue, BEFORE)
    first = await before.start_and_await_first_step(key, live_input())
    assert first["step"] == "challenge", first
    [challenge] = first["challengeSet"]["challenges"]

    # The rotation: the worker restarts on the new key, the old one kept to read what it wrote.
    workers[0].stop()
    assert workers[0].process.returncode is not None
    workers.append(start_worker(worker_env(task_queue, AFTER)))
    after = await client_with(task_queue, AFTER)

    # The new worker replays the history written under "before" to answer the query.
    state = await after.state(key)
    assert state["status"] == "AwaitingAnswer", state
    outcome = await after.answer(key, {challenge["Prompt"]: ["Montreal"]}, challenge_set_id=first["challengeSet"]["id"])
    assert outcome["outcome"] == "accepted", outcome
    result = await after.result(key)
    assert result["customerId"] == CUSTOMER_ID and len(result["accountsDetail"]["Accounts"]) > 0
    assert (await after.state(key))["status"] == "Completed"

    # Temporal holds payloads under both keys: the input under the old, the result under the new.
    raw = await temporalio.client.Client.connect(os.environ["TEMPORAL_ADDRESS"], namespace=os.environ.get("TEMPORAL_NAMESPACE", "default"))
    history = await raw.get_workflow_handle(key).fetch_history()
    [started_input] = history.events[0].workflow_execution_started_event_attributes.input.payloads
    [stored_result] = history.events[-1].workflow_execution_completed_event_attributes.result.payloads
    assert started_input.metadata["encryption-key-id"] == b"rotation-before"
    assert stored_result.metadata["encryption-key-id"] == b"rotation-after"

    # A pipeline left on the old key alone cannot read what the rotated worker wrote, and is told which key it lacks.
    with pytest.raises(UnknownEncryptionKeyError, match='key id "rotation-after", which is not configured here') as stale:
        await before.result(key)
    assert stale.value.key_id == "rotation-after"
