"""A cached connection whose result the worker keeps outside history, read from Python: a real dev
server, the TypeScript worker with the S3 payload store on a real MinIO, and the sandbox, started by
test/python/python-e2e.test.ts, which runs this module with the worker's PAYLOAD_STORE_* variables
(a low PAYLOAD_STORE_THRESHOLD_BYTES, so the input Python writes goes to the store too), the AWS keys,
E2E_CUSTOMER_ID and E2E_SAVED_LOGIN_ID (a saved login of the sandbox). Skipped without them."""

from __future__ import annotations

import dataclasses
import json
import os
import secrets
from collections.abc import AsyncIterator
from typing import Any

import aioboto3
import pytest
import temporalio.client
import temporalio.converter
from temporalio.api.common.v1 import Payload
from temporalio.contrib.aws.s3driver import S3StorageDriver as StockS3StorageDriver
from temporalio.contrib.aws.s3driver.aioboto3 import new_aioboto3_client
from temporalio.converter import ExternalStorage

from aggregation_connections.client import ConnectionsClient, connection_key
from aggregation_connections.contract import ConnectionInput
from aggregation_connections.payload_store import encode_key_segment
from aggregation_connections.settings import codec_from_env

CUSTOMER_ID = os.environ.get("E2E_CUSTOMER_ID", "")
SAVED_LOGIN_ID = os.environ.get("E2E_SAVED_LOGIN_ID", "")
pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(
        CUSTOMER_ID == "" or SAVED_LOGIN_ID == "" or os.environ.get("PAYLOAD_STORE") != "s3",
        reason="end-to-end with the S3 payload store: run by test/python/python-e2e.test.ts (E2E_SAVED_LOGIN_ID, PAYLOAD_STORE=s3 unset)",
    ),
]
REFERENCE_TYPE = b"temporal.api.sdk.v1.ExternalStorageReference"


@pytest.fixture
async def client() -> AsyncIterator[ConnectionsClient]:
    connected = await ConnectionsClient.connect()  # codec and payload store from the worker's variables
    yield connected
    await connected.close()


def claim_of(payload: Payload) -> dict[str, str]:
    """The claim of a reference payload, as history holds it (not encrypted: it names only the object)."""
    assert payload.metadata.get("messageType") == REFERENCE_TYPE, dict(payload.metadata)
    claim: dict[str, str] = json.loads(payload.data)["claimData"]
    return claim


async def test_a_cached_connection_with_its_result_stored_in_s3_read_from_python(client: ConnectionsClient) -> None:
    key = connection_key(CUSTOMER_ID, f"py-stored-{secrets.token_hex(4)}")
    connection: dict[str, Any] = {
        "customerId": CUSTOMER_ID,
        "session": {"kind": "cached", "loginId": SAVED_LOGIN_ID},
        "products": {"accountsDetail": {"WithTransactions": True}},
    }
    await client.start(key, ConnectionInput.model_validate(connection))
    result = await client.result(key)
    # The products, read back through the store and the codec.
    assert result.login_id == SAVED_LOGIN_ID and result.customer_id == CUSTOMER_ID
    assert result.accounts_detail is not None
    accounts = result.to_wire()["accountsDetail"]["Accounts"]
    assert len(accounts) > 0 and all("Transactions" in account for account in accounts), accounts

    # History holds references only: the input Python stored, the result the worker stored, both under
    # the prefix and the connection's workflow directory, with the stock drivers' claim fields.
    raw = await temporalio.client.Client.connect(client.client.service_client.config.target_host, namespace=client.namespace)
    history = await raw.get_workflow_handle(key).fetch_history()
    [started] = history.events[0].workflow_execution_started_event_attributes.input.payloads
    completed = next(event for event in history.events if event.HasField("workflow_execution_completed_event_attributes"))
    [stored_result] = completed.workflow_execution_completed_event_attributes.result.payloads
    directory = f"{os.environ['PAYLOAD_STORE_S3_PREFIX']}/default/workflows/{encode_key_segment(key)}/"
    for reference in (started, stored_result):
        claim = claim_of(reference)
        assert sorted(claim) == ["bucket", "hash_algorithm", "hash_value", "key"], claim
        assert claim["bucket"] == os.environ["PAYLOAD_STORE_S3_BUCKET"] and claim["key"] == directory + claim["hash_value"], claim

    # A Python team on Temporal's stock S3 driver (temporalio.contrib.aws.s3driver) reads the worker's result too.
    codec = codec_from_env()
    async with aioboto3.Session().client("s3", endpoint_url=os.environ["PAYLOAD_STORE_S3_ENDPOINT"], region_name="us-east-1") as s3:
        stock = StockS3StorageDriver(new_aioboto3_client(s3), bucket=os.environ["PAYLOAD_STORE_S3_BUCKET"])
        converter = dataclasses.replace(temporalio.converter.DataConverter.default, payload_codec=codec, external_storage=ExternalStorage(drivers=[stock]))
        [value] = await converter.decode([stored_result], [dict])
    assert value == result.to_wire()
