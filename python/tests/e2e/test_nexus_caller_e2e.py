"""The product's ``connections`` Nexus service called from Python, as a lender's platform team would: caller
workflows (nexus_caller_example.py, nexus_caller_workflows.py) in the lender's own namespace, on a worker
whose data converter seals under the lender's own key (aggregation_connections.nexus), reaching the
product's connections through a Nexus endpoint. test/nexus/python-caller.test.ts starts the product's side
(the dev server, the connection stack, the Nexus worker given the lender's boundary key file, the endpoint
and one mapped to no tenant) and runs this module with them in NEXUS_E2E_* and, for the checks of the
product's side only, the product's TEMPORAL_* and PAYLOAD_ENCRYPTION_KEY*. Without NEXUS_E2E_ENDPOINT it is
skipped (the unit run of test/python/pytest.test.ts)."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import re
import secrets
from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any

import pydantic
import pytest
import temporalio.client
from google.protobuf.message import Message
from temporalio.api.common.v1 import Payload
from temporalio.worker import Worker

from aggregation_connections.client import ConnectionsClient, connection_key
from aggregation_connections.codec import EncryptionCodec, EncryptionKeys
from aggregation_connections.codec.payload_format import KEY_ID_METADATA_KEY, is_encrypted, metadata_text
from aggregation_connections.contract import AnswerOutcomeAccepted, ConnectionResult, ConnectionState, NexusStartInput, NexusStateInput
from aggregation_connections.nexus import caller_data_converter, read_boundary_key

from .nexus_caller_example import run_lender_pipeline
from .nexus_caller_workflows import CallerCancels, CallerConnects, CallerError, CallerExpectsError, ConnectedOutcome

ENDPOINT = os.environ.get("NEXUS_E2E_ENDPOINT", "")
pytestmark = [pytest.mark.e2e, pytest.mark.skipif(ENDPOINT == "", reason="end-to-end: run by test/nexus/python-caller.test.ts (NEXUS_E2E_ENDPOINT unset)")]

WORKFLOWS = [CallerConnects, CallerCancels, CallerExpectsError]


def env(name: str) -> str:
    return os.environ.get(name, "")


def scenario() -> dict[str, Any]:
    """The sandbox's security_question scenario: institution, username, password and its answers (prompt → answers)."""
    loaded: dict[str, Any] = json.loads(env("NEXUS_E2E_SCENARIO") or "{}")
    return loaded


def live_start(application_id: str) -> NexusStartInput:
    given = scenario()
    return NexusStartInput.model_validate(
        {
            "applicationId": application_id,
            "connection": {
                "session": {"kind": "live", "institution": given["institution"], "username": given["username"], "password": given["password"]},
                "products": {"accountsDetail": {}},
                "timing": {"pollIntervalMs": 100, "pollTimeoutMs": 20_000, "answerTimeoutMs": 60_000},
            },
        }
    )


def app_id() -> str:
    return f"app-{secrets.token_hex(4)}"


def pipeline_id() -> str:
    return f"pipeline-{secrets.token_hex(4)}"


class Lender:
    """The lender's side: its client (its namespace, its converter) and the task queue of its worker."""

    def __init__(self, client: temporalio.client.Client, task_queue: str) -> None:
        self.client = client
        self.task_queue = task_queue

    async def run(self, workflow: Any, *args: Any, workflow_id: str | None = None) -> Any:
        return await self.client.execute_workflow(
            workflow, args=list(args), id=workflow_id or pipeline_id(), task_queue=self.task_queue, execution_timeout=timedelta(minutes=2)
        )


@pytest.fixture
async def lender() -> AsyncIterator[Lender]:
    converter = caller_data_converter(read_boundary_key(env("NEXUS_E2E_KEY_FILE")))
    client = await temporalio.client.Client.connect(env("TEMPORAL_ADDRESS"), namespace=env("NEXUS_E2E_CALLER_NAMESPACE"), data_converter=converter)
    task_queue = f"lender-pipeline-{secrets.token_hex(4)}"
    # A workflow that raises fails at once (its error in the test's output), rather than retrying its task until the timeout.
    async with Worker(client, task_queue=task_queue, workflows=WORKFLOWS, workflow_failure_exception_types=[Exception]):
        yield Lender(client, task_queue)


@pytest.fixture
async def product() -> AsyncIterator[ConnectionsClient]:
    """The product's own client (its namespace and key): to see what became of the connections."""
    client = await ConnectionsClient.connect()
    yield client
    await client.close()


def tenant() -> str:
    return env("NEXUS_E2E_TENANT")


def expect_refusal(outcome: CallerError, type: str, message: str) -> None:
    assert outcome.error == "handler", f"a handler error, not {outcome}"
    assert outcome.type == type, outcome.message
    assert re.search(message, outcome.message), outcome.message


async def test_starts_a_live_connection_answers_its_challenge_and_receives_the_typed_result(lender: Lender, product: ConnectionsClient) -> None:
    application_id = app_id()
    given = scenario()
    outcome = await lender.run(CallerConnects.run, ENDPOINT, live_start(application_id), given["answers"])
    assert isinstance(outcome, ConnectedOutcome)
    assert isinstance(outcome.awaiting, ConnectionState)
    assert outcome.awaiting.status == "AwaitingAnswer" and outcome.awaiting.customer_id == tenant()
    assert outcome.awaiting.challenge_set is not None and outcome.awaiting.challenge_set.challenges[0].prompt in given["answers"]
    expect_refusal(outcome.stale, "BAD_REQUEST", r"^answer refused: ")
    assert isinstance(outcome.answer, AnswerOutcomeAccepted), outcome.answer
    assert isinstance(outcome.result, ConnectionResult)
    assert outcome.result.customer_id == tenant()
    assert outcome.result.accounts_detail is not None, "the accounts the connection retrieved"
    # The connection is the product's, under the endpoint's tenant's business key.
    assert (await product.state(connection_key(tenant(), application_id))).status == "Completed"


async def test_cancelling_the_operation_cancels_the_connection(lender: Lender, product: ConnectionsClient) -> None:
    application_id = app_id()
    seen = await lender.run(CallerCancels.run, ENDPOINT, live_start(application_id))
    assert seen.startswith("cancelled"), seen
    key = connection_key(tenant(), application_id)
    handle = product.client.get_workflow_handle(key)
    for _ in range(150):
        if (await handle.describe()).status == temporalio.client.WorkflowExecutionStatus.CANCELED:
            break
        await asyncio.sleep(0.2)
    assert (await handle.describe()).status == temporalio.client.WorkflowExecutionStatus.CANCELED
    assert (await product.state(key)).status == "Cancelled"


async def test_a_bad_input_is_refused_with_bad_request_naming_the_field(lender: Lender) -> None:
    bad = live_start(app_id()).to_wire()
    bad["connection"]["session"]["username"] = ""
    expect_refusal(await lender.run(CallerExpectsError.run, ENDPOINT, "start", bad), "BAD_REQUEST", r"connection\.session\.username: must not be empty")
    # The generated model refuses it before it leaves the workflow; sent raw, the handler names the field.
    with pytest.raises(pydantic.ValidationError):
        NexusStateInput(application_id="has a space")
    no_id = await lender.run(CallerExpectsError.run, ENDPOINT, "state", {"applicationId": "has a space"})
    expect_refusal(no_id, "BAD_REQUEST", r"applicationId: must start with a letter or digit")


async def test_another_tenant_and_an_unmapped_endpoint_are_refused_with_unauthorized(lender: Lender) -> None:
    other = live_start(app_id()).to_wire()
    other["connection"]["customerId"] = "another-lender"
    expect_refusal(await lender.run(CallerExpectsError.run, ENDPOINT, "start", other), "UNAUTHORIZED", r'not "another-lender"')
    state = {"applicationId": "app-1", "customerId": "another-lender"}
    expect_refusal(await lender.run(CallerExpectsError.run, ENDPOINT, "state", state), "UNAUTHORIZED", r'not "another-lender"')
    answer = {**state, "answer": {"challengeSetId": "1", "responses": {"q": ["a"]}}}
    expect_refusal(await lender.run(CallerExpectsError.run, ENDPOINT, "answer", answer), "UNAUTHORIZED", r'not "another-lender"')
    unmapped = await lender.run(CallerExpectsError.run, env("NEXUS_E2E_UNMAPPED_ENDPOINT"), "state", {"applicationId": "app-1"})
    expect_refusal(unmapped, "UNAUTHORIZED", r"is mapped to no tenant")


# Where the SDKs write payloads in clear that no codec sees: headers, and the core's marker bookkeeping.
_NOT_CODEC_PATH = re.compile(r"(^|\.)header\.|marker_recorded_event_attributes\.details\[(data|patch-data)\]")


def payloads_in(message: Message, path: str = "") -> list[tuple[str, Payload]]:
    """Every payload of a history event that passed through a codec (search attributes, headers and markers' bookkeeping excepted)."""
    if isinstance(message, Payload):
        return [] if _NOT_CODEC_PATH.search(path) else [(path, message)]
    found: list[tuple[str, Payload]] = []
    for field, value in message.ListFields():
        if field.message_type is None or field.name == "search_attributes":
            continue
        where = f"{path}.{field.name}" if path else field.name
        if field.message_type.GetOptions().map_entry:
            for key, child in value.items():
                if isinstance(child, Message):
                    found += payloads_in(child, f"{where}[{key}]")
        elif field.is_repeated:
            for index, child in enumerate(value):
                found += payloads_in(child, f"{where}[{index}]")
        else:
            found += payloads_in(value, where)
    return found


async def raw_payloads(namespace: str, workflow_id: str) -> list[tuple[str, Payload]]:
    """The payloads of a history as Temporal stores them (a client without a codec)."""
    raw = await temporalio.client.Client.connect(env("TEMPORAL_ADDRESS"), namespace=namespace)
    history = await raw.get_workflow_handle(workflow_id).fetch_history()
    return [(f"event {event.event_id} {path}", payload) for event in history.events for path, payload in payloads_in(event)]


async def opens(codec: EncryptionCodec, payload: Payload) -> bool:
    try:
        await codec.decode([payload])
    except Exception:
        return False
    return True


async def test_each_sides_payloads_stay_under_its_own_key() -> None:
    caller_keys = read_boundary_key(env("NEXUS_E2E_KEY_FILE"))
    product_keys = EncryptionKeys(key_id=env("PAYLOAD_ENCRYPTION_KEY_ID"), key=base64.b64decode(env("PAYLOAD_ENCRYPTION_KEY")))
    caller_codec, product_codec = EncryptionCodec(caller_keys), EncryptionCodec(product_keys)
    application_id = app_id()
    # The docs' example, end to end: its own worker and client in the lender's namespace, with the lender's key.
    result = await run_lender_pipeline(
        env("TEMPORAL_ADDRESS"), env("NEXUS_E2E_CALLER_NAMESPACE"), env("NEXUS_E2E_KEY_FILE"), ENDPOINT, live_start(application_id), scenario()["answers"]
    )
    assert isinstance(result, ConnectionResult) and result.customer_id == tenant()
    assert result.accounts_detail is not None
    workflow_id = f"pipeline-{application_id}"

    connection = await raw_payloads(env("TEMPORAL_NAMESPACE"), connection_key(tenant(), application_id))
    pipeline = await raw_payloads(env("NEXUS_E2E_CALLER_NAMESPACE"), workflow_id)
    assert len(connection) > 5 and len(pipeline) > 5, f"payloads found: {len(connection)} in the connection's history, {len(pipeline)} in the caller's"
    for path, payload in connection:
        assert is_encrypted(payload), f"{path}: sealed"
        assert metadata_text(payload.metadata, KEY_ID_METADATA_KEY) == product_keys.key_id, f"{path}: under the product's key"
        assert not await opens(caller_codec, payload), f"{path}: the caller's key opens it"
        assert await opens(product_codec, payload), f"{path}: the product's key opens it"
    for path, payload in pipeline:
        assert is_encrypted(payload), f"{path}: sealed"
        assert metadata_text(payload.metadata, KEY_ID_METADATA_KEY) == caller_keys.key_id, f"{path}: under the caller's key"
        assert not await opens(product_codec, payload), f"{path}: the product's key opens it"
        assert await opens(caller_codec, payload), f"{path}: the caller's key opens it"
    # The relay between them (the product's namespace): what crosses is the caller's, what it hands the connection the product's.
    relay = await raw_payloads(env("TEMPORAL_NAMESPACE"), env("NEXUS_E2E_RELAY_ID_PREFIX") + application_id)
    assert {metadata_text(payload.metadata, KEY_ID_METADATA_KEY) for _, payload in relay} == {caller_keys.key_id, product_keys.key_id}
