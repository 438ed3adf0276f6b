"""The tenant a workflow id belongs to, read from the id alone (src/contract/workflow-tenant.ts): what
the codec seals a payload under when keys are per tenant. Every id the product makes for a tenant's
work is ``<kind>-<customerId>:<rest>`` or ``throttle-<customerId>``; longer kinds are tried first; an id
of no tenant answers None (the product's key)."""

from __future__ import annotations

import re

# Kinds followed by "<customerId>:", longest first where one begins another, and "throttle-": the
# TypeScript module's, generated into names.py.
from .names import THROTTLE_WORKFLOW_ID_KIND as _THROTTLE_KIND, WORKFLOW_ID_KINDS_WITH_COLON as _KINDS_WITH_COLON

_CUSTOMER_ID = re.compile(r"[A-Za-z0-9._-]{1,128}")


def tenant_of_workflow_id(workflow_id: str) -> str | None:
    """The customer id of a tenant's workflow id, or None for an id of no tenant."""
    for kind in _KINDS_WITH_COLON:
        if not workflow_id.startswith(kind):
            continue
        colon = workflow_id.find(":", len(kind))
        if colon < 0:
            continue
        customer_id = workflow_id[len(kind) : colon]
        return customer_id if _CUSTOMER_ID.fullmatch(customer_id) else None
    if workflow_id.startswith(_THROTTLE_KIND):
        customer_id = workflow_id[len(_THROTTLE_KIND) :]
        return customer_id if _CUSTOMER_ID.fullmatch(customer_id) else None
    return None
