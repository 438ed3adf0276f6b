/**
 * docs/payload-format.md's test vectors against the code: the codec seals exactly the documented
 * bytes for the documented key and nonce, and opens them (static format through configured keys or a
 * tenant's key file,
 * envelope-v1 through a data key a KMS would unwrap, the aws-kms vector's metadata as its reader
 * reads it); and a payload written by the codec before key
 * providers (commit 2ed9c63, with its own random nonce) still decodes.
 */
import assert from 'node:assert/strict';
import { createSecretKey } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import proto from '@temporalio/proto';
import { AWS_KMS_KEY_VERSION, awsKmsEncryptionContext, awsKmsKeyOf } from '../../src/codec/aws-kms.js';
import { EncryptionCodec } from '../../src/codec/encryption-codec.js';
import { EnvelopeKeySource, type KeyWrapper } from '../../src/codec/envelope-keys.js';
import { keySourceFor } from '../../src/codec/key-provider.js';
import { bindingAssociatedData } from '../../src/codec/payload-binding.js';
import { PayloadMisboundError, PayloadUnboundError } from '../../src/codec/payload-errors.js';
import { ENVELOPE_FORMAT, sealPayload, type EnvelopeMetadata } from '../../src/codec/payload-format.js';

const { Payload: PayloadMessage } = proto.temporal.api.common.v1;

interface Vector {
  readonly name: string;
  readonly key?: string;
  readonly dataKey?: string;
  readonly metadata: Readonly<Record<string, string>>;
  readonly nonce: string;
  /** A bound vector's AES-GCM associated data. */
  readonly associatedData?: string;
  readonly plaintext: string;
  readonly data: string;
}

const DOC = readFileSync(new URL('../../docs/payload-format.md', import.meta.url), 'utf8');
const BLOCK = /## Test vectors[\s\S]*?```json\n([\s\S]*?)```/.exec(DOC)?.[1] ?? assert.fail('docs/payload-format.md has a json block under "Test vectors"');
const VECTORS = (JSON.parse(BLOCK) as { vectors: Vector[] }).vectors;
const vector = (name: string) => VECTORS.find((entry) => entry.name === name) ?? assert.fail(`a "${name}" vector`);
const hex = (text: string) => Buffer.from(text, 'hex');
const PLAINTEXT_PAYLOAD: Payload = { metadata: { encoding: Buffer.from('json/plain') }, data: Buffer.from('{"password":"Everyday"}') };

function asPayload({ metadata, data }: Pick<Vector, 'metadata' | 'data'>): Payload {
  return { metadata: Object.fromEntries(Object.entries(metadata).map(([key, value]) => [key, Buffer.from(value)])), data: hex(data) };
}

/** A KMS that unwraps the vector's wrapped key to its data key, and makes none. */
function kmsOf(wrapped: Vector): KeyWrapper & { unwrapped: EnvelopeMetadata[] } {
  const unwrapped: EnvelopeMetadata[] = [];
  return {
    keyId: wrapped.metadata['encryption-key-id'] ?? '',
    unwrapped,
    newDataKey: () => Promise.reject(new Error('the vectors make no data key')),
    forTenant: () => assert.fail('the vectors make no tenant key'),
    unwrap: (envelope) => {
      unwrapped.push(envelope);
      assert.equal(envelope.wrappedKey, wrapped.metadata['encryption-wrapped-key']);
      return Promise.resolve(hex(wrapped.dataKey ?? ''));
    },
  };
}

/** A codec whose envelope keys come from `kms` (small bounds: the vectors seal nothing). */
function envelopeCodec(kms: KeyWrapper): EncryptionCodec {
  return new EncryptionCodec(
    new EnvelopeKeySource(kms, {
      dataKeyLifetimeMs: 60_000,
      dataKeyMaxUses: 10,
      unwrappedKeyLifetimeMs: 60_000,
      unwrappedKeyCacheSize: 10,
      outageSealingMs: 60_000,
      outageSealingMaxUses: 10,
    }),
  );
}

/** An envelope vector opened through the data key its KMS unwraps: the vector, that KMS and the value. */
async function openVector(name: string) {
  const entry = vector(name);
  const kms = kmsOf(entry);
  const [decoded] = await envelopeCodec(kms).decode([asPayload(entry)]);
  return { entry, kms, value: defaultPayloadConverter.fromPayload(decoded ?? assert.fail('decoded')) };
}

describe('the documented payload format', () => {
  it('says what the plaintext is: the protobuf-encoded original payload', () => {
    for (const entry of VECTORS) assert.deepEqual(Buffer.from(PayloadMessage.encode(PLAINTEXT_PAYLOAD).finish()).toString('hex'), entry.plaintext, entry.name);
  });

  it("seals the documented bytes for each vector's key and nonce", () => {
    for (const entry of VECTORS) {
      const key = createSecretKey(hex(entry.key ?? entry.dataKey ?? ''));
      const associatedData = entry.associatedData === undefined ? undefined : hex(entry.associatedData);
      if (associatedData)
        assert.deepEqual(
          bindingAssociatedData(entry.metadata['encryption-tenant'], entry.metadata['encryption-workflow-id'] ?? ''),
          associatedData,
          `${entry.name}: its associated data`,
        );
      assert.equal(sealPayload(key, hex(entry.nonce), PLAINTEXT_PAYLOAD, associatedData).toString('hex'), entry.data, entry.name);
    }
  });

  it('opens the static vector with the configured key it names', async () => {
    const entry = vector('static');
    const codec = new EncryptionCodec({ keyId: entry.metadata['encryption-key-id'] ?? '', key: hex(entry.key ?? '') });
    const [decoded] = await codec.decode([asPayload(entry)]);
    assert.deepEqual(defaultPayloadConverter.fromPayload(decoded ?? assert.fail('decoded')), { password: 'Everyday' });
  });

  it("opens the static-tenant vector with the key of its tenant's key file, and no other process's keys", async () => {
    const entry = vector('static-tenant');
    const dir = mkdtempSync(join(tmpdir(), 'vector-tenant-keys-'));
    try {
      writeFileSync(join(dir, 'lender-a.key'), `${entry.metadata['encryption-key-id']}:${hex(entry.key ?? '').toString('base64')}\n`, { mode: 0o600 });
      const product = { keyId: 'product', key: Buffer.alloc(32, 7) };
      const codec = new EncryptionCodec(keySourceFor({ ...product, tenantKeyFiles: { dir, createMissing: false } }));
      const [decoded] = await codec.decode([asPayload(entry)]);
      assert.deepEqual(defaultPayloadConverter.fromPayload(decoded ?? assert.fail('decoded')), { password: 'Everyday' });
      await assert.rejects(new EncryptionCodec(product).decode([asPayload(entry)]), /of tenant "lender-a": this process has no keys per tenant/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('opens the envelope-v1 vector through the data key its KMS unwraps, once', async () => {
    const entry = vector(ENVELOPE_FORMAT);
    const kms = kmsOf(entry);
    const codec = envelopeCodec(kms);
    const decoded = await codec.decode([asPayload(entry), asPayload(entry)]);
    assert.deepEqual(
      decoded.map((payload) => defaultPayloadConverter.fromPayload(payload)),
      [{ password: 'Everyday' }, { password: 'Everyday' }],
    );
    assert.deepEqual(kms.unwrapped, [{ keyId: 'vault-transit:aggregation-payloads', keyVersion: 3, wrappedKey: entry.metadata['encryption-wrapped-key'] }]);
  });

  it('opens the aws-kms envelope-v1 vector, whose metadata the aws-kms reader accepts and whose key it would ask Decrypt for', async () => {
    const { kms, value } = await openVector('envelope-v1-aws-kms');
    assert.deepEqual(value, { password: 'Everyday' });
    const envelope = kms.unwrapped[0] ?? assert.fail('unwrapped');
    assert.equal(awsKmsKeyOf(envelope), 'arn:aws:kms:eu-west-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab');
    assert.equal(envelope.keyVersion, AWS_KMS_KEY_VERSION);
  });

  it("opens the tenant's envelope-v1 vector through its tenant's data key, reading the tenant from the metadata", async () => {
    const { entry, kms, value } = await openVector('envelope-v1-tenant');
    assert.deepEqual(value, { password: 'Everyday' });
    assert.deepEqual(kms.unwrapped, [
      { keyId: 'vault-transit:aggregation-payloads-tenant-lender-a', keyVersion: 1, wrappedKey: entry.metadata['encryption-wrapped-key'], tenant: 'lender-a' },
    ]);
    assert.deepEqual(
      awsKmsEncryptionContext('lender-a'),
      { purpose: 'temporal-payloads', tenant: 'lender-a' },
      "an aws-kms reader would pass the tenant in Decrypt's context",
    );
  });

  it('refuses an encryption-tenant that is not a customer id, by name', async () => {
    const entry = vector('envelope-v1-tenant');
    const codec = envelopeCodec(kmsOf(entry));
    const bad = asPayload({ ...entry, metadata: { ...entry.metadata, 'encryption-tenant': 'lender a/../b' } });
    await assert.rejects(codec.decode([bad]), /has encryption-tenant "lender a\/..\/b": must be a customer id/);
  });

  it('shows a bound vector of each format, and the codec seals for a workflow exactly their metadata', async () => {
    assert.deepEqual(
      VECTORS.filter((entry) => entry.associatedData !== undefined)
        .map((entry) => entry.name)
        .sort(),
      ['envelope-v1-bound', 'static-tenant-bound'],
    );
    const entry = vector('static-tenant-bound');
    const dir = mkdtempSync(join(tmpdir(), 'vector-tenant-keys-'));
    try {
      writeFileSync(join(dir, 'lender-a.key'), `${entry.metadata['encryption-key-id']}:${hex(entry.key ?? '').toString('base64')}\n`, { mode: 0o600 });
      const codec = new EncryptionCodec(keySourceFor({ keyId: 'product', key: Buffer.alloc(32, 7), tenantKeyFiles: { dir, createMissing: false } }));
      const [sealed] = await codec.encode([PLAINTEXT_PAYLOAD], { type: 'workflow', namespace: 'default', workflowId: 'connection-lender-a:app-42' });
      assert.deepEqual(Object.fromEntries(Object.entries(sealed?.metadata ?? {}).map(([key, value]) => [key, Buffer.from(value).toString()])), entry.metadata);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('opens a bound vector in its workflow, in a schedule run of it and with no workflow to check; refuses it in another workflow by name, and edited binding metadata by its tag', async () => {
    const entry = vector('envelope-v1-bound');
    const codec = envelopeCodec(kmsOf(entry));
    const bound = asPayload(entry);
    const context = (workflowId: string) => ({ type: 'workflow', namespace: 'default', workflowId }) as const;
    const read = async (workflowId?: string) =>
      defaultPayloadConverter.fromPayload(
        (await codec.decode([bound], workflowId === undefined ? undefined : context(workflowId)))[0] ?? assert.fail('decoded'),
      );
    assert.deepEqual(await read('connection-lender-b:app-7'), { password: 'Everyday' });
    assert.deepEqual(
      await read('connection-lender-b:app-7-2026-12-02T02:00:00Z'),
      { password: 'Everyday' },
      "a schedule's run reads what its action was sealed for",
    );
    assert.deepEqual(await read(), { password: 'Everyday' }, 'the codec endpoint opens it with the associated data of its own metadata');
    await assert.rejects(codec.decode([bound], context('connection-lender-b:app-8')), (error: unknown) => {
      assert.ok(error instanceof PayloadMisboundError, String(error));
      assert.equal(
        error.message,
        'payload sealed for workflow "connection-lender-b:app-7" sent to workflow "connection-lender-b:app-8": a sealed payload is read only in the workflow it was sealed for, so it is refused',
      );
      return true;
    });
    await assert.rejects(codec.decode([bound], context('connection-lender-b:app-7-nightly')), PayloadMisboundError, "only a schedule's own suffix");
    const edited = asPayload({ ...entry, metadata: { ...entry.metadata, 'encryption-workflow-id': 'connection-lender-b:app-8' } });
    await assert.rejects(codec.decode([edited], context('connection-lender-b:app-8')), /it was altered, or encrypted with another key/);
    const unknownBinding = asPayload({ ...entry, metadata: { ...entry.metadata, 'encryption-binding': 'workflow-v9' } });
    await assert.rejects(codec.decode([unknownBinding]), /encryption-binding "workflow-v9", which this process does not read \(it reads "workflow-v1"\)/);
  });

  it('reads an unbound payload for a workflow as before, unless told to refuse those (never in a replay)', async () => {
    const entry = vector(ENVELOPE_FORMAT);
    const unbound = asPayload(entry);
    const context = { type: 'workflow', namespace: 'default', workflowId: 'connection-lender-b:app-7' } as const;
    const keys = () =>
      new EnvelopeKeySource(kmsOf(entry), {
        dataKeyLifetimeMs: 60_000,
        dataKeyMaxUses: 10,
        unwrappedKeyLifetimeMs: 60_000,
        unwrappedKeyCacheSize: 10,
        outageSealingMs: 60_000,
        outageSealingMaxUses: 10,
      });
    assert.equal((await new EncryptionCodec(keys()).decode([unbound], context)).length, 1);
    await assert.rejects(new EncryptionCodec(keys(), { refuseUnbound: true }).decode([unbound], context), PayloadUnboundError);
    assert.equal((await new EncryptionCodec(keys(), { refuseUnbound: true }).decode([unbound])).length, 1, 'no workflow to check: read');
    assert.equal(
      (await new EncryptionCodec(keys(), { refuseUnbound: true, readUnsealedForReplay: true }).decode([unbound], context)).length,
      1,
      'a replay reads its history as it was written',
    );
  });

  it('still decodes a payload written by the codec before key providers (commit 2ed9c63)', async () => {
    const fixture = JSON.parse(readFileSync(new URL('../fixtures/codec/static-payload-2ed9c63.json', import.meta.url), 'utf8')) as {
      keyId: string;
      key: string;
      value: unknown;
      payload: { metadata: Record<string, string>; data: string };
    };
    const written: Payload = {
      metadata: Object.fromEntries(Object.entries(fixture.payload.metadata).map(([key, value]) => [key, Buffer.from(value, 'base64')])),
      data: Buffer.from(fixture.payload.data, 'base64'),
    };
    const codec = new EncryptionCodec({ keyId: fixture.keyId, key: Buffer.from(fixture.key, 'base64') });
    const [decoded] = await codec.decode([written]);
    assert.deepEqual(defaultPayloadConverter.fromPayload(decoded ?? assert.fail('decoded')), fixture.value);
    // And today's codec still writes that format: the same two metadata fields.
    const [again] = await codec.encode([defaultPayloadConverter.toPayload(fixture.value)]);
    assert.deepEqual(Object.keys(again?.metadata ?? {}).sort(), Object.keys(written.metadata ?? {}).sort());
  });
});
