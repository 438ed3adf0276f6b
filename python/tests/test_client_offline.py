"""The client's parts that need no server: its settings, business keys, visibility queries and how it
reads the worker's state and result, as the TypeScript side makes them (the verbs themselves: tests/e2e/, run by test/python/python-e2e.test.ts)."""

from __future__ import annotations

from pathlib import Path

import pytest

from aggregation_connections.client import (
    InvalidBusinessKeyError,
    InvalidConnectionInputError,
    UnexpectedConnectionAnswerError,
    connection_key,
    parse_business_key,
    visibility_query,
)
from aggregation_connections.client.answers import parse_answer
from aggregation_connections.client.connections import _answer_problems
from aggregation_connections.contract import ConnectionResult, ConnectionState
from aggregation_connections.settings import ConfigError, client_settings_from_env


def test_settings_default_as_the_typescript_client() -> None:
    settings = client_settings_from_env({})
    assert (settings.address, settings.namespace, settings.task_queue, settings.customer_id) == ("localhost:7233", "default", "aggregation-connections", "demo-lender")
    assert settings.tls is None and settings.api_key is None
    assert dict(settings.priority.keys) == {"live": 1, "pipeline": 2, "scheduled": 3}
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
    assert (settings.address, settings.namespace, settings.task_queue, settings.customer_id) == ("temporal.bank.internal:7233", "lending", "connections", "lender-1")
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
    for name in ("TEMPORAL_ADDRESS: must be host:port", "TEMPORAL_TLS: must be true or false", "TEMPORAL_TLS_CERT_PATH: cannot read", "TEMPORAL_TLS_CERT_PATH: TEMPORAL_TLS_CERT_PATH and TEMPORAL_TLS_KEY_PATH go together", "PRIORITY_LIVE: must be an integer from 1", "TENANT_WEIGHTS: 'lender-1:5000'"):
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


def test_visibility_queries_quote_their_values() -> None:
    assert visibility_query() == 'WorkflowType = "connectionWorkflow"'
    assert visibility_query(status="AwaitingAnswer", customer_id='say "hi"\\') == 'WorkflowType = "connectionWorkflow" AND ConnectionStatus = "AwaitingAnswer" AND CustomerId = "say \\"hi\\"\\\\"'
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
            "Login": {"Username": "no_mfa", "IsScheduledRefresh": False, "LastRefresh": "2026-11-27T05:00:00", "Type": None, "Id": "0b6f1a52-3c4d-4e5f-8a9b-0c1d2e3f4a5b"},
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
