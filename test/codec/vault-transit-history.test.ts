/**
 * PAYLOAD_KEY_PROVIDER=vault-transit end to end: a real OpenBao, a real dev server, the real sandbox
 * over HTTP. The worker and the pipeline client each load their settings from the variables an
 * operator sets (a token whose policy allows datakey and decrypt on the transit key, nothing else),
 * so each holds its own data key and reads the other's payloads through the KMS; the connection
 * completes, and every payload of its raw history is envelope-v1, carrying its wrapped data key.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { runKmsConnection, type KmsConnection } from '../helpers/kms-connection.js';
import { startOpenBao, workerPolicy, type OpenBaoServer } from '../helpers/openbao.js';

let bao: OpenBaoServer;
let run: KmsConnection;

before(async () => {
  bao = await startOpenBao();
  const token = await bao.token('aggregation-worker', workerPolicy(bao.transitKey));
  run = await runKmsConnection('vault-transit', { PAYLOAD_KEY_PROVIDER: 'vault-transit', PAYLOAD_VAULT_ADDR: bao.address, PAYLOAD_VAULT_TOKEN: token }, (encryption) => {
    assert.equal(encryption?.provider, 'vault-transit');
    return encryption;
  });
});

after(async () => {
  await run?.stop();
  await bao?.stop();
});

describe('a connection with PAYLOAD_KEY_PROVIDER=vault-transit', () => {
  it("completes, its input written by the client and its result read back, each through the other's data key", () => {
    assert.equal(run.result.customerId, run.stack.customerId);
    assert.ok((run.result.accountsDetail?.Accounts[0]?.Transactions?.length ?? 0) > 0, 'transactions came back decrypted');
  });

  it('stores every payload of its history as envelope-v1 with the wrapped data key and its version in the metadata', () => {
    assert.ok(run.payloads.length >= 5, `payloads found: ${run.payloads.length}`);
    assert.deepEqual(
      run.payloads.filter((field) => field.encoding !== 'binary/encrypted' || field.format !== 'envelope-v1' || field.keyId !== 'vault-transit:aggregation-payloads' || field.version !== '1'),
      [],
    );
    const wrapped = new Set(run.payloads.map((field) => field.wrappedKey));
    for (const key of wrapped) assert.match(key, /^vault:v1:[A-Za-z0-9+/]+=*$/);
    assert.equal(wrapped.size, 2, "two data keys: the client's (the input) and the worker's (the rest)");
  });
});
