"""contract/names.py, generated from the TypeScript sources (test/python/python-models.test.ts checks it
is what they make), is what the package uses: the settings read only variables the TypeScript client
reads, and default as it does."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from pathlib import Path

from aggregation_connections.client import business_key, connections, errors
from aggregation_connections.contract import names
from aggregation_connections.settings import client_settings_from_env

PACKAGE = Path(names.__file__).resolve().parents[1]
# A string that looks like one of our variables (or the start of some: "PRIORITY_" + class).
_VARIABLE_LIKE = re.compile(r"(?:TEMPORAL|PAYLOAD|AGGREGATOR|PRIORITY|TENANT|SERVICE_BUDGET|BOOK|UNATTENDED|OTEL)_[A-Z0-9_]*")
# Temporal's own prefix for gRPC metadata (TEMPORAL_GRPC_META_<HEADER>), read through temporalio.envconfig.
_TEMPORALS_PREFIXES = ("TEMPORAL_GRPC_META_",)


def unknown_variables(sources: Iterable[str]) -> list[str]:
    """Variable names in the sources' string literals that the TypeScript client does not read; a
    literal may also be the start of some variable's name (a prefix, or a label without _PATH/_DATA)."""
    unknown = []
    for source in sources:
        for node in ast.walk(ast.parse(source)):
            if not (isinstance(node, ast.Constant) and isinstance(node.value, str) and _VARIABLE_LIKE.fullmatch(node.value)):
                continue
            text = node.value
            prefix = text if text.endswith("_") else f"{text}_"
            if text in names.CLIENT_VARIABLES or text in _TEMPORALS_PREFIXES or any(name.startswith(prefix) for name in names.CLIENT_VARIABLES):
                continue
            unknown.append(text)
    return unknown


def test_the_package_reads_only_variables_the_typescript_client_reads() -> None:
    sources = [path.read_text("utf-8") for path in sorted(PACKAGE.rglob("*.py")) if path.name != "names.py"]
    assert len(sources) > 20
    assert unknown_variables(sources) == []
    for priority_class in names.DEFAULT_PRIORITY_KEYS:
        assert f"PRIORITY_{priority_class.upper()}" in names.CLIENT_VARIABLES


def test_a_misspelt_or_retired_variable_is_reported() -> None:
    source = 'reader.text("PAYLOAD_ENCRYPTON_KEY")\nvalues.get("TEMPORAL_TLS_CERT_PATH")\nget("TEMPORAL_QUEUE")\n'
    assert unknown_variables([source]) == ["PAYLOAD_ENCRYPTON_KEY", "TEMPORAL_QUEUE"]


def test_the_settings_default_to_the_generated_defaults() -> None:
    settings = client_settings_from_env({})
    assert (settings.address, settings.namespace, settings.task_queue, settings.customer_id) == (
        names.TEMPORAL_ADDRESS_DEFAULT,
        names.TEMPORAL_NAMESPACE_DEFAULT,
        names.TEMPORAL_TASK_QUEUE_DEFAULT,
        names.AGGREGATOR_CUSTOMER_ID_DEFAULT,
    )
    assert dict(settings.priority.keys) == {name: getattr(names, f"PRIORITY_{name.upper()}_DEFAULT") for name in names.PRIORITY_CLASSES}


def test_the_client_modules_keep_their_names() -> None:
    assert connections.CONNECTION_WORKFLOW_TYPE == names.CONNECTION_WORKFLOW_TYPE == "connectionWorkflow"
    assert (connections.SUBMIT_ANSWER_UPDATE, connections.AWAIT_FIRST_STEP_UPDATE, connections.CONNECTION_STATE_QUERY) == (
        "submitAnswer",
        "awaitFirstStep",
        "connectionState",
    )
    assert connections.CONNECTION_STATUS_KEY.name == "ConnectionStatus" and connections.LOGIN_ID_KEY.name == "LoginId"
    assert "Cancelled" in connections.CONNECTION_STATUSES and errors.CONNECTION_FAILURE_TYPES is names.CONNECTION_FAILURE_TYPES
    assert errors.END_TYPES is names.CONNECTION_END_TYPES and errors.END_TYPES == ("Cancelled", "Terminated", "TimedOut", "Unknown")
    assert business_key.PREFIX is names.CONNECTION_WORKFLOW_ID_PREFIX and business_key.PREFIX == "connection-"
