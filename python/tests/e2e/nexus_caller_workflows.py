"""The lender's caller workflows of python/tests/e2e/test_nexus_caller_e2e.py beside the docs' example
(nexus_caller_example.py): each step's outcome returned for the test to look at, a cancelled operation,
and an operation expected to be refused (its handler error's type and message)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from temporalio import workflow
from temporalio.exceptions import CancelledError, NexusOperationError

with workflow.unsafe.imports_passed_through():
    from aggregation_connections.contract import (
        AnswerOutcome,
        ChallengeAnswer,
        ConnectionResult,
        ConnectionState,
        NexusAnswerInput,
        NexusStartInput,
        NexusStateInput,
    )
    from aggregation_connections.nexus import ConnectionsNexusService, handler_error_of


@dataclass
class CallerError:
    """How an operation failed: ``handler`` (the product's refusal, its type and message) or ``other``."""

    error: str
    type: str
    message: str


@dataclass
class ConnectedOutcome:
    awaiting: ConnectionState
    #: An answer to a challenge set that is not the one presented: refused.
    stale: CallerError
    answer: AnswerOutcome
    result: ConnectionResult


def _client(endpoint: str) -> workflow.NexusClient[ConnectionsNexusService]:
    return workflow.create_nexus_client(service=ConnectionsNexusService, endpoint=endpoint)


async def _await_challenge(endpoint: str, application_id: str) -> ConnectionState:
    nexus = _client(endpoint)
    while True:
        try:
            state = await nexus.execute_operation(ConnectionsNexusService.state, NexusStateInput(application_id=application_id))
        except NexusOperationError as error:
            # The relay starts the connection a moment after `start` returns: until then, NOT_FOUND.
            refusal = handler_error_of(error)
            if refusal is None or refusal.type.name != "NOT_FOUND":
                raise
        else:
            if state.status == "AwaitingAnswer" and state.challenge_set is not None:
                return state
            if state.status in ("Completed", "Failed", "Cancelled"):
                raise RuntimeError(f"connection ended {state.status} before a challenge")
        await workflow.sleep(timedelta(milliseconds=200))


async def _expect_error(endpoint: str, operation: str, input: Any) -> CallerError:
    nexus = _client(endpoint)
    try:
        # By name, with whatever input the test passes (a bad one included): no model checks it here.
        await nexus.execute_operation(operation, input, output_type=dict, schedule_to_close_timeout=timedelta(seconds=30))
    except NexusOperationError as error:
        refusal = handler_error_of(error)
        if refusal is not None:
            return CallerError(error="handler", type=refusal.type.name, message=refusal.message)
        return CallerError(error="other", type=type(error.cause).__name__, message=f"{error}; cause {error.cause}")
    return CallerError(error="other", type="", message="no error")


@workflow.defn
class CallerConnects:
    """Starts a live connection, answers its challenge through `answer` (a stale answer first), returns each step."""

    @workflow.run
    async def run(self, endpoint: str, start: NexusStartInput, answers: dict[str, list[str]]) -> ConnectedOutcome:
        nexus = _client(endpoint)
        operation = await nexus.start_operation(ConnectionsNexusService.start, start, schedule_to_close_timeout=timedelta(minutes=2))
        awaiting = await _await_challenge(endpoint, start.application_id)
        assert awaiting.challenge_set is not None
        stale = await _expect_error(
            endpoint,
            "answer",
            {"applicationId": start.application_id, "answer": {"challengeSetId": f"{awaiting.challenge_set.id}-stale", "responses": answers}},
        )
        given = ChallengeAnswer(challenge_set_id=awaiting.challenge_set.id, responses=answers)
        answer = await nexus.execute_operation(ConnectionsNexusService.answer, NexusAnswerInput(application_id=start.application_id, answer=given))
        result = await operation
        return ConnectedOutcome(awaiting=awaiting, stale=stale, answer=answer, result=result)


@workflow.defn
class CallerCancels:
    """Starts a connection, waits for its challenge, then cancels the operation: what the caller sees."""

    @workflow.run
    async def run(self, endpoint: str, start: NexusStartInput) -> str:
        nexus = _client(endpoint)
        operation = await nexus.start_operation(ConnectionsNexusService.start, start, schedule_to_close_timeout=timedelta(minutes=2))
        await _await_challenge(endpoint, start.application_id)
        operation.cancel()
        try:
            await operation
        except NexusOperationError as error:
            if isinstance(error.cause, CancelledError):
                return f"cancelled: {type(error).__name__} ({type(error.cause).__name__})"
            raise
        return "completed"


@workflow.defn
class CallerExpectsError:
    """Calls one operation by name with a raw input, expecting a handler error: its type and message."""

    @workflow.run
    async def run(self, endpoint: str, operation: str, input: dict[str, Any]) -> CallerError:
        return await _expect_error(endpoint, operation, input)
