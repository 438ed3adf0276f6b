/**
 * PAYLOAD_KEY_PROVIDER=aws-kms end to end: moto's server standing in for AWS KMS, a real dev server,
 * the real sandbox over HTTP. The worker and the pipeline client each load their settings from the
 * variables an operator sets (the key by its id; the SDK's credentials handed to both, as the default
 * chain would find them), so each holds its own data key and reads the other's payloads through
 * Decrypt; the connection completes, and every payload of its raw history is envelope-v1 naming the
 * key ARN.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { runKmsConnection, type KmsConnection } from '../helpers/kms-connection.js';
import { MOTO_CREDENTIALS, startMoto, type MotoServer } from '../helpers/moto.js';

let moto: MotoServer;
let run: KmsConnection;

before(async () => {
  moto = await startMoto();
  run = await runKmsConnection('aws-kms', moto.variables(moto.keyUuid), (encryption) => {
    assert.ok(encryption?.provider === 'aws-kms', 'the aws-kms section');
    return { ...encryption, aws: { ...encryption.aws, credentials: MOTO_CREDENTIALS } };
  });
});

after(async () => {
  await run?.stop();
  await moto?.stop();
});

describe('a connection with PAYLOAD_KEY_PROVIDER=aws-kms (moto standing in for AWS KMS)', () => {
  it("completes, its input written by the client and its result read back, each through the other's data key", () => {
    assert.equal(run.result.customerId, run.stack.customerId);
    assert.ok((run.result.accountsDetail?.Accounts[0]?.Transactions?.length ?? 0) > 0, 'transactions came back decrypted');
  });

  it('stores every payload of its history as envelope-v1 naming the key ARN, version 1, with the wrapped data key', () => {
    assert.ok(run.payloads.length >= 5, `payloads found: ${run.payloads.length}`);
    assert.deepEqual(
      run.payloads.filter(
        (field) =>
          field.encoding !== 'binary/encrypted' ||
          field.format !== 'envelope-v1' ||
          field.keyId !== `aws-kms:${moto.keyArn}` ||
          field.tenant !== run.stack.customerId ||
          field.version !== '1',
      ),
      [],
    );
    const wrapped = new Set(run.payloads.map((field) => field.wrappedKey));
    for (const key of wrapped) assert.match(key, /^[A-Za-z0-9+/]+=*$/);
    assert.equal(wrapped.size, 2, "two data keys: the client's (the input) and the worker's (the rest)");
  });
});
