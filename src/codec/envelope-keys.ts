/**
 * Envelope encryption's keys, cached so that a KMS is never asked once per payload: one data key at
 * a time seals new payloads, for a bounded lifetime and a bounded number of payloads, then the next
 * one is asked for; the data keys unwrapped for reading (ours included) stay in a bounded cache for
 * a lifetime. Concurrent callers share one request. While the KMS is down, unwrapped keys keep
 * reading until they expire, and the last data key keeps sealing past its lifetime (the KMS asked
 * again every few seconds) for a bounded time and number of payloads, then sealing stops
 * (SealingStoppedError, retryable, shown in the health); a key that was never made or unwrapped fails
 * with the KMS's KeyProviderUnavailableError (the task retries). A revoked key version's data keys
 * leave the cache as soon as the KMS refuses one of them.
 */
import { createSecretKey, type KeyObject } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { KeySource, SealingKey } from './key-source.js';
import { KeyProviderUnavailableError, KeyVersionRevokedError, PayloadDecryptionError, SealingStoppedError } from './payload-errors.js';
import {
  DATA_KEY_BYTES,
  envelopeMetadata,
  KEY_ID_METADATA_KEY,
  metadataText,
  readEnvelope,
  type EnvelopeMetadata,
  type PayloadMetadata,
} from './payload-format.js';

/** A new data key, in clear and as the KMS wrapped it. */
export interface DataKey {
  readonly plaintext: Uint8Array;
  readonly wrappedKey: string;
  readonly keyVersion: number;
  /** The key id to write beside its payloads when the KMS names the key more exactly than `KeyWrapper.keyId` (AWS: the key ARN behind an alias). */
  readonly keyId?: string | undefined;
}

/** What a KMS does for envelope encryption (vault-transit.ts, aws-kms.ts). */
export interface KeyWrapper {
  /** "<provider>:<KMS key>", written beside each payload its data keys seal. */
  readonly keyId: string;
  /** The tenant whose key this wrapper's data keys are made under (written beside them); undefined: the product's. */
  readonly tenant?: string | undefined;
  newDataKey(): Promise<DataKey>;
  /** The data key of a payload's envelope; PayloadDecryptionError when this KMS never can (revoked, destroyed, another provider). */
  unwrap(envelope: EnvelopeMetadata): Promise<Uint8Array>;
  /** The same KMS making data keys under `tenant`'s key (tenant-keys.ts). */
  forTenant(tenant: string): KeyWrapper;
}

/** How long and how much a data key is used (PAYLOAD_DATA_KEY_*, PAYLOAD_UNWRAPPED_KEY_*). */
export interface DataKeyCacheSettings {
  /** A data key seals new payloads for this long... */
  readonly dataKeyLifetimeMs: number;
  /** ...or this many payloads, whichever comes first. */
  readonly dataKeyMaxUses: number;
  /** An unwrapped data key is kept this long... */
  readonly unwrappedKeyLifetimeMs: number;
  /** ...and at most this many of them. */
  readonly unwrappedKeyCacheSize: number;
  /** While the KMS cannot make a new data key, the last one seals past its lifetime for at most this long... */
  readonly outageSealingMs: number;
  /** ...and at most this many payloads past its own bound; then sealing stops until the KMS answers. */
  readonly outageSealingMaxUses: number;
}

/** Told when sealing stops at an outage bound (the reason) and when it goes on again (undefined): the health shows it. */
export type SealingObserver = (stoppedBecause: string | undefined) => void;

interface CurrentDataKey {
  readonly sealing: SealingKey;
  readonly keyVersion: number;
  readonly expiresAt: number;
  usesLeft: number;
  /** Payloads sealed with it in all, its time past the lifetime included. */
  used: number;
}

/**
 * Whatever the settings, one data key seals at most this many payloads in all: far below AES-GCM's
 * 2^32 bound for random 96-bit nonces under one key (NIST SP 800-38D).
 */
export const STALE_DATA_KEY_MAX_USES = 2 ** 31;
/** After the KMS failed to make a data key, how long the last one is used before the KMS is asked again. */
export const DATA_KEY_RETRY_MS = 5_000;

export class EnvelopeKeySource implements KeySource {
  private current: CurrentDataKey | undefined;
  private making: Promise<CurrentDataKey> | undefined;
  /** While the KMS cannot make a data key: when to ask again (meanwhile the last one seals). */
  private retryMakingAt: number | undefined;
  private readonly unwrapped: LRUCache<string, KeyObject>;
  private readonly unwrapping = new Map<string, Promise<KeyObject>>();

  constructor(
    private readonly wrapper: KeyWrapper,
    private readonly settings: DataKeyCacheSettings,
    /** Configured keys, to read payloads of the static format written before the switch. */
    private readonly staticKeys: KeySource | undefined = undefined,
    private readonly now: () => number = Date.now,
    private readonly onSealing: SealingObserver = () => undefined,
  ) {
    this.unwrapped = unwrappedKeyCache(settings.unwrappedKeyCacheSize, settings.unwrappedKeyLifetimeMs, now);
  }

  get keyId(): string {
    return this.wrapper.keyId;
  }

  sealingKey(uses: number): SealingKey | Promise<SealingKey> {
    return this.take(this.current, uses) ?? this.staleWhileUnavailable(uses) ?? this.nextSealingKeyOrStale(uses);
  }

  openingKey(metadata: PayloadMetadata): { key: KeyObject; keyId: string } | Promise<{ key: KeyObject; keyId: string }> {
    const envelope = readEnvelope(metadata);
    if (!envelope) {
      if (this.staticKeys) return this.staticKeys.openingKey(metadata);
      const keyId = metadataText(metadata, KEY_ID_METADATA_KEY);
      throw new PayloadDecryptionError(
        keyId,
        `payload encrypted with configured key id "${keyId ?? '(none)'}" (the static format), and this process has no configured keys: set PAYLOAD_ENCRYPTION_KEY and PAYLOAD_ENCRYPTION_KEY_ID to the key that wrote it`,
      );
    }
    const cacheKey = unwrappedCacheKey(envelope.keyId, envelope.keyVersion, envelope.wrappedKey, envelope.tenant);
    const cached = this.unwrapped.get(cacheKey);
    if (cached) return { key: cached, keyId: envelope.keyId };
    let pending = this.unwrapping.get(cacheKey);
    if (!pending) {
      pending = this.unwrap(envelope, cacheKey).finally(() => this.unwrapping.delete(cacheKey));
      this.unwrapping.set(cacheKey, pending);
    }
    return pending.then((key) => ({ key, keyId: envelope.keyId }));
  }

  /** The current data key's sealing key if it may seal `uses` more payloads now. */
  private take(current: CurrentDataKey | undefined, uses: number): SealingKey | undefined {
    if (!current || current.expiresAt <= this.now() || current.usesLeft < uses) return undefined;
    current.usesLeft -= uses;
    current.used += uses;
    return current.sealing;
  }

  /**
   * The last data key, past its lifetime or uses, while the KMS could not make the next one and is
   * not to be asked again yet: a process that has sealed keeps sealing through a KMS outage (a
   * worker that cannot encode its task's completion stops), and asks the KMS again every
   * DATA_KEY_RETRY_MS rather than on every payload.
   */
  private staleWhileUnavailable(uses: number, cause?: unknown): SealingKey | undefined {
    const current = this.current;
    if (this.retryMakingAt === undefined || this.now() >= this.retryMakingAt || !current) return undefined;
    const stopped = this.outageBoundReached(current, uses, cause);
    if (stopped) {
      this.onSealing(stopped.message);
      throw stopped;
    }
    current.used += uses;
    return current.sealing;
  }

  /** Why the last data key may seal no more during this outage, or undefined. */
  private outageBoundReached(current: CurrentDataKey, uses: number, cause: unknown): SealingStoppedError | undefined {
    const { outageSealingMs, outageSealingMaxUses, dataKeyMaxUses } = this.settings;
    const pastLifetimeMs = this.now() - current.expiresAt;
    if (pastLifetimeMs > outageSealingMs) {
      return new SealingStoppedError(
        this.wrapper.keyId,
        'time',
        `the KMS has made no data key since the last one's lifetime ended ${Math.round(pastLifetimeMs / 1000)} s ago, past the ${outageSealingMs / 1000} s PAYLOAD_DATA_KEY_OUTAGE_MAX_S allows, so nothing more is sealed with it`,
        { cause },
      );
    }
    const maxUses = Math.min(STALE_DATA_KEY_MAX_USES, dataKeyMaxUses + outageSealingMaxUses);
    if (current.used + uses > maxUses) {
      return new SealingStoppedError(
        this.wrapper.keyId,
        'uses',
        `the last data key has sealed ${current.used} payloads, and ${uses} more would pass the ${maxUses} its bound and PAYLOAD_DATA_KEY_OUTAGE_MAX_USES allow, so nothing more is sealed with it`,
        { cause },
      );
    }
    return undefined;
  }

  private async nextSealingKeyOrStale(uses: number): Promise<SealingKey> {
    try {
      const sealing = await this.nextSealingKey(uses);
      if (this.retryMakingAt !== undefined) this.onSealing(undefined);
      this.retryMakingAt = undefined;
      return sealing;
    } catch (error) {
      if (!(error instanceof KeyProviderUnavailableError)) throw error;
      this.retryMakingAt = this.now() + DATA_KEY_RETRY_MS;
      const stale = this.staleWhileUnavailable(uses, error);
      // Nothing sealed yet (a process that starts during the outage): nothing to stand in.
      if (!stale) throw error;
      return stale;
    }
  }

  private async nextSealingKey(uses: number): Promise<SealingKey> {
    for (;;) {
      // Every batch waiting for a new data key shares one request.
      this.making ??= this.makeDataKey().finally(() => {
        this.making = undefined;
      });
      const made = await this.making;
      const taken = this.take(this.current, uses);
      if (taken) return taken;
      // A batch larger than a data key's uses (or a lifetime shorter than the wait) still gets the key made for it.
      if (this.current === made && made.usesLeft === this.settings.dataKeyMaxUses) {
        made.usesLeft = 0;
        made.used += uses;
        return made.sealing;
      }
    }
  }

  private async makeDataKey(): Promise<CurrentDataKey> {
    const { plaintext, wrappedKey, keyVersion, keyId = this.wrapper.keyId } = await this.wrapper.newDataKey();
    const key = dataKeyOf(plaintext, keyId);
    const made: CurrentDataKey = {
      sealing: { key, keyId, metadata: envelopeMetadata({ keyId, keyVersion, wrappedKey, tenant: this.wrapper.tenant }) },
      keyVersion,
      expiresAt: this.now() + this.settings.dataKeyLifetimeMs,
      usesLeft: this.settings.dataKeyMaxUses,
      used: 0,
    };
    this.current = made;
    // This process's own payloads open without asking the KMS.
    this.unwrapped.set(unwrappedCacheKey(keyId, keyVersion, wrappedKey, this.wrapper.tenant), key);
    return made;
  }

  private async unwrap(envelope: EnvelopeMetadata, cacheKey: string): Promise<KeyObject> {
    let plaintext: Uint8Array;
    try {
      plaintext = await this.wrapper.unwrap(envelope);
    } catch (error) {
      if (error instanceof KeyVersionRevokedError) this.forgetRevoked(error.keyId, error.version);
      throw error;
    }
    const key = dataKeyOf(plaintext, envelope.keyId);
    this.unwrapped.set(cacheKey, key);
    return key;
  }

  /**
   * The KMS refused a version: every data key of that version or below leaves memory now (they would
   * go on reading payloads the KMS no longer opens), the sealing one too.
   */
  private forgetRevoked(keyId: string, version: number): void {
    for (const cacheKey of [...this.unwrapped.keys()]) {
      const [id, keyVersion] = cacheKey.split('\n');
      if (id === keyId && Number(keyVersion) <= version) this.unwrapped.delete(cacheKey);
    }
    if (this.current && this.current.sealing.keyId === keyId && this.current.keyVersion <= version) this.current = undefined;
  }
}

/**
 * The unwrapped data keys: at most `size` of them, the least recently used going first, each for
 * `lifetimeMs` from its set (a read does not lengthen it) and gone at its expiry by lru-cache's own
 * unref'd timer, not when next asked for: a key past its lifetime is not kept in memory. `now` is
 * the clock tests move (no resolution cache, so a moved clock is read at once).
 */
export function unwrappedKeyCache(size: number, lifetimeMs: number, now: () => number = Date.now): LRUCache<string, KeyObject> {
  return new LRUCache<string, KeyObject>({ max: size, ttl: lifetimeMs, ttlAutopurge: true, ttlResolution: 0, updateAgeOnGet: false, perf: { now } });
}

/**
 * What names an unwrapped data key in the cache: its key id, key version, wrapped bytes and tenant (a
 * KMS binds the tenant to the wrapped key, so a payload relabelled to another tenant is not a hit).
 */
function unwrappedCacheKey(keyId: string, keyVersion: number, wrappedKey: string, tenant: string | undefined): string {
  return `${keyId}\n${keyVersion}\n${wrappedKey}\n${tenant ?? ''}`;
}

/** A KeyObject of the data key's bytes, which are then zeroed (the KeyObject keeps its own copy). */
function dataKeyOf(plaintext: Uint8Array, keyId: string): KeyObject {
  if (plaintext.length !== DATA_KEY_BYTES)
    throw new PayloadDecryptionError(keyId, `the KMS returned a data key of ${plaintext.length} bytes for key id "${keyId}", not ${DATA_KEY_BYTES}`);
  const key = createSecretKey(plaintext);
  plaintext.fill(0);
  return key;
}
