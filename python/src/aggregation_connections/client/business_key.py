"""Business keys, as src/client/business-key.ts builds and checks them: the workflow id of a connection,
``connection-<customerId>:<applicationId>``, chosen by the pipeline so that starting the same connection
twice finds the first one."""

from __future__ import annotations

import json
import re

from ..contract.names import CONNECTION_WORKFLOW_ID_PREFIX, ID_SEGMENT_MAX, ID_SEGMENT_RULE, ID_SEGMENT_SOURCE
from .errors import InvalidBusinessKeyError

# The id segment's rule (src/contract/ids.ts) and the prefix ("connection-", src/client/business-key.ts)
# are generated into contract/names.py.
PREFIX = CONNECTION_WORKFLOW_ID_PREFIX
_SEGMENT = re.compile(ID_SEGMENT_SOURCE)
_BUSINESS_KEY = re.compile(f"{re.escape(PREFIX)}{ID_SEGMENT_SOURCE}:{ID_SEGMENT_SOURCE}")
_WORKFLOW_ID = re.compile(r"[^\s\x00-\x1f\x7f-\x9f]+")


def connection_key(customer_id: str, application_id: str) -> str:
    """``connection-demo-lender:app-123`` for customer ``demo-lender`` and application ``app-123``."""
    key = f"{PREFIX}{customer_id}:{application_id}"
    for name, value in (("customerId", customer_id), ("applicationId", application_id)):
        if value == "":
            raise InvalidBusinessKeyError(key, f"{name} must not be empty")
        if len(value) > ID_SEGMENT_MAX:
            raise InvalidBusinessKeyError(key, f"{name} must be at most {ID_SEGMENT_MAX} characters")
        if not _SEGMENT.fullmatch(value):
            raise InvalidBusinessKeyError(key, f"{name} {ID_SEGMENT_RULE}")
    return key


def parse_business_key(key: str, customer_id: str) -> str:
    """Checks the key's format and that it belongs to the customer whose connection it names."""
    if len(key) > 200:
        raise InvalidBusinessKeyError(key, "must be at most 200 characters")
    if not _BUSINESS_KEY.fullmatch(key):
        raise InvalidBusinessKeyError(key, f"must look like {PREFIX}<customerId>:<applicationId> (each {ID_SEGMENT_RULE.removeprefix('must ')})")
    if not key.startswith(f"{PREFIX}{customer_id}:"):
        raise InvalidBusinessKeyError(key, f"must start with {json.dumps(PREFIX + customer_id + ':')} (the input's customerId) followed by the application id")
    return key


def parse_workflow_id(workflow_id: str) -> str:
    """Any existing workflow id (the client also reads ids not made here)."""
    if workflow_id == "":
        raise InvalidBusinessKeyError(workflow_id, "must not be empty")
    if len(workflow_id) > 1000:
        raise InvalidBusinessKeyError(workflow_id, "must be at most 1000 characters")
    if not _WORKFLOW_ID.fullmatch(workflow_id):
        raise InvalidBusinessKeyError(workflow_id, "must not contain spaces or control characters")
    return workflow_id
