/**
 * A key per tenant in static mode (PAYLOAD_TENANT_KEYS_DIR): a tenant's payloads are sealed with the
 * first key of its own key file (tenant-key-files.ts) and say whose they are (`encryption-tenant`),
 * so a process given lender A's file alone cannot open lender B's payloads, and deleting B's file
 * forgets B alone. Payloads of no tenant, and every static payload written before, keep the
 * product's configured keys.
 *
 * A tenant's file is read again when the copy in memory is older than TENANT_KEY_FILE_RECHECK_MS, so a
 * rotation (a new first line) or a forget (the file gone) reaches every process within that time; a
 * key id the copy lacks is looked for once more at once (another process may have just rotated).
 * Reading never makes a file: only sealing does, and only where a generated key may stand in for a
 * provisioned one (Temporal on this machine).
 */
import type { KeyObject } from 'node:crypto';
import { ID_SEGMENT_PATTERN, ID_SEGMENT_RULE } from '../contract/ids.js';
import { KeyDestroyedError, PayloadDecryptionError, TenantKeyMissingError, UnknownEncryptionKeyError } from './payload-errors.js';
import { StaticKeySource, type KeySource, type SealCounting, type SealingKey, type SealListener } from './key-source.js';
import { KEY_ID_METADATA_KEY, metadataText, readEnvelope, sealingTenant, type PayloadMetadata } from './payload-format.js';
import { readOrCreateTenantKeyFile, readTenantKeyFile, tenantKeyFilePath, type TenantKeyFiles, type TenantKeys } from './tenant-key-files.js';

export const TENANT_KEY_FILE_RECHECK_MS = 10_000;

interface TenantEntry {
  readonly source: StaticKeySource;
  readonly fingerprint: string;
  readonly readAt: number;
}

export class StaticTenantKeySource implements KeySource, SealCounting {
  private readonly tenants = new Map<string, TenantEntry>();
  private readonly sealListeners = new Set<SealListener>();

  constructor(
    /** The product's configured keys: payloads of no tenant, and static payloads that name none. */
    private readonly product: StaticKeySource,
    private readonly files: TenantKeyFiles,
    private readonly now: () => number = Date.now,
  ) {}

  get keyId(): string {
    return this.product.keyId;
  }

  /** The product's key ids (the tenants' are in their files). */
  get keyIds(): string[] {
    return this.product.keyIds;
  }

  sealingKey(uses: number, tenant?: string): SealingKey {
    if (tenant === undefined) return this.product.sealingKey(uses);
    const path = tenantKeyFilePath(this.files.dir, tenant);
    const entry = this.current(tenant, path) ?? (this.files.createMissing ? this.remember(tenant, readOrCreateTenantKeyFile(path)) : undefined);
    if (!entry) throw new TenantKeyMissingError(tenant, path);
    return entry.source.sealingKey(uses);
  }

  openingKey(metadata: PayloadMetadata): { key: KeyObject; keyId: string } {
    const keyId = metadataText(metadata, KEY_ID_METADATA_KEY);
    const tenant = readEnvelope(metadata) === undefined ? sealingTenant(metadata, keyId) : undefined;
    if (tenant === undefined || keyId === undefined) return this.product.openingKey(metadata);
    // A label no key file can be named by was never written by a tenant's key (forged or damaged).
    if (!ID_SEGMENT_PATTERN.test(tenant))
      throw new PayloadDecryptionError(
        keyId,
        `payload sealed with key "${keyId}" of tenant ${JSON.stringify(tenant.slice(0, 32))}, which is no customer id: ${ID_SEGMENT_RULE}`,
      );
    const path = tenantKeyFilePath(this.files.dir, tenant);
    let entry = this.current(tenant, path);
    if (entry && !entry.source.keyIds.includes(keyId)) entry = this.current(tenant, path, { reread: true });
    if (!entry) throw KeyDestroyedError.tenantKeyFileGone(keyId, path, tenant);
    if (!entry.source.keyIds.includes(keyId)) throw new UnknownEncryptionKeyError(keyId, entry.source.keyIds);
    return entry.source.openingKey(metadata);
  }

  onSeal(listener: SealListener): () => void {
    this.sealListeners.add(listener);
    const unsubscribe = this.product.onSeal(listener);
    return () => {
      this.sealListeners.delete(listener);
      unsubscribe();
    };
  }

  /** The tenant's keys as its file holds them now (read again when stale or asked to), or undefined when it has none. */
  private current(tenant: string, path: string, { reread = false } = {}): TenantEntry | undefined {
    const held = this.tenants.get(tenant);
    if (held && !reread && this.now() - held.readAt < TENANT_KEY_FILE_RECHECK_MS) return held;
    const keys = readTenantKeyFile(path);
    if (!keys) {
      // Forgotten (or never made): its keys leave memory now, not at the next restart.
      this.tenants.delete(tenant);
      return undefined;
    }
    if (held && held.fingerprint === keys.fingerprint) {
      zero(keys);
      const refreshed = { ...held, readAt: this.now() };
      this.tenants.set(tenant, refreshed);
      return refreshed;
    }
    return this.remember(tenant, keys);
  }

  private remember(tenant: string, keys: TenantKeys): TenantEntry {
    const source = new StaticKeySource(keys, tenant);
    zero(keys);
    for (const listener of this.sealListeners) source.onSeal(listener);
    const entry = { source, fingerprint: keys.fingerprint, readAt: this.now() };
    this.tenants.set(tenant, entry);
    return entry;
  }
}

/** The raw key bytes once the KeyObjects hold them: no second copy waits in the heap for the collector. */
function zero(keys: TenantKeys): void {
  keys.key.fill(0);
  for (const key of keys.decryptionKeys.values()) key.fill(0);
}
