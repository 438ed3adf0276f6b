"""A key per tenant (src/codec/tenant-keys.ts): a tenant's payloads are sealed with data keys made under
its own KMS key (its own transit key, or its id in AWS KMS's encryption context); payloads of no tenant
keep the product's key. Each tenant has its own envelope source; a payload opens through its tenant's
source when this process sealed for that tenant, else through the product's."""

from __future__ import annotations

from collections.abc import Callable

from .envelope_keys import EnvelopeKeySource
from .key_source import OpeningKey, SealingKey
from .payload_format import TENANT_METADATA_KEY, Metadata, metadata_text


class TenantKeySource:
    def __init__(self, product: EnvelopeKeySource, source_for_tenant: Callable[[str], EnvelopeKeySource]) -> None:
        self._product = product
        self._source_for_tenant = source_for_tenant
        self._tenants: dict[str, EnvelopeKeySource] = {}

    @property
    def key_id(self) -> str:
        return self._product.key_id

    async def sealing_key(self, uses: int, tenant: str | None = None) -> SealingKey:
        return await (self._product if tenant is None else self._source_of(tenant)).sealing_key(uses)

    async def opening_key(self, metadata: Metadata) -> OpeningKey:
        """Through the source that sealed it when this process did (its own data keys cached), else the
        product's, which unwraps any tenant's key the payload names; reading never makes a tenant's source."""
        tenant = metadata_text(metadata, TENANT_METADATA_KEY)
        source = self._tenants.get(tenant) if tenant is not None else None
        return await (source or self._product).opening_key(metadata)

    def _source_of(self, tenant: str) -> EnvelopeKeySource:
        source = self._tenants.get(tenant)
        if source is None:
            source = self._source_for_tenant(tenant)
            self._tenants[tenant] = source
        return source
