import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { defaultPayloadConverter } from '@temporalio/common';
import type { Payload } from '@temporalio/common';
import { dataConverterFor, encryptionCodecFor } from '../../src/codec/data-converter.js';
import {
  ENCRYPTED_ENCODING,
  EncryptionCodec,
  isEncrypted,
  KEY_ID_METADATA_KEY,
  PayloadDecryptionError,
  PayloadNotSealedError,
  UnknownEncryptionKeyError,
} from '../../src/codec/encryption-codec.js';
import { UNDECODABLE_ENCODING, UNDECODABLE_REASON_METADATA_KEY } from '../../src/codec/undecodable.js';

const SECRET = { session: { username: 'security_question', password: 'Everyday' }, answer: ['Montreal'] };
const text = (bytes: Uint8Array | null | undefined) => Buffer.from(bytes ?? new Uint8Array()).toString('utf8');
const toPayload = (value: unknown): Payload => defaultPayloadConverter.toPayload(value);

function codec(keyId = 'default', decryptionKeys?: ReadonlyMap<string, Uint8Array>): EncryptionCodec {
  return new EncryptionCodec({ keyId, key: randomBytes(32), decryptionKeys });
}

async function encodeOne(target: EncryptionCodec, payload: Payload): Promise<Payload> {
  const [encoded] = await target.encode([payload]);
  return encoded ?? assert.fail('one payload encoded');
}

describe('the encryption codec', () => {
  it('gives back exactly what it encrypted, metadata included', async () => {
    const subject = codec();
    const payloads = [toPayload(SECRET), toPayload(undefined), toPayload(new Uint8Array([0, 1, 2, 255])), toPayload('')];
    const encoded = await subject.encode(payloads);
    assert.equal(encoded.length, payloads.length);
    for (const payload of encoded) {
      assert.equal(text(payload.metadata?.encoding), ENCRYPTED_ENCODING);
      assert.equal(text(payload.metadata?.[KEY_ID_METADATA_KEY]), 'default');
      assert.equal(Object.keys(payload.metadata ?? {}).length, 2, 'nothing but the encoding and the key id in clear');
    }
    assert.ok(!text(encoded[0]?.data).includes('Everyday'), 'the password is not in the encrypted bytes');
    assert.ok(!text(encoded[0]?.data).includes('json/plain'), 'the original encoding is encrypted too');
    const decoded = await subject.decode(encoded);
    assert.deepEqual(
      decoded.map((payload) => defaultPayloadConverter.fromPayload(payload)),
      [SECRET, undefined, new Uint8Array([0, 1, 2, 255]), ''],
    );
    assert.deepEqual(
      decoded.map((payload) => text(payload.metadata?.encoding)),
      payloads.map((payload) => text(payload.metadata?.encoding)),
    );
  });

  it('encrypts the same payload differently every time, with a fresh 12-byte IV', async () => {
    const subject = codec();
    const payload = toPayload(SECRET);
    const encoded = await subject.encode(Array.from({ length: 200 }, () => payload));
    const ivs = new Set(
      encoded.map((p) =>
        Buffer.from(p.data ?? [])
          .subarray(0, 12)
          .toString('hex'),
      ),
    );
    const bodies = new Set(encoded.map((p) => Buffer.from(p.data ?? []).toString('hex')));
    assert.equal(ivs.size, 200);
    assert.equal(bodies.size, 200);
    // IV (12) + plaintext (the proto-encoded payload) + tag (16).
    const plaintextLength = encoded[0]?.data?.length ?? 0;
    assert.ok(plaintextLength > 28 + (payload.data?.length ?? 0));
  });

  it('refuses a payload whose IV, ciphertext or tag was altered, naming the key id', async () => {
    const subject = codec('k1');
    const encoded = await encodeOne(subject, toPayload(SECRET));
    const length = encoded.data?.length ?? 0;
    for (const index of [0, 11, 12, Math.floor(length / 2), length - 1]) {
      const data = Buffer.from(encoded.data ?? []);
      data[index] = (data[index] ?? 0) ^ 0x01;
      await assert.rejects(subject.decode([{ ...encoded, data }]), (error: unknown) => {
        assert.ok(error instanceof PayloadDecryptionError, `byte ${index}: ${String(error)}`);
        assert.ok(!(error instanceof UnknownEncryptionKeyError));
        assert.equal(error.keyId, 'k1');
        assert.match(error.message, /"k1".*altered/);
        return true;
      });
    }
    await assert.rejects(subject.decode([{ ...encoded, data: Buffer.alloc(20) }]), /too short/);
  });

  it('refuses a payload encrypted under a key id it does not know, with a typed error naming that id', async () => {
    const writer = codec('2024-q1');
    const reader = codec('2025-q3');
    const encoded = await encodeOne(writer, toPayload(SECRET));
    await assert.rejects(reader.decode([encoded]), (error: unknown) => {
      assert.ok(error instanceof UnknownEncryptionKeyError);
      assert.ok(error instanceof PayloadDecryptionError);
      assert.equal(error.keyId, '2024-q1');
      assert.deepEqual(error.knownKeyIds, ['2025-q3']);
      assert.match(error.message, /"2024-q1"/);
      assert.match(error.message, /PAYLOAD_DECRYPTION_KEYS/);
      return true;
    });
  });

  it('refuses a payload that was never sealed, by name and without quoting it; a replay alone reads one', async () => {
    const subject = codec();
    const plain = [toPayload(SECRET), toPayload(null), { metadata: {}, data: new Uint8Array() }, {}];
    for (const [index, payload] of plain.entries()) {
      await assert.rejects(subject.decode([payload]), (error: unknown) => {
        assert.ok(error instanceof PayloadNotSealedError, `payload ${index}: ${String(error)}`);
        assert.ok(error instanceof PayloadDecryptionError, 'a payload error: a worker marks such a message, the console answers 422');
        assert.equal(error.encoding, index < 2 ? 'json/plain' : '(none)');
        assert.doesNotMatch(error.message, /Everyday|Montreal/);
        return true;
      });
    }
    // One unsealed payload among sealed ones refuses the batch: nothing is half-read.
    await assert.rejects(subject.decode([await encodeOne(subject, toPayload(SECRET)), toPayload('injected')]), PayloadNotSealedError);
    const replay = new EncryptionCodec({ keyId: 'default', key: randomBytes(32) }, { readUnsealedForReplay: true });
    const decoded = await replay.decode(plain);
    decoded.forEach((payload, index) => assert.equal(payload, plain[index], `payload ${index} is the same object`));
    assert.equal(isEncrypted(toPayload(SECRET)), false);
    assert.equal(isEncrypted(await encodeOne(subject, toPayload(SECRET))), true);
  });

  it('marks an unsealed workflow message on a worker (its handler refuses it, naming why), and still refuses an activity payload', async () => {
    const worker = new EncryptionCodec({ keyId: 'default', key: randomBytes(32) }, { markUndecodableMessages: true });
    const [marked] = await worker.decode([toPayload({ answer: ['Montreal'] })], { type: 'workflow', namespace: 'default', workflowId: 'connection-x' });
    assert.equal(text(marked?.metadata?.encoding), UNDECODABLE_ENCODING);
    assert.match(text(marked?.metadata?.[UNDECODABLE_REASON_METADATA_KEY]), /^payload not sealed: its encoding is "json\/plain"/);
    assert.equal(marked?.data?.length, 0, 'the marker carries nothing of the payload');
    await assert.rejects(
      worker.decode([toPayload('x')], { type: 'activity', namespace: 'default', workflowId: 'connection-x', isLocal: false, activityId: '1' }),
      PayloadNotSealedError,
    );
  });

  it('decrypts with earlier keys after a rotation, and encrypts only with the current one', async () => {
    const oldKey = randomBytes(32);
    const before = new EncryptionCodec({ keyId: 'old', key: oldKey });
    const written = await encodeOne(before, toPayload(SECRET));
    const after = new EncryptionCodec({ keyId: 'new', key: randomBytes(32), decryptionKeys: new Map([['old', oldKey]]) });
    assert.deepEqual(after.keyIds, ['new', 'old']);
    const rewritten = await encodeOne(after, toPayload(SECRET));
    assert.equal(text(rewritten.metadata?.[KEY_ID_METADATA_KEY]), 'new');
    const decoded = await after.decode([written, rewritten]);
    assert.deepEqual(
      decoded.map((payload) => defaultPayloadConverter.fromPayload(payload)),
      [SECRET, SECRET],
    );
    // The old process cannot read what the new key wrote: roll out decryption keys before the new key.
    await assert.rejects(before.decode([rewritten]), UnknownEncryptionKeyError);
  });

  it('refuses keys that are not 32 bytes', () => {
    assert.throws(() => new EncryptionCodec({ keyId: 'short', key: randomBytes(16) }), /"short" must be 32 bytes, got 16/);
    assert.throws(
      () => new EncryptionCodec({ keyId: 'k', key: randomBytes(32), decryptionKeys: new Map([['old', randomBytes(31)]]) }),
      /"old" must be 32 bytes/,
    );
  });
});

describe('dataConverterFor', () => {
  it('is undefined (the SDK default) without a key, and one encryption codec with it', () => {
    assert.equal(dataConverterFor({}), undefined);
    assert.equal(encryptionCodecFor({ encryption: undefined }), undefined);
    const converter = dataConverterFor({ encryption: { keyId: 'k', key: randomBytes(32), decryptionKeys: new Map() } });
    assert.equal(converter?.payloadCodecs?.length, 1);
    assert.ok(converter?.payloadCodecs?.[0] instanceof EncryptionCodec);
  });
});
