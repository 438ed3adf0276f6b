"""The Python client end to end: a real Temporal dev server, the TypeScript worker and the sandbox,
started by test/python/python-e2e.test.ts, which runs this module with the stack's addresses in
TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_TASK_QUEUE, the worker's key in PAYLOAD_ENCRYPTION_KEY
(+ _KEY_ID) and the stack's tenant in E2E_CUSTOMER_ID. Without E2E_CUSTOMER_ID (the unit run of
test/python/pytest.test.ts) it is skipped."""

from __future__ import annotations

import os
import re
import secrets
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import temporalio.client

from aggregation_connections.client import (
    AnswerRejectedError,
    ConnectionFailedError,
    ConnectionNotFoundError,
    ConnectionsClient,
    InvalidBusinessKeyError,
    InvalidConnectionInputError,
    connection_key,
)
from aggregation_connections.contract import AnswerOutcomeAccepted, ConnectionInput, FirstStepChallenge, FirstStepEnded
from aggregation_connections.settings import client_settings_from_env, codec_from_env

from ..openbao import REPO

CUSTOMER_ID = os.environ.get("E2E_CUSTOMER_ID", "")
pytestmark = [pytest.mark.e2e, pytest.mark.skipif(CUSTOMER_ID == "", reason="end-to-end: run by test/python/python-e2e.test.ts (E2E_CUSTOMER_ID unset)")]

SANDBOX_PASSWORD = "Everyday"  # every sandbox scenario's (docs/sandbox.md)


def live_input(username: str, password: str = SANDBOX_PASSWORD) -> dict[str, Any]:
    return {
        "customerId": CUSTOMER_ID,
        "session": {"kind": "live", "institution": "SandboxBank", "username": username, "password": password},
        "products": {"accountsDetail": {"WithTransactions": True}},
        "timing": {"pollIntervalMs": 50},
    }


def fresh_key(name: str) -> str:
    return connection_key(CUSTOMER_ID, f"{name}-{secrets.token_hex(4)}")


@pytest.fixture
async def client() -> AsyncIterator[ConnectionsClient]:
    yield await ConnectionsClient.connect()  # everything from the environment, as a pipeline would


async def test_a_live_connection_with_a_challenge_answered_from_python(client: ConnectionsClient) -> None:
    key = fresh_key("py-live")
    first = await client.start_and_await_first_step(key, ConnectionInput.model_validate(live_input("security_question")))
    assert isinstance(first, FirstStepChallenge), first
    [challenge] = first.challenge_set.challenges
    assert challenge.prompt == "What city were you born in?"

    # Started as the TypeScript client starts it: live class first, the tenant as fairness key.
    state = await client.state(key)
    assert state.status == "AwaitingAnswer"
    assert state.challenge_set is not None and state.challenge_set.challenges[0].prompt == challenge.prompt
    assert state.priority is not None and state.priority.to_wire() == {"key": 1, "fairnessKey": CUSTOMER_ID, "fairnessWeight": 1}
    listed = await client.list(status="AwaitingAnswer", customer_id=CUSTOMER_ID)
    assert key in [summary.workflow_id for summary in listed]
    [summary] = [summary for summary in listed if summary.workflow_id == key]
    assert (summary.institution, summary.customer_id, summary.execution_status) == ("SandboxBank", CUSTOMER_ID, "RUNNING")

    # A prompt not asked: refused here; a blank answer: refused by the workflow's validator.
    with pytest.raises(AnswerRejectedError) as not_asked:
        await client.answer(key, {"What is your pet's name?": ["Biscuit"]})
    assert not_asked.value.source == "client" and "was not asked" in not_asked.value.problem
    with pytest.raises(AnswerRejectedError) as blank:
        await client.answer(key, {challenge.prompt: ["  "]})
    assert blank.value.source == "validator" and "empty" in blank.value.problem, blank.value.problem

    outcome = await client.answer(key, {challenge.prompt: ["Montreal"]})
    assert isinstance(outcome, AnswerOutcomeAccepted), outcome
    result = await client.result(key)
    assert result.customer_id == CUSTOMER_ID and result.login_id
    assert result.accounts_detail is not None and len(result.accounts_detail.accounts) > 0
    assert (await client.state(key)).retrieved == ["accountsDetail"]

    # Temporal saw only ciphertext: the input in history is the worker's codec's format.
    raw = await temporalio.client.Client.connect(client.client.service_client.config.target_host, namespace=client.namespace)
    history = await raw.get_workflow_handle(key).fetch_history()
    started = history.events[0].workflow_execution_started_event_attributes
    [payload] = started.input.payloads
    assert payload.metadata["encoding"] == b"binary/encrypted"
    assert payload.metadata["encryption-key-id"] == os.environ["PAYLOAD_ENCRYPTION_KEY_ID"].encode()


async def test_a_failure_comes_back_typed_with_its_failure_type(client: ConnectionsClient) -> None:
    key = fresh_key("py-bad-password")
    first = await client.start_and_await_first_step(key, live_input("invalid_password"))
    assert isinstance(first, FirstStepEnded), first
    with pytest.raises(ConnectionFailedError) as failed:
        await client.result(key)
    assert failed.value.type == "InvalidCredentials", failed.value
    assert failed.value.service_code == "INVALID_PASSWORD", failed.value
    assert failed.value.workflow_id == key


async def test_a_pipeline_configured_by_a_temporal_toml_profile_reaches_the_worker(tmp_path: Path) -> None:
    """Temporal's address and namespace from a profile, as a team using the temporal CLI has them; the rest as before."""
    config = tmp_path / "temporal.toml"
    config.write_text(f'[profile.e2e]\naddress = "{os.environ["TEMPORAL_ADDRESS"]}"\nnamespace = "{os.environ.get("TEMPORAL_NAMESPACE", "default")}"\n')
    env = {name: value for name, value in os.environ.items() if name not in ("TEMPORAL_ADDRESS", "TEMPORAL_NAMESPACE")}
    settings = client_settings_from_env({**env, "TEMPORAL_CONFIG_FILE": str(config), "TEMPORAL_PROFILE": "e2e"})
    assert settings.from_env_config == {"address": f'profile "e2e" of {config}', "namespace": f'profile "e2e" of {config}'}
    client = await ConnectionsClient.connect(settings, codec_from_env(env))
    key = fresh_key("py-profile")
    first = await client.start_and_await_first_step(key, live_input("invalid_password"))
    assert isinstance(first, FirstStepEnded), first
    with pytest.raises(ConnectionFailedError, match="InvalidCredentials"):
        await client.result(key)


async def test_cancel_ends_the_connection_as_cancelled(client: ConnectionsClient) -> None:
    key = await client.start(fresh_key("py-cancel"), live_input("security_question"))
    await client.cancel(key)
    with pytest.raises(ConnectionFailedError) as failed:
        await client.result(key)
    assert failed.value.type == "Cancelled"


async def test_bad_input_is_refused_before_anything_is_sent(client: ConnectionsClient) -> None:
    key = fresh_key("py-bad-input")
    bad = live_input("security_question")
    bad["session"]["institution"] = ""
    del bad["products"]
    with pytest.raises(InvalidConnectionInputError) as invalid:
        await client.start(key, bad)
    assert "session.live.institution" in invalid.value.problems and "products" in invalid.value.problems, invalid.value.problems
    with pytest.raises(InvalidBusinessKeyError, match="the input's customerId"):
        await client.start(connection_key("someone-else", "app-1"), live_input("security_question"))
    with pytest.raises(InvalidConnectionInputError, match="priority must be an integer from 1"):
        await client.start(key, live_input("security_question"), priority=9)
    # Nothing reached Temporal under that key.
    with pytest.raises(ConnectionNotFoundError):
        await client.state(key)


def test_the_docs_client_example_runs_against_the_worker() -> None:
    """docs/python-pipeline.md's client example, as shown, its end user answering on standard input."""
    text = (REPO / "docs/python-pipeline.md").read_text("utf-8")
    example = re.search(r"## The client.*?```python\n(.*?)```", text, re.DOTALL)
    assert example is not None, "docs/python-pipeline.md has a ```python block under ## The client"
    env = {**os.environ, "AGGREGATOR_CUSTOMER_ID": CUSTOMER_ID, "PYTHONPATH": str(REPO / "python/src")}
    result = subprocess.run([sys.executable, "-c", example.group(1)], env=env, input="Montreal\n", capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, f"exit {result.returncode}; stdout: {result.stdout!r}; stderr: {result.stderr}"
    assert re.fullmatch(r"What city were you born in\? login [0-9a-f-]{36} with \d+ accounts\n", result.stdout), result.stdout
