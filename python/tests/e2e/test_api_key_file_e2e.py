"""TEMPORAL_API_KEY_FILE on a client connected to the real dev server that test/python/python-e2e.test.ts
starts (TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_TASK_QUEUE; skipped without E2E_CUSTOMER_ID, as in
the unit run): ConnectionsClient.connect opens the client with the file's token, the renewal task sets a
rewritten file's token on the live client every 100 ms, calls keep working across it, a broken file keeps
the last token and its recovery is said, close() stops it; no token in the logs. The dev server checks no
token (it has no authorizer), so what is proven here is that the token reaches the live client and its
connection (``Client.api_key``, ``service_client.config.api_key``) while it serves calls; the worker's
renewal against a server that checks tokens: test/prod-check/token-renewal.test.ts."""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from aggregation_connections.client import ConnectionsClient
from aggregation_connections.settings import client_settings_from_env

CUSTOMER_ID = os.environ.get("E2E_CUSTOMER_ID", "")
pytestmark = [pytest.mark.e2e, pytest.mark.skipif(CUSTOMER_ID == "", reason="end-to-end: run by test/python/python-e2e.test.ts (E2E_CUSTOMER_ID unset)")]
LOGGER = "aggregation_connections.client.api_key_file"


def rewrite(path: Path, content: str) -> None:
    """As a sidecar writes it: a new file renamed over the old."""
    following = path.with_name(path.name + ".next")
    following.write_text(content)
    os.replace(following, path)


async def wait_for(condition: Callable[[], bool], what: str, timeout_s: float = 15.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout_s
    while not condition():
        assert asyncio.get_running_loop().time() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.02)


async def test_a_token_renewed_in_the_file_reaches_the_live_client_while_it_serves_calls(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger=LOGGER)
    path = tmp_path / "temporal-token"
    path.write_text("e2e-token-1\n")
    # The dev server is plain TCP: a token implies TLS unless TEMPORAL_TLS=false says otherwise.
    env = {**os.environ, "TEMPORAL_API_KEY_FILE": str(path), "TEMPORAL_API_KEY_FILE_RECHECK_MS": "100", "TEMPORAL_TLS": "false"}
    env.pop("TEMPORAL_API_KEY", None)
    settings = client_settings_from_env(env)
    assert settings.api_key_file is not None and settings.api_key_file.recheck_ms == 100
    # Renewed between reading the settings and connecting: connect reads the file again.
    rewrite(path, "e2e-token-2")
    client = await ConnectionsClient.connect(settings, codec=None, external_storage=None)
    try:
        assert client.client.api_key == "e2e-token-2"
        await client.list(customer_id=CUSTOMER_ID, limit=1)

        rewrite(path, "e2e-token-3")
        await wait_for(lambda: client.client.api_key == "e2e-token-3", "the renewed token on the live client")
        assert client.client.service_client.config.api_key == "e2e-token-3"
        await client.list(customer_id=CUSTOMER_ID, limit=1)  # the connection serves calls with the renewed token

        # A file the sidecar breaks keeps the last token; said once, and its recovery said.
        rewrite(path, "")
        await wait_for(lambda: any("is empty" in record.getMessage() for record in caplog.records), "the broken file to be said")
        await client.list(customer_id=CUSTOMER_ID, limit=1)
        assert client.client.api_key == "e2e-token-3"
        rewrite(path, "e2e-token-4")
        await wait_for(lambda: client.client.api_key == "e2e-token-4", "the token of the recovered file")
        await client.list(customer_id=CUSTOMER_ID, limit=1)
        said = [record.getMessage() for record in caplog.records if record.name == LOGGER]
        assert said == [
            f"TEMPORAL_API_KEY_FILE: renewed the Temporal token from {path}",
            f"TEMPORAL_API_KEY_FILE: {path} is empty; keeping the last token until the file holds one again",
            f"TEMPORAL_API_KEY_FILE: {path} holds a token again",
            f"TEMPORAL_API_KEY_FILE: renewed the Temporal token from {path}",
        ], said
        renewal = client._token_renewal
        assert renewal is not None and renewal.running
    finally:
        await client.close()
    assert not renewal.running, "close() stops the renewal"
    assert "e2e-token" not in caplog.text
