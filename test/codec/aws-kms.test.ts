/**
 * The aws-kms key provider against moto's server (test/helpers/moto.ts), a stand-in for AWS KMS:
 * envelope-v1 payloads whose data keys GenerateDataKey made and Decrypt unwraps; how many KMS calls
 * N payloads cost; a key that does not exist as a typed error naming it; the answers of AWS KMS
 * that moto does not model (a disabled key, throttling, 5xx), injected in front of it; the settings
 * an operator writes; and, last, moto frozen then stopped: cached keys keep working,
 * anything else is a typed, retryable error, and a thawed KMS serves again.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import { EncryptionCodec } from '../../src/codec/encryption-codec.js';
import { AWS_KMS_ENCRYPTION_CONTEXT, AwsKms } from '../../src/codec/aws-kms.js';
import { DATA_KEY_RETRY_MS, type DataKeyCacheSettings } from '../../src/codec/envelope-keys.js';
import { awsKmsClient, keySourceFor, type AwsKmsSettings } from '../../src/codec/key-provider.js';
import { KeyDisabledError, KeyProviderRefusedError, KeyProviderUnavailableError, PayloadDecryptionError } from '../../src/codec/payload-errors.js';
import { ENVELOPE_FORMAT } from '../../src/codec/payload-format.js';
import { loadWorkerConfig } from '../../src/settings/worker.js';
import { countedProcess, one, payload, SECRET, text } from '../helpers/kms-codec.js';
import { startMoto, type MotoServer } from '../helpers/moto.js';
import { startSandboxProxy, type SandboxProxy } from '../helpers/sandbox-proxy.js';

/** A process's codec on `settings`, its KMS calls counted and its clock movable. */
function processOn(settings: AwsKmsSettings, cache: Partial<DataKeyCacheSettings> = {}) {
  return countedProcess(new AwsKms(awsKmsClient(settings), settings.key), cache);
}

let moto: MotoServer;

before(async () => {
  moto = await startMoto();
});

after(async () => {
  await moto?.stop();
});

describe('the aws-kms key provider on moto (a stand-in for AWS KMS)', () => {
  it('writes envelope-v1 payloads naming the key ARN, version 1 and the wrapped data key; another process reads them through Decrypt', async () => {
    const writer = processOn(moto.settings());
    const encoded = await one(writer.codec);
    assert.equal(text(encoded.metadata?.encoding), 'binary/encrypted');
    assert.equal(text(encoded.metadata?.['encryption-format']), ENVELOPE_FORMAT);
    assert.equal(text(encoded.metadata?.['encryption-key-id']), `aws-kms:${moto.keyArn}`);
    assert.equal(text(encoded.metadata?.['encryption-key-version']), '1');
    const wrapped = text(encoded.metadata?.['encryption-wrapped-key']);
    assert.match(wrapped, /^[A-Za-z0-9+/]+=*$/);
    assert.ok(Buffer.from(wrapped, 'base64').length > 32, 'a CiphertextBlob, longer than the key it wraps');
    assert.ok(!text(encoded.data).includes('Everyday'));
    const reader = processOn(moto.settings());
    const [decoded] = await reader.codec.decode([encoded]);
    assert.deepEqual(defaultPayloadConverter.fromPayload(decoded ?? assert.fail('decoded')), SECRET);
    assert.equal(reader.kms.unwraps, 1, 'the reader unwrapped the data key once, through Decrypt');
  });

  it('configured by key id (the UUID), still names the key ARN KMS answered, and reads what a process configured by ARN wrote', async () => {
    const byUuid = processOn(moto.settings({ key: moto.keyUuid }));
    const encoded = await one(byUuid.codec);
    assert.equal(text(encoded.metadata?.['encryption-key-id']), `aws-kms:${moto.keyArn}`);
    assert.equal((await processOn(moto.settings()).codec.decode([encoded])).length, 1);
  });

  it('asks KMS once per data key, never once per payload: 1,000 payloads written one by one, one GenerateDataKey, one Decrypt per reader', async () => {
    const N = 1_000;
    const writer = processOn(moto.settings());
    const encoded: Payload[] = [];
    for (let index = 0; index < N; index++) encoded.push(await one(writer.codec, { index }));
    const readers = [processOn(moto.settings()), processOn(moto.settings())];
    for (const reader of readers) {
      // Read as a worker does, a few at a time and concurrently: concurrent misses share one Decrypt.
      const decoded = (await Promise.all(Array.from({ length: N / 10 }, (_, batch) => reader.codec.decode(encoded.slice(batch * 10, batch * 10 + 10))))).flat();
      assert.deepEqual(
        decoded.map((p) => defaultPayloadConverter.fromPayload<{ index: number }>(p).index),
        Array.from({ length: N }, (_, index) => index),
      );
    }
    await writer.codec.decode([encoded[0] ?? assert.fail('encoded')]);
    const calls = { generateDataKey: writer.kms.datakeys, decryptByWriter: writer.kms.unwraps, decryptByReaders: readers.map((reader) => reader.kms.unwraps) };
    process.stdout.write(`aws-kms calls for ${N} payloads: ${JSON.stringify(calls)}\n`);
    assert.deepEqual(calls, { generateDataKey: 1, decryptByWriter: 0, decryptByReaders: [1, 1] });
  });

  it('binds the data key to the encryption context: KMS refuses to unwrap it under another', async () => {
    const writer = processOn(moto.settings());
    const encoded = await one(writer.codec);
    assert.deepEqual(AWS_KMS_ENCRYPTION_CONTEXT, { purpose: 'temporal-payloads' });
    const { DecryptCommand } = await import('@aws-sdk/client-kms');
    const client = awsKmsClient(moto.settings());
    const CiphertextBlob = Buffer.from(text(encoded.metadata?.['encryption-wrapped-key']), 'base64');
    await assert.rejects(client.send(new DecryptCommand({ CiphertextBlob, EncryptionContext: { purpose: 'something-else' } })), /InvalidCiphertext/);
    assert.equal((await client.send(new DecryptCommand({ CiphertextBlob, EncryptionContext: { ...AWS_KMS_ENCRYPTION_CONTEXT } }))).Plaintext?.length, 32);
    client.destroy();
  });

  it("binds a tenant's data keys to the tenant in the encryption context: the payload names it, and a payload relabelled to another tenant does not open", async () => {
    const section = loadWorkerConfig({
      PAYLOAD_KEY_PROVIDER: 'aws-kms',
      PAYLOAD_AWS_KMS_KEY_ID: moto.keyArn,
      PAYLOAD_AWS_KMS_ENDPOINT: moto.endpoint,
      PAYLOAD_STORE: 'off',
    }).encryption;
    assert.ok(section && 'aws' in section && section.tenantKeys === true, 'keys per tenant by default');
    const withCredentials = { ...section, aws: { ...section.aws, credentials: moto.settings().credentials } };
    const codec = new EncryptionCodec(keySourceFor(withCredentials));
    const [ofA] = await codec.encode([payload(SECRET)], { type: 'workflow', namespace: 'default', workflowId: 'connection-lender-a:app-1' });
    assert.ok(ofA);
    assert.equal(text(ofA.metadata?.['encryption-tenant']), 'lender-a');
    const { DecryptCommand } = await import('@aws-sdk/client-kms');
    const client = awsKmsClient(moto.settings());
    const CiphertextBlob = Buffer.from(text(ofA.metadata?.['encryption-wrapped-key']), 'base64');
    assert.equal(
      (await client.send(new DecryptCommand({ CiphertextBlob, EncryptionContext: { ...AWS_KMS_ENCRYPTION_CONTEXT, tenant: 'lender-a' } }))).Plaintext?.length,
      32,
    );
    await assert.rejects(
      client.send(new DecryptCommand({ CiphertextBlob, EncryptionContext: { ...AWS_KMS_ENCRYPTION_CONTEXT } })),
      /InvalidCiphertext/,
      "the product's context alone does not open it",
    );
    client.destroy();
    const relabelled: Payload = { ...ofA, metadata: { ...ofA.metadata, 'encryption-tenant': Buffer.from('lender-b') } };
    const reader = new EncryptionCodec(keySourceFor({ ...withCredentials }));
    await assert.rejects(reader.decode([relabelled]), PayloadDecryptionError);
    const [decoded] = await reader.decode([ofA]);
    assert.deepEqual(defaultPayloadConverter.fromPayload(decoded ?? assert.fail('decoded')), SECRET);
  });

  it('a key that does not exist is KeyProviderRefusedError naming it; a payload of another key is one this key cannot unwrap', async () => {
    const missing = 'arn:aws:kms:us-east-1:123456789012:key/00000000-0000-4000-8000-000000000000';
    await assert.rejects(processOn(moto.settings({ key: missing })).codec.encode([payload('x')]), (error: unknown) => {
      assert.ok(error instanceof KeyProviderRefusedError && !(error instanceof KeyDisabledError), String(error));
      assert.equal(error.operation, 'GenerateDataKey');
      assert.ok(error.message.includes(missing), error.message);
      assert.match(error.message, /NotFoundException/);
      return true;
    });
    // Payload metadata that lies about its key: Decrypt with the named key refuses the blob (moto answers
    // AccessDeniedException where AWS answers IncorrectKeyException: see the injected answers below).
    const other = await moto.createKey('another key');
    const encoded = await one(processOn(moto.settings()).codec);
    const relabelled: Payload = { ...encoded, metadata: { ...encoded.metadata, 'encryption-key-id': Buffer.from(`aws-kms:${other}`) } };
    await assert.rejects(processOn(moto.settings()).codec.decode([relabelled]), (error: unknown) => {
      assert.ok(error instanceof KeyProviderRefusedError, String(error));
      assert.equal(error.operation, 'Decrypt');
      assert.ok(error.message.includes(`key "${other}"`), error.message);
      assert.match(error.message, /AccessDeniedException/);
      return true;
    });
    // Another version than 1 is refused before any call.
    const versioned: Payload = { ...encoded, metadata: { ...encoded.metadata, 'encryption-key-version': Buffer.from('2') } };
    const reader = processOn(moto.settings());
    await assert.rejects(reader.codec.decode([versioned]), /encryption-key-version is 2, but aws-kms envelopes are always version 1/);
    assert.equal(reader.kms.unwraps, 1, 'refused by the adapter itself');
  });
});

/**
 * What AWS KMS answers that moto 5.2.5 does not model (it makes and unwraps data keys with a
 * disabled key, and answers a wrong key with AccessDeniedException): AWS's documented error answers,
 * injected by a proxy in front of the real moto, one operation at a time, then taken away.
 */
describe('the aws-kms key provider on the answers AWS KMS gives that moto does not', () => {
  let proxy: SandboxProxy;
  let injected: { status: number; type: string } | undefined;

  before(async () => {
    proxy = await startSandboxProxy(moto.endpoint, () =>
      injected ? { pass: false, status: injected.status, body: { __type: injected.type, message: `injected ${injected.type}` } } : undefined,
    );
  });

  after(async () => {
    await proxy?.close();
  });

  const viaProxy = () => processOn(moto.settings({ endpoint: proxy.url }));

  it('a disabled key (DisabledException, KMSInvalidStateException) is KeyDisabledError naming it, for new data keys and for unwrapping; enabled again, it serves', async () => {
    const written = await one(viaProxy().codec);
    for (const type of ['DisabledException', 'KMSInvalidStateException']) {
      const fresh = viaProxy();
      injected = { status: 400, type };
      const isDisabled = (operation: string) => (error: unknown) => {
        assert.ok(error instanceof KeyDisabledError, String(error));
        assert.ok(error instanceof KeyProviderRefusedError, "a refusal, the operator's to fix: the task retries");
        assert.ok(!(error instanceof PayloadDecryptionError), 'never marks a payload unreadable for good');
        assert.equal(error.keyName, moto.keyArn);
        assert.equal(error.operation, operation);
        assert.ok(error.message.includes(`key "${moto.keyArn}" is disabled or pending deletion`), error.message);
        return true;
      };
      await assert.rejects(fresh.codec.encode([payload('x')]), isDisabled('GenerateDataKey'));
      await assert.rejects(fresh.codec.decode([written]), isDisabled('Decrypt'));
      injected = undefined;
      assert.equal((await fresh.codec.decode([written])).length, 1, type);
      assert.equal((await fresh.codec.encode([payload('x')])).length, 1, type);
    }
  });

  it('IncorrectKeyException and InvalidCiphertextException on Decrypt: a payload this KMS can never unwrap (PayloadDecryptionError)', async () => {
    const written = await one(viaProxy().codec);
    for (const type of ['IncorrectKeyException', 'InvalidCiphertextException']) {
      injected = { status: 400, type };
      await assert.rejects(
        viaProxy().codec.decode([written]),
        (error: unknown) => error instanceof PayloadDecryptionError && error.message.includes(type) && error.message.includes(moto.keyArn),
      );
    }
    injected = undefined;
  });

  it('throttling and 5xx are KeyProviderUnavailableError (retry), AccessDeniedException is KeyProviderRefusedError naming the key', async () => {
    const cases = [
      { status: 400, type: 'ThrottlingException', unavailable: true },
      { status: 503, type: 'KMSInternalException', unavailable: true },
      { status: 500, type: 'KeyUnavailableException', unavailable: true },
      { status: 400, type: 'AccessDeniedException', unavailable: false },
    ];
    for (const { status, type, unavailable } of cases) {
      injected = { status, type };
      await assert.rejects(viaProxy().codec.encode([payload('x')]), (error: unknown) => {
        const expected = unavailable ? KeyProviderUnavailableError : KeyProviderRefusedError;
        assert.ok(error instanceof expected, `${type}: ${String(error)}`);
        assert.ok(error.message.includes(type) && error.message.includes(moto.keyArn), error.message);
        return true;
      });
    }
    injected = undefined;
  });
});

describe('aws-kms settings', () => {
  it('builds the key source from the variables an operator sets; each process shares one', () => {
    const config = loadWorkerConfig({ TEMPORAL_ADDRESS: 'temporal.internal:7233', ...moto.variables() });
    const encryption = config.encryption;
    assert.ok(encryption?.provider === 'aws-kms');
    assert.equal(encryption.keyId, `aws-kms:${moto.keyArn}`);
    assert.deepEqual({ ...encryption.aws }, { key: moto.keyArn, region: 'us-east-1', endpoint: moto.endpoint, timeoutMs: 5_000 });
    assert.equal(keySourceFor(encryption), keySourceFor(encryption));
  });

  it('names what is wrong: a missing key id, a malformed one, a region that disagrees with the ARN, a key without the provider', () => {
    const problems = (env: Record<string, string>) => {
      try {
        loadWorkerConfig({ TEMPORAL_ADDRESS: 'temporal.internal:7233', ...env });
      } catch (error) {
        return (error as Error).message;
      }
      return assert.fail('the configuration was accepted');
    };
    assert.match(problems({ PAYLOAD_KEY_PROVIDER: 'aws-kms' }), /PAYLOAD_AWS_KMS_KEY_ID: is required with PAYLOAD_KEY_PROVIDER=aws-kms/);
    assert.match(problems({ PAYLOAD_KEY_PROVIDER: 'aws-kms', PAYLOAD_AWS_KMS_KEY_ID: 'my key' }), /PAYLOAD_AWS_KMS_KEY_ID: must name an AWS KMS key: a key id/);
    assert.match(
      problems({
        PAYLOAD_KEY_PROVIDER: 'aws-kms',
        PAYLOAD_AWS_KMS_KEY_ID: 'arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab',
        PAYLOAD_AWS_REGION: 'us-east-1',
      }),
      /PAYLOAD_AWS_REGION: is us-east-1, but PAYLOAD_AWS_KMS_KEY_ID is an ARN in eu-west-1/,
    );
    assert.match(
      problems({ PAYLOAD_ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64'), PAYLOAD_AWS_KMS_KEY_ID: 'alias/payloads' }),
      /PAYLOAD_AWS_KMS_KEY_ID: is set but PAYLOAD_KEY_PROVIDER is static: set PAYLOAD_KEY_PROVIDER=aws-kms/,
    );
    assert.match(
      problems({ PAYLOAD_KEY_PROVIDER: 'aws-kms', PAYLOAD_AWS_KMS_KEY_ID: 'alias/payloads', PAYLOAD_AWS_KMS_ENDPOINT: 'kms.internal' }),
      /PAYLOAD_AWS_KMS_ENDPOINT: must be an http\(s\) URL/,
    );
  });

  it('takes the region from a key ARN', () => {
    const config = loadWorkerConfig({
      TEMPORAL_ADDRESS: 'temporal.internal:7233',
      PAYLOAD_KEY_PROVIDER: 'aws-kms',
      PAYLOAD_AWS_KMS_KEY_ID: 'arn:aws:kms:eu-west-1:123456789012:alias/payloads',
    });
    assert.ok(config.encryption?.provider === 'aws-kms');
    assert.equal(config.encryption.aws.region, 'eu-west-1');
  });
});

describe('the aws-kms key provider with its KMS frozen, then stopped', () => {
  it('keeps encoding and decoding on cached keys; anything else is KeyProviderUnavailableError (retry); thawed, it serves again', async () => {
    const outage = await startMoto();
    // A short timeout: a frozen KMS takes the connection and never answers.
    const settings = outage.settings({ timeoutMs: 300 });
    const writer = processOn(settings, { dataKeyLifetimeMs: 60_000, unwrappedKeyLifetimeMs: 120_000 });
    const written = await one(writer.codec);
    const foreign = await one(processOn(settings).codec);
    const reader = processOn(settings, { unwrappedKeyLifetimeMs: 120_000 });
    await reader.codec.decode([written]);
    const isUnavailable = (operation: string) => (error: unknown) => {
      assert.ok(error instanceof KeyProviderUnavailableError, String(error));
      assert.ok(!(error instanceof PayloadDecryptionError), 'never a payload error: a worker must not mark a message for good');
      assert.equal(error.retryable, true);
      assert.equal(error.operation, operation);
      assert.ok(error.message.includes(outage.keyArn), error.message);
      return true;
    };

    let sealedDuring: string | undefined;
    outage.pause();
    try {
      const during = await one(writer.codec, 'during the outage');
      sealedDuring = text(during.metadata?.['encryption-wrapped-key']);
      assert.equal((await writer.codec.decode([written, during])).length, 2, 'the writer seals and reads on its data key');
      assert.equal((await reader.codec.decode([written, during])).length, 2, 'the reader reads on its cached unwrapped key');
      await assert.rejects(reader.codec.decode([foreign]), isUnavailable('Decrypt'));
      writer.clock.now += 60_001;
      const stale = await one(writer.codec, 'after the lifetime');
      assert.equal(
        text(stale.metadata?.['encryption-wrapped-key']),
        text(during.metadata?.['encryption-wrapped-key']),
        'past its lifetime, the last data key still seals while the KMS cannot make the next',
      );
      await assert.rejects(processOn(settings).codec.encode([payload('new process')]), isUnavailable('GenerateDataKey'));
    } finally {
      outage.resume();
    }
    assert.equal((await reader.codec.decode([foreign])).length, 1, 'thawed: the unwrap that failed succeeds on retry');
    writer.clock.now += DATA_KEY_RETRY_MS;
    const renewed = await one(writer.codec, 'after the outage');
    assert.notEqual(text(renewed.metadata?.['encryption-wrapped-key']), sealedDuring, 'and, once asked again, a new data key is made');
    assert.equal(writer.kms.datakeys, 3, 'one before, one refused during, one after');

    await outage.stop();
    reader.clock.now += 120_001;
    await assert.rejects(reader.codec.decode([written]), isUnavailable('Decrypt'));
  });
});
