"""The product's ``connections`` Nexus service (src/contract/nexus-connections.ts) as a nexus-rpc service
definition, typed with the contract's generated models: what a lender's workflow passes to
``workflow.create_nexus_client(service=ConnectionsNexusService, endpoint=...)``.

- ``start`` (asynchronous): starts the connection ``connection-<tenant>:<applicationId>`` and completes
  with its ConnectionResult; cancelling the operation cancels the connection.
- ``answer`` (synchronous): answers the connection's challenge set; its AnswerOutcome.
- ``state`` (synchronous): the connection's ConnectionState.
- ``refresh_book`` (``refreshBook``, asynchronous): refreshes the tenant's book of one cadence; its
  report (a JSON object: the book's report has no generated model).

The tenant is the one the product maps the caller's endpoint to, never the caller's to choose. A
refusal reaches the caller as a ``temporalio.exceptions.NexusOperationError`` whose cause is a
``nexusrpc.HandlerError``: BAD_REQUEST naming the field, UNAUTHORIZED, NOT_FOUND or CONFLICT
(``handler_error_of`` finds it)."""

from __future__ import annotations

from typing import Any

import nexusrpc
import temporalio.exceptions

from ..contract.models import (
    AnswerOutcome,
    ConnectionResult,
    ConnectionState,
    NexusAnswerInput,
    NexusRefreshBookInput,
    NexusStartInput,
    NexusStateInput,
)
from ..contract.names import CONNECTIONS_NEXUS_SERVICE_NAME


@nexusrpc.service(name=CONNECTIONS_NEXUS_SERVICE_NAME)
class ConnectionsNexusService:
    start: nexusrpc.Operation[NexusStartInput, ConnectionResult]
    answer: nexusrpc.Operation[NexusAnswerInput, AnswerOutcome]
    state: nexusrpc.Operation[NexusStateInput, ConnectionState]
    refresh_book: nexusrpc.Operation[NexusRefreshBookInput, dict[str, Any]] = nexusrpc.Operation(name="refreshBook")


def handler_error_of(error: BaseException) -> nexusrpc.HandlerError | None:
    """The product's refusal behind a failed operation (its ``type.name``: BAD_REQUEST, UNAUTHORIZED,
    NOT_FOUND, CONFLICT; its ``message``), or None when the operation failed otherwise."""
    if isinstance(error, temporalio.exceptions.NexusOperationError) and isinstance(error.cause, nexusrpc.HandlerError):
        return error.cause
    return None
