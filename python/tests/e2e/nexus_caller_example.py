"""A lender's pipeline workflow calling the product's ``connections`` Nexus service from its own namespace
(docs/nexus.md's Python example; python/tests/e2e/test_nexus_caller_e2e.py runs it): start a live
connection, wait for its challenge, answer it, and return the connection's typed result; and
``run_lender_pipeline``, which runs it on a worker in the lender's namespace whose data converter seals
under the lender's own key (the boundary key file the product was given for the endpoint)."""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow
from temporalio.client import Client
from temporalio.exceptions import NexusOperationError
from temporalio.worker import Worker

with workflow.unsafe.imports_passed_through():
    from aggregation_connections.contract import ChallengeAnswer, ConnectionResult, NexusAnswerInput, NexusStartInput, NexusStateInput
    from aggregation_connections.nexus import ConnectionsNexusService, caller_data_converter, handler_error_of, read_boundary_key


@workflow.defn
class LenderPipeline:
    @workflow.run
    async def run(self, endpoint: str, start: NexusStartInput, answers: dict[str, list[str]]) -> ConnectionResult:
        nexus = workflow.create_nexus_client(service=ConnectionsNexusService, endpoint=endpoint)
        connection = await nexus.start_operation(ConnectionsNexusService.start, start, schedule_to_close_timeout=timedelta(hours=1))
        ref = NexusStateInput(application_id=start.application_id)
        while True:
            try:
                state = await nexus.execute_operation(ConnectionsNexusService.state, ref)
            except NexusOperationError as error:
                refusal = handler_error_of(error)
                if refusal is None or refusal.type.name != "NOT_FOUND":  # NOT_FOUND: not started yet
                    raise
            else:
                if state.status == "AwaitingAnswer" and state.challenge_set is not None:
                    answer = ChallengeAnswer(challenge_set_id=state.challenge_set.id, responses=answers)
                    await nexus.execute_operation(ConnectionsNexusService.answer, NexusAnswerInput(application_id=start.application_id, answer=answer))
                elif state.status in ("Retrieving", "Completed", "Failed", "Cancelled"):
                    return await connection
            await workflow.sleep(timedelta(seconds=1))


async def run_lender_pipeline(
    address: str, namespace: str, key_file: str, endpoint: str, start: NexusStartInput, answers: dict[str, list[str]]
) -> ConnectionResult:
    client = await Client.connect(address, namespace=namespace, data_converter=caller_data_converter(read_boundary_key(key_file)))
    async with Worker(client, task_queue="lender-pipeline", workflows=[LenderPipeline]):
        return await client.execute_workflow(
            LenderPipeline.run, args=[endpoint, start, answers], id=f"pipeline-{start.application_id}", task_queue="lender-pipeline"
        )
