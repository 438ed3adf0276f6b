"""A Temporal PayloadCodec that encrypts every payload with AES-256-GCM (src/codec/encryption-codec.ts):
the static format names a configured key by id; envelope-v1 carries its data key wrapped by a KMS.
Decoding refuses a payload that is not sealed (PayloadNotSealedError: anyone who can call Temporal could
write one) and decrypts with the key the payload names, so a client reads what the TypeScript worker
wrote and the worker reads what this codec writes. Only a replay may read an unsealed payload
(``read_unsealed_for_replay``: histories written before encryption). With keys per tenant, a batch is
sealed under the key of its workflow's tenant: the SDK hands the codec the serialization context
(``with_context``), whose workflow id names the tenant, as the TypeScript SDK does; a batch of a workflow
is bound to it (payload_binding.py), and a payload bound to another workflow is refused (PayloadMisboundError)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from temporalio.api.common.v1 import Payload
from temporalio.converter import (
    ActivitySerializationContext,
    PayloadCodec,
    SerializationContext,
    WithSerializationContext,
    WorkflowSerializationContext,
)

from ..contract.workflow_tenant import tenant_of_workflow_id
from .errors import PayloadNotSealedError
from .key_source import EncryptionKeys, KeySource, StaticKeySource
from .payload_binding import binding_associated_data, binding_metadata, opening_associated_data
from .payload_format import KEY_ID_METADATA_KEY, TENANT_METADATA_KEY, is_encrypted, metadata_text, open_payload, seal_payload


class EncryptionCodec(PayloadCodec, WithSerializationContext):
    def __init__(
        self,
        keys: EncryptionKeys | KeySource,
        *,
        read_unsealed_for_replay: bool = False,
        tenant: str | None = None,
        workflow_id: str | None = None,
    ) -> None:
        """Configured keys (the static format), or a key source such as a KMS's (envelope-v1)."""
        self._keys: KeySource = StaticKeySource(keys) if isinstance(keys, EncryptionKeys) else keys
        self._read_unsealed_for_replay = read_unsealed_for_replay
        self._tenant = tenant
        self._workflow_id = workflow_id

    def with_context(self, context: SerializationContext) -> EncryptionCodec:
        """This codec for one workflow's or activity's payloads: sealed under its tenant's key (one key source shared)."""
        workflow_id = context.workflow_id if isinstance(context, (WorkflowSerializationContext, ActivitySerializationContext)) else None
        tenant = tenant_of_workflow_id(workflow_id) if workflow_id else None
        return EncryptionCodec(self._keys, read_unsealed_for_replay=self._read_unsealed_for_replay, tenant=tenant, workflow_id=workflow_id or None)

    @property
    def key_id(self) -> str:
        """The id new payloads are encrypted under."""
        return self._keys.key_id

    async def encode(self, payloads: Sequence[Payload]) -> list[Payload]:
        """One key for the whole batch: a KMS is asked at most once per batch, and only when its data key is spent."""
        if not payloads:
            return []
        sealing = await self._keys.sealing_key(len(payloads), self._tenant)
        if self._workflow_id is None:
            return [Payload(metadata=dict(sealing.metadata), data=seal_payload(sealing.key, payload)) for payload in payloads]
        metadata = {**sealing.metadata, **binding_metadata(self._workflow_id)}
        # The tenant bound is the key's (``encryption-tenant``, absent for the product's key), as a reader reads it.
        associated_data = binding_associated_data(metadata_text(sealing.metadata, TENANT_METADATA_KEY), self._workflow_id)
        return [Payload(metadata=metadata, data=seal_payload(sealing.key, payload, associated_data=associated_data)) for payload in payloads]

    async def decode(self, payloads: Sequence[Payload]) -> list[Payload]:
        """A payload it cannot decrypt fails the whole batch (PayloadDecryptionError or a key provider's error)."""
        return list(await asyncio.gather(*(self._decrypt(payload) for payload in payloads)))

    async def _decrypt(self, payload: Payload) -> Payload:
        if not is_encrypted(payload):
            if self._read_unsealed_for_replay:
                return payload
            encoding = payload.metadata.get("encoding")
            raise PayloadNotSealedError(encoding.decode("utf-8", "replace")[:64] if encoding else "(none)")
        # Another workflow's payload is refused before any key is asked for: copied, not sent.
        associated_data = opening_associated_data(payload.metadata, metadata_text(payload.metadata, KEY_ID_METADATA_KEY), self._workflow_id)
        opening = await self._keys.opening_key(payload.metadata)
        return open_payload(opening.key, opening.key_id, payload.data, associated_data)
