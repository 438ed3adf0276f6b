"""Why a worker could not answer for a workflow, when the reason is that its history cannot be read
(mirroring src/client/unreadable-history.ts).

A worker that cannot decode a history (its key version revoked, its key destroyed, a payload not
sealed) fails the query it was asked; the failure's message travels sealed, so the SDK's client
keeps only its placeholder (``WorkflowQueryFailedError: Encoded failure``), which names nothing. The
same payloads are just as unreadable here (a revocation is the KMS's, for every process), so the
client decodes the start event's payloads with its own codec and, if one is refused, that refusal
is the reason: the typed error with the key, its version or the payload's encoding."""

from __future__ import annotations

import temporalio.client
from temporalio.api.common.v1 import WorkflowExecution
from temporalio.api.workflowservice.v1 import GetWorkflowExecutionHistoryRequest

from ..codec.errors import PayloadDecryptionError


async def unreadable_history_error(client: temporalio.client.Client, workflow_id: str) -> PayloadDecryptionError | None:
    """The payload error that keeps the workflow's history unreadable with this client's codec, or None
    if its start event reads (or nothing can be said: no codec, Temporal or the KMS not answering)."""
    codec = client.data_converter.payload_codec
    if codec is None:
        return None
    try:
        page = await client.workflow_service.get_workflow_execution_history(
            GetWorkflowExecutionHistoryRequest(namespace=client.namespace, execution=WorkflowExecution(workflow_id=workflow_id), maximum_page_size=1)
        )
    except Exception:
        # Nothing to add: the caller keeps the error it has.
        return None
    if not page.history.events:
        return None
    for payload in page.history.events[0].workflow_execution_started_event_attributes.input.payloads:
        try:
            await codec.decode([payload])
        except PayloadDecryptionError as error:
            return error
        except Exception:
            # A KMS that cannot answer now says nothing about this history.
            return None
    return None


async def unreadable_query_error(client: temporalio.client.Client, workflow_id: str, error: BaseException) -> PayloadDecryptionError | None:
    """For a query that failed on the worker: the payload error when the history is why, else None."""
    if not isinstance(error, temporalio.client.WorkflowQueryFailedError):
        return None
    return await unreadable_history_error(client, workflow_id)
