"""Where a sealed payload belongs, bound into its seal (src/codec/payload-binding.ts; docs/payload-format.md,
"The workflow binding"): metadata ``encryption-binding`` = "workflow-v1" and ``encryption-workflow-id`` = the
workflow id of the serialization context; AES-GCM associated data = for each of ["workflow-v1", the
``encryption-tenant`` value or "", the workflow id], its UTF-8 length as 4 bytes big-endian, then its bytes.
A payload copied into another workflow is refused before it is opened (PayloadMisboundError); an unbound
payload (sealed before bindings, or with no workflow) has no associated data."""

from __future__ import annotations

import re

from .errors import PayloadDecryptionError, PayloadMisboundError
from .payload_format import TENANT_METADATA_KEY, Metadata, metadata_text

BINDING_METADATA_KEY = "encryption-binding"
WORKFLOW_ID_METADATA_KEY = "encryption-workflow-id"
WORKFLOW_BINDING = "workflow-v1"

# Temporal starts a schedule's workflow as "<action's workflow id>-<nominal time, RFC 3339 to the second, UTC>".
_SCHEDULED_RUN_SUFFIX = re.compile(r"-\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z")


def binding_metadata(workflow_id: str) -> dict[str, bytes]:
    """The metadata a bound payload carries besides the key's."""
    return {BINDING_METADATA_KEY: WORKFLOW_BINDING.encode(), WORKFLOW_ID_METADATA_KEY: workflow_id.encode()}


def binding_associated_data(tenant: str | None, workflow_id: str) -> bytes:
    """The associated data of a payload bound to ``workflow_id``, sealed under ``tenant``'s key (None: the product's)."""
    out = bytearray()
    for field in (WORKFLOW_BINDING, tenant or "", workflow_id):
        raw = field.encode()
        out += len(raw).to_bytes(4, "big") + raw
    return bytes(out)


def bound_workflow_id(metadata: Metadata, key_id: str | None) -> str | None:
    """The workflow id a sealed payload is bound to, or None when unbound; an unknown binding is refused by name."""
    binding = metadata_text(metadata, BINDING_METADATA_KEY)
    if binding is None:
        return None
    if binding != WORKFLOW_BINDING:
        raise PayloadDecryptionError(
            key_id, f'encrypted payload of {BINDING_METADATA_KEY} "{binding[:64]}", which this process does not read (it reads "{WORKFLOW_BINDING}")'
        )
    workflow_id = metadata_text(metadata, WORKFLOW_ID_METADATA_KEY)
    if workflow_id is None:
        raise PayloadDecryptionError(key_id, f"{WORKFLOW_BINDING}-bound payload without {WORKFLOW_ID_METADATA_KEY} metadata")
    return workflow_id


def opening_associated_data(metadata: Metadata, key_id: str | None, context_workflow_id: str | None) -> bytes | None:
    """The associated data to open a payload with (None: unbound), after checking it belongs to ``context_workflow_id``
    (None: no context to check). A schedule's run reads what its schedule's action was sealed for."""
    bound_to = bound_workflow_id(metadata, key_id)
    if bound_to is None:
        return None
    if context_workflow_id is not None and not _belongs_to(bound_to, context_workflow_id):
        raise PayloadMisboundError(key_id, bound_to, context_workflow_id)
    return binding_associated_data(metadata_text(metadata, TENANT_METADATA_KEY), bound_to)


def _belongs_to(bound_to: str, workflow_id: str) -> bool:
    return workflow_id == bound_to or (workflow_id.startswith(bound_to) and _SCHEDULED_RUN_SUFFIX.fullmatch(workflow_id[len(bound_to) :]) is not None)
