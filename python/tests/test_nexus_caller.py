"""aggregation_connections.nexus offline: the service definition names the TypeScript service's operations,
the caller's converter sends the models under their wire names sealed under the caller's key and reads the
worker's JSON back into them, and the boundary key file is the product's format."""

from __future__ import annotations

import base64
from pathlib import Path

import nexusrpc
import pytest
import temporalio.exceptions
from temporalio.api.common.v1 import Payload

from aggregation_connections.codec.payload_format import KEY_ID_METADATA_KEY, is_encrypted, metadata_text
from aggregation_connections.contract import (
    AnswerOutcome,
    AnswerOutcomeAccepted,
    ChallengeAnswer,
    ConnectionResult,
    NexusAnswerInput,
    NexusStartInput,
    NexusStateInput,
)
from aggregation_connections.contract.names import CONNECTIONS_NEXUS_OPERATIONS, CONNECTIONS_NEXUS_SERVICE_NAME
from aggregation_connections.nexus import (
    BoundaryKeyFileError,
    ConnectionsNexusService,
    boundary_key_text,
    caller_data_converter,
    handler_error_of,
    new_boundary_key,
    parse_boundary_key,
    read_boundary_key,
)


def test_the_service_definition_is_the_typescript_services_name_and_operations() -> None:
    definition = nexusrpc.get_service_definition(ConnectionsNexusService)
    assert definition is not None and definition.name == CONNECTIONS_NEXUS_SERVICE_NAME
    assert sorted(operation.name for operation in definition.operation_definitions.values()) == sorted(CONNECTIONS_NEXUS_OPERATIONS)
    operations = definition.operation_definitions
    assert (operations["start"].input_type, operations["start"].output_type) == (NexusStartInput, ConnectionResult)
    assert operations["answer"].input_type is NexusAnswerInput
    assert operations["answer"].output_type == AnswerOutcome
    assert operations["state"].input_type is NexusStateInput


async def test_the_callers_converter_sends_wire_names_sealed_under_the_callers_key_and_reads_the_models_back() -> None:
    keys = new_boundary_key("lender-key")
    converter = caller_data_converter(keys)
    answer = NexusAnswerInput(application_id="app-1", answer=ChallengeAnswer(challenge_set_id="set-1", responses={"What city?": ["Montreal"]}))
    [plain] = converter.payload_converter.to_payloads([answer])
    # The worker's field names, and nothing that was not set (customerId: the endpoint's tenant).
    assert plain.data == b'{"applicationId":"app-1","answer":{"challengeSetId":"set-1","responses":{"What city?":["Montreal"]}}}'
    [sealed] = await converter.encode([answer])
    assert is_encrypted(sealed) and metadata_text(sealed.metadata, KEY_ID_METADATA_KEY) == "lender-key"
    assert await converter.decode([sealed], [NexusAnswerInput]) == [answer]
    # What the handler returns, as its JSON: the operation's output type (a union told apart by `outcome`).
    accepted = Payload(metadata={"encoding": b"json/plain"}, data=b'{"outcome":"accepted","status":"Retrieving"}')
    # A type hint need not be a class: the union (an Annotated alias) is what the service's `answer` returns.
    [outcome] = converter.payload_converter.from_payloads([accepted], [AnswerOutcome])  # type: ignore[list-item]
    assert isinstance(outcome, AnswerOutcomeAccepted) and outcome.status == "Retrieving"


def test_the_boundary_key_file_is_one_line_of_key_id_and_base64(tmp_path: Path) -> None:
    keys = new_boundary_key("lender-key")
    path = tmp_path / "lender.key"
    path.write_text(boundary_key_text(keys))
    assert path.read_text() == f"lender-key:{base64.b64encode(keys.key).decode()}\n"
    assert read_boundary_key(path) == keys
    # The product takes the last colon as the separator: a key id may hold colons.
    assert parse_boundary_key(f"team:lender:{base64.b64encode(keys.key).decode()}").key_id == "team:lender"
    for bad in ["", "no-colon", f":{base64.b64encode(keys.key).decode()}", "lender:c2hvcnQ=", "lender:not base64!"]:
        with pytest.raises(BoundaryKeyFileError, match="<keyId>:<base64 of 32 bytes>"):
            parse_boundary_key(bad)
    with pytest.raises(BoundaryKeyFileError, match="cannot read"):
        read_boundary_key(tmp_path / "missing.key")


def test_handler_error_of_finds_the_products_refusal() -> None:
    refusal = nexusrpc.HandlerError("invalid input to state: applicationId: must not be empty", type=nexusrpc.HandlerErrorType.BAD_REQUEST)
    failed = temporalio.exceptions.NexusOperationError(
        "nexus operation completed unsuccessfully", scheduled_event_id=5, endpoint="e", service="connections", operation="state", operation_token=""
    )
    failed.__cause__ = refusal
    assert handler_error_of(failed) is refusal
    assert handler_error_of(RuntimeError("other")) is None
