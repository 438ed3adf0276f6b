/**
 * The vault-transit key provider against a real OpenBao (`bao server -dev`, test/helpers/openbao.ts):
 * envelope-v1 payloads whose data keys the transit engine made and unwraps; how many KMS calls N
 * payloads cost; a data key's lifetime and uses, and rotation; revocation by min_decryption_version
 * as a typed error naming the version; least-privilege token and AppRole auth; TLS with a CA file and
 * a namespace; static payloads still read; and, last, OpenBao stopped: cached keys keep working (the
 * last data key seals past its lifetime), anything else is a typed, retryable error.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import { EncryptionCodec } from '../../src/codec/encryption-codec.js';
import { DATA_KEY_RETRY_MS, EnvelopeKeySource, type DataKeyCacheSettings } from '../../src/codec/envelope-keys.js';
import { StaticKeySource } from '../../src/codec/key-source.js';
import {
  KeyProviderRefusedError,
  KeyProviderUnavailableError,
  KeyVersionRevokedError,
  PayloadDecryptionError,
  SealingStoppedError,
} from '../../src/codec/payload-errors.js';
import { ENVELOPE_FORMAT } from '../../src/codec/payload-format.js';
import { VaultClient, type VaultSettings } from '../../src/codec/vault-client.js';
import { VaultTransit } from '../../src/codec/vault-transit.js';
import { countedProcess, KMS_TEST_CACHE, one, payload, SECRET, text } from '../helpers/kms-codec.js';
import { startOpenBao, workerPolicy, type OpenBaoServer } from '../helpers/openbao.js';

/** A process's codec on `settings`, its transit calls counted and its clock movable. */
function processOn(settings: VaultSettings, options: { cache?: Partial<DataKeyCacheSettings>; key?: string; staticKeys?: StaticKeySource } = {}) {
  const transit = new VaultTransit(new VaultClient(settings, 'vault-transit'), { mount: 'transit', key: options.key ?? 'aggregation-payloads' });
  const { codec, kms, clock } = countedProcess(transit, options.cache, options.staticKeys);
  return { codec, transit: kms, clock };
}

const versionOf = (encoded: Payload) => text(encoded.metadata?.['encryption-key-version']);

let bao: OpenBaoServer;
let workerToken: string;

before(async () => {
  bao = await startOpenBao();
  workerToken = await bao.token('worker', workerPolicy(bao.transitKey));
});

after(async () => {
  await bao?.stop();
});

describe('the vault-transit key provider on OpenBao', () => {
  it('writes envelope-v1 payloads whose wrapped data key and its version are in the metadata, read by another process through the KMS', async () => {
    const writer = processOn(bao.settings({ auth: { kind: 'token', token: workerToken } }));
    const encoded = await one(writer.codec);
    assert.equal(text(encoded.metadata?.encoding), 'binary/encrypted');
    assert.equal(text(encoded.metadata?.['encryption-format']), ENVELOPE_FORMAT);
    assert.equal(text(encoded.metadata?.['encryption-key-id']), 'vault-transit:aggregation-payloads');
    assert.equal(versionOf(encoded), '1');
    assert.match(text(encoded.metadata?.['encryption-wrapped-key']), /^vault:v1:[A-Za-z0-9+/]+=*$/);
    assert.ok(!text(encoded.data).includes('Everyday'));
    const reader = processOn(bao.settings({ auth: { kind: 'token', token: workerToken } }));
    const [decoded] = await reader.codec.decode([encoded]);
    assert.deepEqual(defaultPayloadConverter.fromPayload(decoded ?? assert.fail('decoded')), SECRET);
    assert.equal(reader.transit.unwraps, 1, 'the reader unwrapped the data key once, through decrypt');
  });

  it('asks the KMS once per data key, never once per payload: 1,000 payloads written one by one and read by another process', async () => {
    const N = 1_000;
    const writer = processOn(bao.settings({ auth: { kind: 'token', token: workerToken } }));
    const encoded: Payload[] = [];
    for (let index = 0; index < N; index++) encoded.push(await one(writer.codec, { index }));
    const reader = processOn(bao.settings({ auth: { kind: 'token', token: workerToken } }));
    // Read as a worker does, a few at a time and concurrently: concurrent misses share one unwrap.
    const decoded = (await Promise.all(Array.from({ length: N / 10 }, (_, batch) => reader.codec.decode(encoded.slice(batch * 10, batch * 10 + 10))))).flat();
    assert.deepEqual(
      decoded.map((p) => defaultPayloadConverter.fromPayload<{ index: number }>(p).index),
      Array.from({ length: N }, (_, index) => index),
    );
    const [ownRead] = await writer.codec.decode([encoded[0] ?? assert.fail('encoded')]);
    assert.ok(ownRead);
    const calls = { datakey: writer.transit.datakeys, decryptByWriter: writer.transit.unwraps, decryptByReader: reader.transit.unwraps };
    process.stdout.write(`KMS calls for ${N} payloads: ${JSON.stringify(calls)}\n`);
    assert.deepEqual(calls, { datakey: 1, decryptByWriter: 0, decryptByReader: 1 });
  });

  it('makes a new data key when one has sealed its maximum or lived its lifetime; after a rotation, new payloads use the new version within one lifetime', async () => {
    await bao.createTransitKey('rotating');
    const writer = processOn(bao.settings(), { key: 'rotating', cache: { dataKeyMaxUses: 10 } });
    const first = await Promise.all(Array.from({ length: 25 }, () => one(writer.codec)));
    assert.equal(writer.transit.datakeys, 3, '25 payloads at 10 a data key');
    assert.equal(new Set(first.map((p) => text(p.metadata?.['encryption-wrapped-key']))).size, 3);
    const bigBatch = await writer.codec.encode(Array.from({ length: 15 }, () => payload('many')));
    assert.equal(new Set(bigBatch.map((p) => text(p.metadata?.['encryption-wrapped-key']))).size, 1, 'a batch over the maximum gets one fresh key');

    const lasting = processOn(bao.settings(), { key: 'rotating', cache: { dataKeyLifetimeMs: 60_000 } });
    assert.equal(versionOf(await one(lasting.codec)), '1');
    await bao.api('POST', 'transit/keys/rotating/rotate', {});
    assert.equal(versionOf(await one(lasting.codec)), '1', 'the data key in use still seals, within its lifetime');
    lasting.clock.now += 60_001;
    const rotated = await one(lasting.codec);
    assert.equal(versionOf(rotated), '2', 'a data key made after the rotation is wrapped by version 2');
    assert.match(text(rotated.metadata?.['encryption-wrapped-key']), /^vault:v2:/);
    assert.equal(lasting.transit.datakeys, 2);
    const reader = processOn(bao.settings(), { key: 'rotating' });
    assert.equal((await reader.codec.decode([...first, rotated])).length, 26, 'both versions still read');
  });

  it('raises KeyVersionRevokedError naming the version when min_decryption_version is above it', async () => {
    await bao.createTransitKey('revoked');
    const writer = processOn(bao.settings(), { key: 'revoked' });
    const old = await one(writer.codec);
    assert.equal(versionOf(old), '1');
    // Another process's payload of the same version, and a reader that unwrapped the first before the revocation.
    const another = await one(processOn(bao.settings(), { key: 'revoked' }).codec);
    const earlyReader = processOn(bao.settings(), { key: 'revoked' });
    await earlyReader.codec.decode([old]);
    await bao.api('POST', 'transit/keys/revoked/rotate', {});
    await bao.api('POST', 'transit/keys/revoked/config', { min_decryption_version: 2 });
    // Once the KMS refuses it a version-1 key, every version-1 data key it holds leaves its memory:
    // the payload it had read before reads no more.
    await assert.rejects(earlyReader.codec.decode([another]), KeyVersionRevokedError);
    await assert.rejects(earlyReader.codec.decode([old]), KeyVersionRevokedError, 'its cached version-1 key was dropped');
    const reader = processOn(bao.settings(), { key: 'revoked' });
    await assert.rejects(reader.codec.decode([old]), (error: unknown) => {
      assert.ok(error instanceof KeyVersionRevokedError, String(error));
      assert.ok(error instanceof PayloadDecryptionError, 'a payload that can no longer be read, not an outage');
      assert.equal(error.version, 1);
      assert.equal(error.keyName, 'revoked');
      assert.equal(error.keyId, 'vault-transit:revoked');
      assert.match(error.message, /key version revoked: .* version 1 of key "revoked", .* min_decryption_version/);
      return true;
    });
    // A worker does not mark a revoked payload as it marks a stray message: the whole history is
    // revoked (its start input first), so the workflow task fails naming the version, and goes on if
    // the minimum is lowered again, where a marked start input would fail the connection for good.
    const worker = new EncryptionCodec(
      new EnvelopeKeySource(new VaultTransit(new VaultClient(bao.settings(), 'vault-transit'), { mount: 'transit', key: 'revoked' }), KMS_TEST_CACHE),
      { markUndecodableMessages: true },
    );
    await assert.rejects(
      worker.decode([old], { type: 'workflow', namespace: 'default', workflowId: 'w' } as never),
      (error: unknown) => error instanceof KeyVersionRevokedError && error.version === 1,
    );
    await bao.api('POST', 'transit/keys/revoked/config', { min_decryption_version: 1 });
    const [readAgain] = await processOn(bao.settings(), { key: 'revoked' }).codec.decode([old]);
    assert.deepEqual(defaultPayloadConverter.fromPayload(readAgain ?? assert.fail('decoded')), SECRET, 'the minimum lowered again: the same payload reads');
  });

  it('works on AppRole with the least policy (datakey and decrypt on its key); a token without datakey is refused by type', async () => {
    const { roleId, secretId } = await bao.appRole('payload-worker', workerPolicy(bao.transitKey));
    const viaAppRole = processOn(bao.settings({ auth: { kind: 'approle', mount: 'approle', roleId, secretId } }));
    const encoded = await one(viaAppRole.codec);
    const reader = processOn(bao.settings({ auth: { kind: 'approle', mount: 'approle', roleId, secretId } }));
    assert.equal((await reader.codec.decode([encoded])).length, 1);

    const decryptOnly = await bao.token('decrypt-only', `path "transit/decrypt/${bao.transitKey}" { capabilities = ["update"] }\n`);
    const readerOnly = processOn(bao.settings({ auth: { kind: 'token', token: decryptOnly } }));
    assert.equal((await readerOnly.codec.decode([encoded])).length, 1, 'a reader needs decrypt only');
    await assert.rejects(readerOnly.codec.encode([payload('x')]), (error: unknown) => {
      assert.ok(error instanceof KeyProviderRefusedError, String(error));
      assert.equal(error.status, 403);
      assert.equal(error.operation, 'datakey');
      return true;
    });
    const badSecret = processOn(bao.settings({ auth: { kind: 'approle', mount: 'approle', roleId, secretId: 'not-the-secret' } }));
    await assert.rejects(badSecret.codec.encode([payload('x')]), (error: unknown) => error instanceof KeyProviderRefusedError && error.operation === 'login');
  });

  it('still reads the static payloads written before the switch, with the configured keys kept', async () => {
    const keys = { keyId: 'default', key: Buffer.alloc(32, 3) };
    const before = await one(new EncryptionCodec(keys));
    const switched = processOn(bao.settings(), { staticKeys: new StaticKeySource(keys) });
    const [decoded] = await switched.codec.decode([before]);
    assert.deepEqual(defaultPayloadConverter.fromPayload(decoded ?? assert.fail('decoded')), SECRET);
    const withoutKeys = processOn(bao.settings());
    await assert.rejects(
      withoutKeys.codec.decode([before]),
      /configured key id "default" \(the static format\), and this process has no configured keys: set PAYLOAD_ENCRYPTION_KEY and PAYLOAD_ENCRYPTION_KEY_ID/,
    );
    await assert.rejects(
      new EncryptionCodec(keys).decode([await one(switched.codec)]),
      /wrapped by key id "vault-transit:aggregation-payloads" .*no key provider for it/,
    );
  });

  it('refuses bad envelope metadata by name', async () => {
    const encoded = await one(processOn(bao.settings()).codec);
    const withMetadata = (key: string, value: string): Payload => ({ ...encoded, metadata: { ...encoded.metadata, [key]: Buffer.from(value) } });
    const reader = processOn(bao.settings());
    await assert.rejects(reader.codec.decode([withMetadata('encryption-key-version', 'two')]), /encryption-key-version "two": must be a key version/);
    await assert.rejects(
      reader.codec.decode([withMetadata('encryption-key-version', '7')]),
      /disagrees with itself: encryption-key-version 7, but its wrapped key is of version 1/,
    );
    await assert.rejects(
      reader.codec.decode([withMetadata('encryption-format', 'envelope-v9')]),
      /encryption-format "envelope-v9", which this process does not read/,
    );
    await assert.rejects(reader.codec.decode([withMetadata('encryption-key-id', 'aws-kms:x')]), /not by a vault-transit key/);
  });
});

describe('the vault-transit key provider over TLS, in a namespace', () => {
  let tlsBao: OpenBaoServer;
  before(async () => {
    tlsBao = await startOpenBao({ tls: true });
    await tlsBao.api('POST', 'sys/namespaces/team-a', {});
    await tlsBao.api('POST', 'sys/mounts/transit', { type: 'transit' }, 'team-a');
    await tlsBao.createTransitKey('aggregation-payloads', 'team-a');
  });
  after(async () => {
    await tlsBao?.stop();
  });

  it('trusts the CA file it is given and sends X-Vault-Namespace', async () => {
    assert.match(tlsBao.address, /^https:/);
    const inNamespace = processOn(tlsBao.settings({ namespace: 'team-a' }));
    const encoded = await one(inNamespace.codec);
    assert.equal((await processOn(tlsBao.settings({ namespace: 'team-a' })).codec.decode([encoded])).length, 1);
    // The same key name outside the namespace is another key: its data key does not unwrap there.
    await assert.rejects(processOn(tlsBao.settings()).codec.decode([encoded]), PayloadDecryptionError);
    await assert.rejects(processOn(tlsBao.settings({ namespace: 'team-a', caCertificate: undefined })).codec.encode([payload('x')]), (error: unknown) => {
      assert.ok(error instanceof KeyProviderUnavailableError, String(error));
      assert.match(error.message, /certificate/i);
      return true;
    });
  });
});

describe('the vault-transit key provider with OpenBao stopped', () => {
  it('keeps encoding and decoding on cached keys within their lifetime, then fails with a typed, retryable error', async () => {
    const outage = await startOpenBao();
    const writer = processOn(outage.settings(), { cache: { dataKeyLifetimeMs: 60_000, unwrappedKeyLifetimeMs: 120_000, outageSealingMs: 600_000 } });
    const other = processOn(outage.settings());
    // Its data key bounded at 2 payloads, and 3 more in an outage.
    const busy = processOn(outage.settings(), { cache: { dataKeyMaxUses: 2, outageSealingMaxUses: 3 } });
    const written = await one(writer.codec);
    const foreign = await one(other.codec);
    await busy.codec.encode([payload(1), payload(2)]);
    const reader = processOn(outage.settings(), { cache: { unwrappedKeyLifetimeMs: 120_000 } });
    await reader.codec.decode([written]);
    await outage.stop();

    const during = await one(writer.codec, 'during the outage');
    assert.equal((await writer.codec.decode([written, during])).length, 2, 'the writer seals and reads on its data key');
    assert.equal((await reader.codec.decode([written, during])).length, 2, 'the reader reads on its cached unwrapped key');
    await assert.rejects(reader.codec.decode([foreign]), (error: unknown) => {
      assert.ok(error instanceof KeyProviderUnavailableError, String(error));
      assert.ok(!(error instanceof PayloadDecryptionError), 'never a payload error: a worker must not mark a message for good');
      assert.equal(error.retryable, true);
      assert.equal(error.operation, 'decrypt');
      return true;
    });
    // Past its data key's lifetime, the writer keeps sealing on it (a worker that cannot encode its
    // task's completion stops), asking the KMS again only every DATA_KEY_RETRY_MS.
    writer.clock.now += 60_001;
    const asked = writer.transit.datakeys;
    const stale = await one(writer.codec, 'after the lifetime');
    assert.equal(text(stale.metadata?.['encryption-wrapped-key']), text(during.metadata?.['encryption-wrapped-key']), 'sealed with the last data key');
    assert.equal(writer.transit.datakeys, asked + 1, 'the KMS was asked once for the next one');
    await one(writer.codec, 'again, soon after');
    assert.equal(writer.transit.datakeys, asked + 1, 'and not again within the retry pause');
    writer.clock.now += DATA_KEY_RETRY_MS;
    await one(writer.codec, 'after the retry pause');
    assert.equal(writer.transit.datakeys, asked + 2, 'asked again after the pause');
    // Not for ever: past PAYLOAD_DATA_KEY_OUTAGE_MAX_S, sealing stops, typed and retryable.
    writer.clock.now += 600_001;
    await assert.rejects(one(writer.codec, 'past the outage bound'), (error: unknown) => {
      assert.ok(error instanceof SealingStoppedError, String(error));
      assert.ok(error instanceof KeyProviderUnavailableError, 'retryable: the task retries until the KMS answers');
      assert.equal(error.bound, 'time');
      assert.match(error.message, /past the 600 s PAYLOAD_DATA_KEY_OUTAGE_MAX_S allows/);
      return true;
    });
    // Nor for any number of payloads: 2 of its own, 3 more in the outage, then it stops.
    await busy.codec.encode([payload(3), payload(4), payload(5)]);
    await assert.rejects(
      busy.codec.encode([payload(6)]),
      (error: unknown) => error instanceof SealingStoppedError && error.bound === 'uses' && /PAYLOAD_DATA_KEY_OUTAGE_MAX_USES/.test(error.message),
    );
    // A process that never made a data key has nothing to stand in: typed, retryable.
    await assert.rejects(
      processOn(outage.settings()).codec.encode([payload('new process')]),
      (error: unknown) => error instanceof KeyProviderUnavailableError && error.operation === 'datakey',
    );
    reader.clock.now += 120_001;
    await assert.rejects(reader.codec.decode([written]), KeyProviderUnavailableError);
  });
});
