/**
 * What a process's KMS has been doing, for its health endpoint and metrics: every call the envelope
 * keys make (a data key, an unwrap) and how it ended. A KMS that cannot answer now (down, sealed,
 * overloaded: KeyProviderUnavailableError) marks the provider unavailable until its next call
 * succeeds; a refusal (the policy, credentials) marks it refused; a payload it can never open (a
 * revoked version, a destroyed key) is the payload's fault, not the provider's, and is named as such. Cached keys keep the worker running
 * meanwhile, so this is a reason shown beside a running worker, never a reason to restart it.
 */
import type { DataKey, KeyWrapper } from './envelope-keys.js';
import type { EnvelopeMetadata } from './payload-format.js';
import { KeyDestroyedError, KeyProviderRefusedError, KeyProviderUnavailableError, KeyVersionRevokedError, PayloadDecryptionError } from './payload-errors.js';

export type KeyProviderCall = 'datakey' | 'decrypt';
/**
 * `ok`; `unavailable`: down or overloaded (retried); `refused`: the KMS said no to this process;
 * `revoked`: the payload's key version is below the key's minimum (revoked on purpose); `destroyed`:
 * the payload's key is gone (a forgotten lender's); `undecodable`: any other payload it can never open.
 * The last three are the payload's, not the provider's: the provider stays ok.
 */
export type KeyProviderOutcome = 'ok' | 'unavailable' | 'refused' | 'revoked' | 'destroyed' | 'undecodable';

export interface KeyProviderStatus {
  /** e.g. "vault-transit:aggregation-payloads" */
  readonly keyId: string;
  /** `ok` until a call fails for the provider's reasons; back to `ok` on the next call that succeeds. */
  readonly state: 'ok' | 'unavailable' | 'refused';
  /** Since when it has been in this state (ISO; the process's start while nothing was asked yet). */
  readonly since: string;
  /** Why, while not ok: the last failure's message. */
  readonly reason?: string | undefined;
  readonly calls: Readonly<Record<KeyProviderCall, number>>;
  readonly failures: number;
  /** `stopped` once an outage outlasted the last data key's bounds (SealingStoppedError): nothing is sealed until the KMS answers. */
  readonly sealing: 'ok' | 'stopped';
  /** Why sealing stopped, while it is. */
  readonly sealingStoppedBecause?: string | undefined;
}

/** `error`: what the call threw, when it failed. */
type Listener = (call: KeyProviderCall, outcome: KeyProviderOutcome, status: KeyProviderStatus, error?: unknown) => void;

export class KeyProviderHealth {
  private state: KeyProviderStatus['state'] = 'ok';
  private since: number;
  private reason: string | undefined;
  private readonly calls: Record<KeyProviderCall, number> = { datakey: 0, decrypt: 0 };
  private failures = 0;
  private readonly listeners = new Set<Listener>();
  private sealingStoppedBecause: string | undefined;
  private readonly sealingListeners = new Set<(status: KeyProviderStatus) => void>();

  constructor(
    readonly keyId: string,
    private readonly now: () => number = Date.now,
  ) {
    this.since = now();
  }

  get status(): KeyProviderStatus {
    return {
      keyId: this.keyId,
      state: this.state,
      since: new Date(this.since).toISOString(),
      ...(this.reason === undefined ? {} : { reason: this.reason }),
      calls: { ...this.calls },
      failures: this.failures,
      sealing: this.sealingStoppedBecause === undefined ? 'ok' : 'stopped',
      ...(this.sealingStoppedBecause === undefined ? {} : { sealingStoppedBecause: this.sealingStoppedBecause }),
    };
  }

  /** Sealing stopped at an outage bound (the reason), or goes on again (undefined); listeners hear each change once. */
  sealingChanged(stoppedBecause: string | undefined): void {
    if ((stoppedBecause === undefined) === (this.sealingStoppedBecause === undefined)) {
      this.sealingStoppedBecause = stoppedBecause;
      return;
    }
    this.sealingStoppedBecause = stoppedBecause;
    const status = this.status;
    for (const listener of this.sealingListeners) {
      try {
        listener(status);
      } catch {
        // A log line never fails the seal it describes.
      }
    }
  }

  /** Called when sealing stops or goes on again; returns the unsubscribe. */
  onSealing(listener: (status: KeyProviderStatus) => void): () => void {
    this.sealingListeners.add(listener);
    return () => this.sealingListeners.delete(listener);
  }

  /** Called on every call's end, with the status after it; returns the unsubscribe. */
  onCall(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  record(call: KeyProviderCall, error?: unknown): void {
    this.calls[call] += 1;
    const outcome = outcomeOf(error);
    if (outcome === 'unavailable' || outcome === 'refused') this.failures += 1;
    const next: KeyProviderStatus['state'] = outcome === 'unavailable' || outcome === 'refused' ? outcome : 'ok';
    if (next !== this.state) {
      this.state = next;
      this.since = this.now();
    }
    this.reason = next === 'ok' ? undefined : error instanceof Error ? error.message : String(error);
    const status = this.status;
    for (const listener of this.listeners) {
      try {
        listener(call, outcome, status, error);
      } catch {
        // A metric or a log line never fails the call it describes.
      }
    }
  }
}

function outcomeOf(error: unknown): KeyProviderOutcome {
  if (error === undefined) return 'ok';
  if (error instanceof KeyProviderUnavailableError) return 'unavailable';
  if (error instanceof KeyProviderRefusedError) return 'refused';
  if (error instanceof KeyVersionRevokedError) return 'revoked';
  if (error instanceof KeyDestroyedError) return 'destroyed';
  if (error instanceof PayloadDecryptionError) return 'undecodable';
  // Anything else is unexpected of a KMS client: the provider is not known to work.
  return 'unavailable';
}

/** The KMS as the envelope keys see it, with each call recorded in `health`. */
export class ObservedKeyWrapper implements KeyWrapper {
  constructor(
    private readonly wrapper: KeyWrapper,
    readonly health: KeyProviderHealth,
  ) {}

  get keyId(): string {
    return this.wrapper.keyId;
  }

  get tenant(): string | undefined {
    return this.wrapper.tenant;
  }

  forTenant(tenant: string): KeyWrapper {
    return new ObservedKeyWrapper(this.wrapper.forTenant(tenant), this.health);
  }

  async newDataKey(): Promise<DataKey> {
    return this.observed('datakey', () => this.wrapper.newDataKey());
  }

  async unwrap(envelope: EnvelopeMetadata): Promise<Uint8Array> {
    return this.observed('decrypt', () => this.wrapper.unwrap(envelope));
  }

  private async observed<T>(call: KeyProviderCall, run: () => Promise<T>): Promise<T> {
    try {
      const result = await run();
      this.health.record(call);
      return result;
    } catch (error) {
      this.health.record(call, error);
      throw error;
    }
  }
}
