/**
 * Where the codec gets its keys: the key new payloads are sealed with (and the metadata that names
 * it), and the key a payload's metadata names. StaticKeySource is today's configured keys (the
 * static format); envelope-keys.ts is a KMS's data keys (envelope-v1), answering asynchronously.
 * A synchronous answer stays synchronous, so the static path costs what it did.
 */
import { createSecretKey, type KeyObject } from 'node:crypto';
import { UnknownEncryptionKeyError, PayloadDecryptionError } from './payload-errors.js';
import type { TenantKeyFiles } from './tenant-key-files.js';
import { DATA_KEY_BYTES, KEY_ID_METADATA_KEY, metadataText, readEnvelope, sealingTenant, staticMetadata, type PayloadMetadata } from './payload-format.js';

/** The key the next payloads are sealed with, and the metadata written beside them. */
export interface SealingKey {
  readonly key: KeyObject;
  readonly keyId: string;
  readonly metadata: Readonly<Record<string, Uint8Array>>;
}

export interface KeySource {
  /** The id written beside new payloads (for logs and the console's banner). */
  readonly keyId: string;
  /** The key for the next `uses` payloads of `tenant` (undefined: of no tenant); a source of one key ignores the tenant. */
  sealingKey(uses: number, tenant?: string): SealingKey | Promise<SealingKey>;
  /** The key an encrypted payload's metadata names; PayloadDecryptionError when it names none this process can have. */
  openingKey(metadata: PayloadMetadata): { key: KeyObject; keyId: string } | Promise<{ key: KeyObject; keyId: string }>;
}

export interface EncryptionKeys {
  /** Absent or "static": configured keys (the envelope providers say their own name). */
  readonly provider?: 'static' | undefined;
  /** Id written next to each payload this codec encrypts. */
  readonly keyId: string;
  /** The 32-byte key new payloads are encrypted with. */
  readonly key: Uint8Array;
  /** Earlier keys by id, used only to decrypt. */
  readonly decryptionKeys?: ReadonlyMap<string, Uint8Array> | undefined;
  /** A key per tenant (PAYLOAD_TENANT_KEYS_DIR): these keys are then the product's, for payloads of no tenant. */
  readonly tenantKeyFiles?: TenantKeyFiles | undefined;
}

/**
 * AES-GCM with random 96-bit nonces stays safe for 2^32 payloads under one key (NIST SP 800-38D);
 * a configured key has no data keys to spread them over, so its uses are counted (seals()) for the
 * worker's metric and log (src/metrics/static-key-metrics.ts).
 */
export const STATIC_KEY_SEAL_BOUND = 2 ** 32;

/** Told after every seal with a configured key: its id, the batch's count, and this process's total under that key. */
export type SealListener = (keyId: string, uses: number, sealedByThisProcess: number) => void;

/** A source of configured keys whose seals can be counted (one key, or a key per tenant). */
export interface SealCounting {
  /** Called after every seal; returns the unsubscribe. */
  onSeal(listener: SealListener): () => void;
}

/**
 * Configured keys: the current one seals, any of them opens the payloads that name it. The product's
 * keys have no tenant; a tenant's key file (static-tenant-keys.ts) is a source of its own whose
 * payloads say whose they are, and each source opens only its own.
 */
export class StaticKeySource implements KeySource, SealCounting {
  readonly keyId: string;
  private readonly sealing: SealingKey;
  private readonly keys: ReadonlyMap<string, KeyObject>;
  private sealed = 0;
  private readonly sealListeners = new Set<SealListener>();

  constructor(
    { keyId, key, decryptionKeys = new Map() }: EncryptionKeys,
    /** The tenant whose key file these keys are; undefined: the product's. */
    readonly tenant?: string,
  ) {
    if (keyId === '') throw new TypeError('EncryptionCodec: the key id must not be empty');
    // KeyObjects, made once: given raw bytes, every cipher would make its own (a third of its cost).
    const keys = new Map<string, KeyObject>();
    for (const [id, bytes] of decryptionKeys) keys.set(id, checkedKey(id, bytes));
    const current = checkedKey(keyId, key);
    keys.set(keyId, current);
    this.keyId = keyId;
    this.keys = keys;
    this.sealing = { key: current, keyId, metadata: staticMetadata(keyId, tenant) };
  }

  /** The ids of every key this source opens with (the current one first). */
  get keyIds(): string[] {
    return [this.keyId, ...[...this.keys.keys()].filter((id) => id !== this.keyId)];
  }

  sealingKey(uses = 1): SealingKey {
    this.sealed += uses;
    for (const listener of this.sealListeners) {
      try {
        listener(this.keyId, uses, this.sealed);
      } catch {
        // A metric or a log line never fails the seal it counts.
      }
    }
    return this.sealing;
  }

  /** How many payloads this process has sealed with the current key. */
  get sealedByThisProcess(): number {
    return this.sealed;
  }

  onSeal(listener: SealListener): () => void {
    this.sealListeners.add(listener);
    return () => this.sealListeners.delete(listener);
  }

  openingKey(metadata: PayloadMetadata): { key: KeyObject; keyId: string } {
    const envelope = readEnvelope(metadata);
    if (envelope) {
      throw new PayloadDecryptionError(
        envelope.keyId,
        `payload's data key is wrapped by key id "${envelope.keyId}" (version ${envelope.keyVersion}), and this process has no key provider for it: set PAYLOAD_KEY_PROVIDER as its writer had it`,
      );
    }
    const keyId = metadataText(metadata, KEY_ID_METADATA_KEY);
    if (keyId === undefined) throw new PayloadDecryptionError(undefined, `encrypted payload without ${KEY_ID_METADATA_KEY} metadata`);
    const tenant = sealingTenant(metadata, keyId);
    if (tenant !== this.tenant) {
      throw new PayloadDecryptionError(
        keyId,
        this.tenant === undefined
          ? `payload sealed with key "${keyId}" of tenant "${tenant}": this process has no keys per tenant in static mode (PAYLOAD_TENANT_KEYS_DIR with PAYLOAD_KEY_PROVIDER=static)`
          : `payload sealed with key "${keyId}" of ${tenant === undefined ? 'the product' : `tenant "${tenant}"`}, not of tenant "${this.tenant}"`,
      );
    }
    const key = this.keys.get(keyId);
    if (!key) throw new UnknownEncryptionKeyError(keyId, this.keyIds);
    return { key, keyId };
  }
}

function checkedKey(id: string, key: Uint8Array): KeyObject {
  if (key.length !== DATA_KEY_BYTES) throw new TypeError(`EncryptionCodec: key "${id}" must be ${DATA_KEY_BYTES} bytes, got ${key.length}`);
  return createSecretKey(key);
}
