/**
 * A key per tenant: a tenant's payloads are sealed with data keys made under its own KMS key (a
 * transit key of its own, or its id bound in AWS KMS's encryption context), so a reader granted one
 * tenant cannot open another's and destroying one tenant's key forgets that lender alone. Payloads
 * of no tenant (the fleet's own workflows) keep the product's key. Each tenant has its own envelope
 * source (its data key, its outage bounds); a payload opens through the source of the tenant it
 * names when this process sealed for it (its cache serves its own payloads without asking the KMS).
 */
import type { KeyObject } from 'node:crypto';
import type { EnvelopeKeySource } from './envelope-keys.js';
import type { KeySource, SealingKey } from './key-source.js';
import { metadataText, TENANT_METADATA_KEY, type PayloadMetadata } from './payload-format.js';

export class TenantKeySource implements KeySource {
  private readonly tenants = new Map<string, EnvelopeKeySource>();

  constructor(
    private readonly product: EnvelopeKeySource,
    /** The envelope source of one tenant's key, made the first time the tenant is sealed or opened for. */
    private readonly sourceForTenant: (tenant: string) => EnvelopeKeySource,
  ) {}

  get keyId(): string {
    return this.product.keyId;
  }

  sealingKey(uses: number, tenant?: string): SealingKey | Promise<SealingKey> {
    return (tenant === undefined ? this.product : this.sourceOf(tenant)).sealingKey(uses);
  }

  /**
   * Through the source that sealed it when this process did (its cache holds its own data keys), else
   * the product's, which unwraps any tenant's key the payload names. Reading never makes a tenant's
   * source: a forged label cannot grow this map.
   */
  openingKey(metadata: PayloadMetadata): { key: KeyObject; keyId: string } | Promise<{ key: KeyObject; keyId: string }> {
    const tenant = metadataText(metadata, TENANT_METADATA_KEY);
    return ((tenant === undefined ? undefined : this.tenants.get(tenant)) ?? this.product).openingKey(metadata);
  }

  private sourceOf(tenant: string): EnvelopeKeySource {
    let source = this.tenants.get(tenant);
    if (!source) {
      source = this.sourceForTenant(tenant);
      this.tenants.set(tenant, source);
    }
    return source;
  }
}
