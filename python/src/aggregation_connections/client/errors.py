"""What the pipeline client raises: one class per thing that can go wrong, named as src/client/errors.ts
names them, the context in attributes (never a password or an answer), the underlying error as __cause__."""

from __future__ import annotations

import json
from typing import Literal

# The workflow's failure types (src/aggregator/failure-table.ts) and how Temporal ended a run otherwise
# (src/client/errors.ts's CONNECTION_END_TYPES), generated into contract/names.py; re-exported.
from ..contract.names import CONNECTION_END_TYPES, CONNECTION_FAILURE_TYPES as CONNECTION_FAILURE_TYPES

END_TYPES = CONNECTION_END_TYPES
#: What of the worker's answers did not parse: its state (query), result, first step or an answer's outcome (updates).
AnswerKind = Literal["state", "result", "first step", "answer outcome"]


class ConnectionClientError(Exception):
    """Base class: ``except ConnectionClientError`` catches every error of the client."""


class InvalidConnectionInputError(ConnectionClientError):
    """The connection input (or a list filter, or an option) failed validation; nothing was sent to Temporal."""

    def __init__(self, problems: str) -> None:
        super().__init__(f"invalid connection input: {problems}")
        #: "session.institution: must not be empty; products: ..."
        self.problems = problems


class InvalidBusinessKeyError(ConnectionClientError):
    def __init__(self, key: str, problem: str) -> None:
        super().__init__(f"invalid business key {json.dumps(key)}: {problem}")
        self.key = key
        self.problem = problem


class ConnectionNotFoundError(ConnectionClientError):
    """No connection with this workflow id (business key) exists in the namespace."""

    def __init__(self, workflow_id: str) -> None:
        super().__init__(f"no connection {json.dumps(workflow_id)}")
        self.workflow_id = workflow_id


class ConnectionAlreadyEndedError(ConnectionClientError):
    """A connection with this key already ended and starting it again was not asked for (``rerun``)."""

    def __init__(self, workflow_id: str) -> None:
        super().__init__(f"connection {json.dumps(workflow_id)} already ended; read its result, or start it again with rerun='always'")
        self.workflow_id = workflow_id


class AnswerRejectedError(ConnectionClientError):
    """An answer refused before it reached the service: by this client (``source='client'``) or by the
    workflow's update validator (``source='validator'``). Nothing was recorded in history."""

    def __init__(self, workflow_id: str, source: Literal["client", "validator"], problem: str, challenge_set_id: str | None = None) -> None:
        super().__init__(f"answer to {workflow_id} rejected: {problem}")
        self.workflow_id = workflow_id
        self.source = source
        self.problem = problem
        self.challenge_set_id = challenge_set_id


class ConnectionFailedError(ConnectionClientError):
    """The connection ended without a result. ``type`` is one of CONNECTION_FAILURE_TYPES or END_TYPES."""

    def __init__(self, workflow_id: str, type: str, reason: str, service_code: str | None = None) -> None:
        code = f", {service_code}" if service_code else ""
        super().__init__(f"connection {workflow_id} failed ({type}{code}): {reason}")
        self.workflow_id = workflow_id
        self.type = type
        self.reason = reason
        self.service_code = service_code


class TemporalUnavailableError(ConnectionClientError):
    """Temporal could not be reached, or refused a call (its gRPC status in the message)."""

    def __init__(self, address: str | None, message: str) -> None:
        super().__init__(message)
        self.address = address


class UnexpectedConnectionAnswerError(ConnectionClientError):
    """What the worker answered (a connection's state, result, first step or an answer's outcome) does not
    parse as the contract's model: a worker of another version, or a bug. ``field`` is the wire's path of
    the first problem (``challengeSet.attempt``); the JSON as received is ``value``."""

    def __init__(self, workflow_id: str, what: AnswerKind, field: str, problems: str, value: object) -> None:
        super().__init__(f"the {what} of connection {workflow_id} does not match the contract: {problems}")
        self.workflow_id = workflow_id
        self.what = what
        self.field = field
        self.problems = problems
        self.value = value
