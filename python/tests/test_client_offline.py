"""The client's parts that need no server: its settings, business keys and visibility queries, as the
TypeScript side makes them (the verbs themselves: tests/e2e/, run by test/python/python-e2e.test.ts)."""

from __future__ import annotations

from pathlib import Path

import pytest

from aggregation_connections.client import InvalidBusinessKeyError, InvalidConnectionInputError, connection_key, parse_business_key, visibility_query
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
