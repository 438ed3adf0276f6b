/**
 * What the key-provider tests share (vault-transit.test.ts, aws-kms.test.ts): a process's codec on a
 * real KMS adapter whose calls are counted and whose clock the test moves, and one payload through it.
 */
import assert from 'node:assert/strict';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import { EncryptionCodec } from '../../src/codec/encryption-codec.js';
import { EnvelopeKeySource, type DataKeyCacheSettings, type KeyWrapper } from '../../src/codec/envelope-keys.js';
import type { StaticKeySource } from '../../src/codec/key-source.js';
import type { EnvelopeMetadata } from '../../src/codec/payload-format.js';

/** The settings' defaults. */
export const KMS_TEST_CACHE: DataKeyCacheSettings = {
  dataKeyLifetimeMs: 900_000,
  dataKeyMaxUses: 100_000,
  unwrappedKeyLifetimeMs: 3_600_000,
  unwrappedKeyCacheSize: 1_000,
  outageSealingMs: 14_400_000,
  outageSealingMaxUses: 1_000_000,
};
export const SECRET = { session: { username: 'no_mfa', password: 'Everyday' } };
export const text = (bytes: Uint8Array | null | undefined) => Buffer.from(bytes ?? new Uint8Array()).toString('utf8');
export const payload = (value: unknown): Payload => defaultPayloadConverter.toPayload(value);

/** A real KMS adapter, its calls counted. */
export class CountedKms implements KeyWrapper {
  datakeys = 0;
  unwraps = 0;
  constructor(private readonly inner: KeyWrapper) {}
  get keyId(): string {
    return this.inner.keyId;
  }
  get tenant(): string | undefined {
    return this.inner.tenant;
  }
  /** The tenant's wrapper, its calls counted with this one's. */
  forTenant(tenant: string): KeyWrapper {
    const inner = this.inner.forTenant(tenant);
    return {
      keyId: inner.keyId,
      tenant,
      forTenant: (other) => this.forTenant(other),
      newDataKey: () => {
        this.datakeys += 1;
        return inner.newDataKey();
      },
      unwrap: (envelope) => {
        this.unwraps += 1;
        return inner.unwrap(envelope);
      },
    };
  }
  newDataKey() {
    this.datakeys++;
    return this.inner.newDataKey();
  }
  unwrap(envelope: EnvelopeMetadata) {
    this.unwraps++;
    return this.inner.unwrap(envelope);
  }
}

/** A process's codec on `wrapper`, its KMS calls counted and its clock movable. */
export function countedProcess(wrapper: KeyWrapper, cache: Partial<DataKeyCacheSettings> = {}, staticKeys?: StaticKeySource) {
  const clock = { now: Date.now() };
  const kms = new CountedKms(wrapper);
  const source = new EnvelopeKeySource(kms, { ...KMS_TEST_CACHE, ...cache }, staticKeys, () => clock.now);
  return { codec: new EncryptionCodec(source), kms, clock };
}

export async function one(codec: EncryptionCodec, value: unknown = SECRET): Promise<Payload> {
  const [encoded] = await codec.encode([payload(value)]);
  return encoded ?? assert.fail('one payload encoded');
}
