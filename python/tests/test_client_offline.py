"""The client's parts that need no server: its settings, business keys, visibility queries and how it
reads the worker's state, result, first step and answers' outcomes, as the TypeScript side makes them
(the verbs against a real worker: tests/e2e/, run by test/python/python-e2e.test.ts)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import pydantic
import pytest
import temporalio.client

from aggregation_connections.client import (
    InvalidBusinessKeyError,
    InvalidConnectionInputError,
    UnexpectedConnectionAnswerError,
    connection_key,
    parse_business_key,
    visibility_query,
)
from aggregation_connections.client.answers import parse_answer
from aggregation_connections.client.connections import ConnectionsClient, _answer_problems
from aggregation_connections.contract import (
    AnswerOutcome,
    AnswerOutcomeAccepted,
    AnswerOutcomeEnded,
    AnswerOutcomeRejected,
    AnswerOutcomeRestarted,
    ConnectionResult,
    ConnectionState,
    FirstStep,
    FirstStepChallenge,
    FirstStepEnded,
    FirstStepSessionOpen,
)
from aggregation_connections.settings import ConfigError, client_settings_from_env


def test_reads_the_client_identity_its_requests_carry_and_refuses_one_too_long() -> None:
    assert client_settings_from_env({}).identity is None
    assert client_settings_from_env({"TEMPORAL_CLIENT_IDENTITY": " pipeline:loan-origination "}).identity == "pipeline:loan-origination"
    with pytest.raises(ConfigError, match=r"TEMPORAL_CLIENT_IDENTITY: must be at most 255 characters, got 256"):
        client_settings_from_env({"TEMPORAL_CLIENT_IDENTITY": "x" * 256})


def test_settings_default_as_the_typescript_client() -> None:
    settings = client_settings_from_env({})
    assert (settings.address, settings.namespace, settings.task_queue, settings.customer_id) == (
        "localhost:7233",
        "default",
        "aggregation-connections",
        "demo-lender",
    )
    assert settings.tls is None and settings.api_key is None
    assert dict(settings.priority.keys) == {"live": 1, "pipeline": 2, "scheduled": 3, "maintenance": 4}
    assert settings.priority.weight_of("anyone") == 1


def test_settings_read_the_variables(tmp_path: Path) -> None:
    ca = tmp_path / "ca.pem"
    ca.write_text("-----BEGIN CERTIFICATE-----\n")
    settings = client_settings_from_env(
        {
            "TEMPORAL_ADDRESS": "temporal.bank.internal:7233",
            "TEMPORAL_NAMESPACE": "lending",
            "TEMPORAL_TASK_QUEUE": "connections",
            "TEMPORAL_TLS_CA_PATH": str(ca),
            "AGGREGATOR_CUSTOMER_ID": "lender-1",
            "PRIORITY_PIPELINE": "4",
            "TENANT_WEIGHTS": "lender-1:3, *:0.5",
        }
    )
    assert (settings.address, settings.namespace, settings.task_queue, settings.customer_id) == (
        "temporal.bank.internal:7233",
        "lending",
        "connections",
        "lender-1",
    )
    assert settings.tls is not None and settings.tls.ca_path == ca
    assert settings.priority.keys["pipeline"] == 4
    assert (settings.priority.weight_of("lender-1"), settings.priority.weight_of("other")) == (3, 0.5)
    # An API key implies TLS, as in the SDKs; TEMPORAL_TLS=false turns it off.
    assert client_settings_from_env({"TEMPORAL_API_KEY": "k"}).tls is not None
    assert client_settings_from_env({"TEMPORAL_API_KEY": "k", "TEMPORAL_TLS": "false"}).tls is None


def test_bad_settings_name_each_variable(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as error:
        client_settings_from_env(
            {
                "TEMPORAL_ADDRESS": "no-port",
                "TEMPORAL_TLS": "maybe",
                "TEMPORAL_TLS_CERT_PATH": str(tmp_path / "missing.pem"),
                "PRIORITY_LIVE": "0",
                "TENANT_WEIGHTS": "lender-1:5000",
            }
        )
    problems = "\n".join(error.value.problems)
    for name in (
        "TEMPORAL_ADDRESS: must be host:port",
        "TEMPORAL_TLS: must be true or false",
        "TEMPORAL_TLS_CERT_PATH: cannot read",
        "TEMPORAL_TLS_CERT_PATH: TEMPORAL_TLS_CERT_PATH and TEMPORAL_TLS_KEY_PATH go together",
        "PRIORITY_LIVE: must be an integer from 1",
        "TENANT_WEIGHTS: 'lender-1:5000'",
    ):
        assert name in problems, problems


def test_business_keys_as_the_typescript_client_builds_them() -> None:
    assert connection_key("demo-lender", "app-123") == "connection-demo-lender:app-123"
    assert parse_business_key("connection-demo-lender:app-123", "demo-lender") == "connection-demo-lender:app-123"
    with pytest.raises(InvalidBusinessKeyError, match="applicationId must start with a letter or digit"):
        connection_key("demo-lender", "-app")
    with pytest.raises(InvalidBusinessKeyError, match='must start with "connection-other:"'):
        parse_business_key("connection-demo-lender:app-123", "other")
    with pytest.raises(InvalidBusinessKeyError, match="must look like connection-<customerId>:<applicationId>"):
        parse_business_key("demo-lender-app-123", "demo-lender")
    # Each part at most 64, as src/contract/ids.ts says (the key's own limit is 200).
    with pytest.raises(InvalidBusinessKeyError, match=r"\(each start with a letter or digit .* \(at most 64\)\)"):
        parse_business_key(f"connection-demo-lender:{'a' * 65}", "demo-lender")
    assert parse_business_key(f"connection-demo-lender:{'a' * 64}", "demo-lender").endswith("a" * 64)


def test_visibility_queries_quote_their_values() -> None:
    assert visibility_query() == 'WorkflowType = "connectionWorkflow"'
    assert (
        visibility_query(status="AwaitingAnswer", customer_id='say "hi"\\')
        == 'WorkflowType = "connectionWorkflow" AND ConnectionStatus = "AwaitingAnswer" AND CustomerId = "say \\"hi\\"\\\\" AND ExecutionStatus = "Running"'
    )
    assert visibility_query(status="Completed") == 'WorkflowType = "connectionWorkflow" AND ConnectionStatus = "Completed"'
    with pytest.raises(InvalidConnectionInputError, match="control characters"):
        visibility_query(institution="a\nb")


# What the connectionState query answers while a challenge waits (as the worker writes it).
AWAITING_STATE = {
    "status": "AwaitingAnswer",
    "mode": "live",
    "customerId": "demo-lender",
    "institution": "SandboxBank",
    "requestId": "3f0c1d2e-4b5a-4c6d-8e7f-901a2b3c4d5e",
    "challengeSet": {
        "id": "1",
        "challenges": [
            {"Type": "QuestionAndAnswer", "Prompt": "What city were you born in?"},
            {"Type": "TextOrCall", "Prompt": "How should we reach you?", "Iterables": ["Text 555-0100", "Call 555-0100"]},
        ],
        "presentedAt": "2026-11-27T05:00:00.000Z",
        "attempt": 1,
        "answerBy": "2026-11-27T05:15:00.000Z",
    },
    "totalPolls": 0,
    "sessionRestarts": 0,
    "retrieved": [],
    "priority": {"key": 1, "fairnessKey": "demo-lender", "fairnessWeight": 1},
    "startedAt": "2026-11-27T05:00:00.000Z",
    "updatedAt": "2026-11-27T05:00:00.000Z",
}


def test_a_state_reads_as_the_generated_model_and_back_to_the_wire() -> None:
    state = parse_answer(ConnectionState, AWAITING_STATE, "demo-lender/app-1", "state")
    assert state.status == "AwaitingAnswer" and state.customer_id == "demo-lender"
    assert state.challenge_set is not None and state.challenge_set.challenges[0].prompt == "What city were you born in?"
    assert state.priority is not None and state.priority.fairness_key == "demo-lender"
    assert state.to_wire() == AWAITING_STATE


def test_a_state_off_the_contract_raises_naming_the_field() -> None:
    bad = {**AWAITING_STATE, "challengeSet": {**AWAITING_STATE["challengeSet"], "attempt": "first"}}  # type: ignore[dict-item]
    with pytest.raises(UnexpectedConnectionAnswerError) as raised:
        parse_answer(ConnectionState, bad, "demo-lender/app-1", "state")
    assert raised.value.field == "challengeSet.attempt" and raised.value.what == "state"
    assert "challengeSet.attempt" in str(raised.value) and raised.value.value is bad
    with pytest.raises(UnexpectedConnectionAnswerError, match="status"):
        parse_answer(ConnectionState, {**AWAITING_STATE, "status": "Sleeping"}, "demo-lender/app-1", "state")


def test_a_result_reads_its_products_as_models() -> None:
    wire = {
        "customerId": "demo-lender",
        "loginId": "0b6f1a52-3c4d-4e5f-8a9b-0c1d2e3f4a5b",
        "requestId": "3f0c1d2e-4b5a-4c6d-8e7f-901a2b3c4d5e",
        "attributes": {
            "Login": {
                "Username": "no_mfa",
                "IsScheduledRefresh": False,
                "LastRefresh": "2026-11-27T05:00:00",
                "Type": None,
                "Id": "0b6f1a52-3c4d-4e5f-8a9b-0c1d2e3f4a5b",
            },
            "RequestId": "3f0c1d2e-4b5a-4c6d-8e7f-901a2b3c4d5e",
            "Groups": {"Lending": {"Id": "7c8d9e0f-1a2b-4c3d-8e4f-5a6b7c8d9e0f", "DebtToIncome": 0.31, "Overdrafts": "NONE_DETECTED"}},
        },
        "totalPolls": 2,
    }
    result = parse_answer(ConnectionResult, wire, "demo-lender/app-1", "result")
    assert result.login_id == wire["loginId"] and result.accounts_detail is None
    assert result.attributes is not None and result.attributes.groups["Lending"].model_extra == {"DebtToIncome": 0.31, "Overdrafts": "NONE_DETECTED"}
    assert result.to_wire() == wire
    with pytest.raises(UnexpectedConnectionAnswerError) as raised:
        parse_answer(ConnectionResult, {**wire, "loginId": None}, "demo-lender/app-1", "result")
    assert raised.value.field == "loginId" and raised.value.what == "result"


def test_the_local_answer_check_reads_the_challenges_of_the_model() -> None:
    state = parse_answer(ConnectionState, AWAITING_STATE, "demo-lender/app-1", "state")
    assert state.challenge_set is not None
    challenges = state.challenge_set.challenges
    assert _answer_problems(challenges, {"What city were you born in?": ["Montreal"], "Text 555-0100": ["Text 555-0100"]}) == []
    assert _answer_problems(challenges, {"what city were you born in?": ["Montreal"]}) == [
        '"what city were you born in?" was not asked (keys must be the exact prompt text)',
        '"What city were you born in?": is not answered (all prompts must be answered in one call)',
    ]


def test_a_challenge_of_a_type_the_spec_does_not_name_is_read_and_answered_by_its_prompt() -> None:
    unknown = {"Type": "SmsCode", "Prompt": "Enter the code we sent by SMS to ***-***-1234"}
    wire = {**AWAITING_STATE, "challengeSet": {**AWAITING_STATE["challengeSet"], "challenges": [unknown]}}  # type: ignore[dict-item]
    state = parse_answer(ConnectionState, wire, "demo-lender/app-1", "state")
    assert state.challenge_set is not None
    challenges = state.challenge_set.challenges
    assert [(each.type, each.prompt, each.iterables) for each in challenges] == [("SmsCode", unknown["Prompt"], None)]
    assert state.to_wire() == wire
    assert _answer_problems(challenges, {unknown["Prompt"]: ["246810"]}) == []
    assert _answer_problems(challenges, {"SmsCode": ["246810"]}) == [
        '"SmsCode" was not asked (keys must be the exact prompt text)',
        f'"{unknown["Prompt"]}": is not answered (all prompts must be answered in one call)',
    ]


# The first step and an answer's outcome are unions of models, told apart by `step` and `outcome`.
FIRST_STEP: pydantic.TypeAdapter[FirstStep] = pydantic.TypeAdapter(FirstStep)
ANSWER_OUTCOME: pydantic.TypeAdapter[AnswerOutcome] = pydantic.TypeAdapter(AnswerOutcome)
CHALLENGE_SET = AWAITING_STATE["challengeSet"]
FIRST_STEPS: list[dict[str, Any]] = [
    {"step": "challenge", "challengeSet": CHALLENGE_SET},
    {"step": "session-open", "loginId": "0b6f1a52-3c4d-4e5f-8a9b-0c1d2e3f4a5b", "requestId": "3f0c1d2e-4b5a-4c6d-8e7f-901a2b3c4d5e"},
    {"step": "ended", "status": "Failed", "failure": {"type": "InvalidCredentials", "message": "bad password", "serviceCode": "INVALID_PASSWORD"}},
]
OUTCOMES: list[dict[str, Any]] = [
    {"outcome": "accepted", "status": "Retrieving"},
    {
        "outcome": "rejected",
        "message": "wrong answer",
        "serviceCode": "INVALID_SECURITY_RESPONSE",
        "nextChallengeSet": {**CHALLENGE_SET, "id": "2", "attempt": 2},  # type: ignore[dict-item]
    },
    {"outcome": "restarted", "reason": "the answer's outcome is unknown", "status": "AwaitingAnswer", "nextChallengeSet": CHALLENGE_SET},
    {"outcome": "ended", "status": "Cancelled"},
]


class FakeTemporal:
    """What ConnectionsClient calls on temporalio's Client for the first step and an answer, answering as the worker would."""

    namespace = "default"

    def __init__(self, first_step: dict[str, Any], outcome: dict[str, Any]) -> None:
        self.first_step = first_step
        self.outcome = outcome
        self.sent: list[tuple[str, object]] = []

    async def execute_update_with_start_workflow(self, update: str, *, start_workflow_operation: object, result_type: type) -> dict[str, Any]:
        self.sent.append((update, None))
        return self.first_step

    def get_workflow_handle(self, workflow_id: str) -> FakeTemporal:
        return self

    async def query(self, query: str, result_type: type) -> dict[str, Any]:
        return AWAITING_STATE

    async def execute_update(self, update: str, arg: object, result_type: type) -> dict[str, Any]:
        self.sent.append((update, arg))
        return self.outcome


def test_each_first_step_reads_as_its_model_and_back_to_the_wire() -> None:
    challenge, session_open, ended = (parse_answer(FIRST_STEP, wire, "connection-demo-lender:app-1", "first step") for wire in FIRST_STEPS)
    assert isinstance(challenge, FirstStepChallenge) and challenge.challenge_set.challenges[0].prompt == "What city were you born in?"
    assert isinstance(session_open, FirstStepSessionOpen) and session_open.login_id == FIRST_STEPS[1]["loginId"]
    assert isinstance(ended, FirstStepEnded) and ended.failure is not None and ended.failure.service_code == "INVALID_PASSWORD"
    assert [step.to_wire() for step in (challenge, session_open, ended)] == FIRST_STEPS


def test_each_answer_outcome_reads_as_its_model_and_back_to_the_wire() -> None:
    outcomes = [parse_answer(ANSWER_OUTCOME, wire, "connection-demo-lender:app-1", "answer outcome") for wire in OUTCOMES]
    accepted, rejected, restarted, ended = outcomes
    assert isinstance(accepted, AnswerOutcomeAccepted) and accepted.status == "Retrieving" and accepted.next_challenge_set is None
    assert isinstance(rejected, AnswerOutcomeRejected) and rejected.service_code == "INVALID_SECURITY_RESPONSE"
    assert rejected.next_challenge_set is not None and rejected.next_challenge_set.attempt == 2
    assert isinstance(restarted, AnswerOutcomeRestarted) and restarted.reason.startswith("the answer's outcome")
    assert isinstance(ended, AnswerOutcomeEnded) and ended.failure is None
    assert [outcome.to_wire() for outcome in outcomes] == OUTCOMES


def test_a_first_step_or_outcome_off_the_contract_raises_naming_it() -> None:
    with pytest.raises(UnexpectedConnectionAnswerError) as unknown:
        parse_answer(FIRST_STEP, {"step": "waiting"}, "connection-demo-lender:app-1", "first step")
    assert unknown.value.what == "first step" and "the first step of connection connection-demo-lender:app-1" in str(unknown.value)
    with pytest.raises(UnexpectedConnectionAnswerError) as missing:
        parse_answer(ANSWER_OUTCOME, {"outcome": "rejected"}, "connection-demo-lender:app-1", "answer outcome")
    assert missing.value.what == "answer outcome" and missing.value.field == "rejected.message", missing.value.field


async def test_the_client_returns_the_first_step_and_the_outcome_as_models_and_sends_the_answer_as_before() -> None:
    fake = FakeTemporal(FIRST_STEPS[0], OUTCOMES[1])
    client = ConnectionsClient(cast(temporalio.client.Client, fake), "aggregation-connections")
    key = connection_key("demo-lender", "app-1")
    live = {
        "customerId": "demo-lender",
        "session": {"kind": "live", "institution": "SandboxBank", "username": "security_question", "password": "Everyday"},
        "products": {"accountsDetail": {}},
    }
    step = await client.start_and_await_first_step(key, live)
    assert isinstance(step, FirstStepChallenge) and step.challenge_set.id == "1"
    responses = {"What city were you born in?": ["Montreal"], "Text 555-0100": ["Text 555-0100"]}
    outcome = await client.answer(key, responses, challenge_set_id=step.challenge_set.id)
    assert isinstance(outcome, AnswerOutcomeRejected) and outcome.message == "wrong answer"
    # The wire is the worker's: the updates by name, the answer as the workflow reads it, naming the message it is sent as.
    assert fake.sent == [("awaitFirstStep", None), ("submitAnswer", {"challengeSetId": "1", "responses": responses, "sentAs": "submitAnswer"})]
