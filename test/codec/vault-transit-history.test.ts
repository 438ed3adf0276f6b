/**
 * PAYLOAD_KEY_PROVIDER=vault-transit end to end: a real OpenBao, a real dev server, the real sandbox
 * over HTTP. The worker and the pipeline client each load their settings from the variables an
 * operator sets (a token whose policy allows datakey and decrypt on the transit key, nothing else),
 * so each holds its own data key and reads the other's payloads through the KMS; the connection
 * completes, and every payload of its raw history is envelope-v1, carrying its wrapped data key.
 * Then its key version is revoked: the client, the CLI and the console's codec say so by name.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ConnectionsClient } from '../../src/client/index.js';
import { decodeOrDescribe } from '../../src/client/console/codec.js';
import { EncryptionCodec } from '../../src/codec/encryption-codec.js';
import { keySourceFor } from '../../src/codec/key-provider.js';
import { KeyVersionRevokedError } from '../../src/codec/payload-errors.js';
import { loadClientConfig } from '../../src/settings/client.js';
import { runCaptured } from '../client/cli-capture.js';
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

describe('the same history once its key version is revoked (min_decryption_version raised past it)', () => {
  // A fresh settings object each time: its own key source, so nothing unwrapped before the revocation is cached.
  const freshClient = () => ConnectionsClient.connect(loadClientConfig({ ...run.variables }));
  const text = (bytes: Uint8Array | null | undefined) => Buffer.from(bytes ?? new Uint8Array()).toString('utf8');
  before(async () => {
    await bao.api('POST', `transit/keys/${bao.transitKey}/rotate`, {});
    await bao.api('POST', `transit/keys/${bao.transitKey}/config`, { min_decryption_version: 2 });
  });

  it('a pipeline client (no key cached) gets KeyVersionRevokedError naming version 1', async () => {
    const reader = await freshClient();
    try {
      const error = await reader.result(run.workflowId).then(
        () => assert.fail('a revoked history was read'),
        (thrown: unknown) => thrown,
      );
      let found: unknown = error;
      while (found instanceof Error && !(found instanceof KeyVersionRevokedError)) found = found.cause;
      assert.ok(found instanceof KeyVersionRevokedError, `${String(error)}`);
      assert.equal(found.version, 1);
      assert.equal(found.keyName, bao.transitKey);
    } finally {
      await reader.close();
    }
  });

  it('the CLI says "key version revoked" with the version and the key, and exits 1', async () => {
    const reader = await freshClient();
    try {
      const cli = await runCaptured(['watch', run.workflowId], { stack: run.stack, client: reader }, { env: { ...run.variables } });
      assert.equal(cli.code, 1, cli.err);
      assert.match(cli.err, /key version revoked: version 1 of key "aggregation-payloads" \(vault-transit:aggregation-payloads\)/);
      assert.match(cli.err, /min_decryption_version/);
      assert.doesNotMatch(cli.out + cli.err, /vault:v1:/, 'never the ciphertext');
    } finally {
      await reader.close();
    }
  });

  it("the console's codec endpoint (what the Web UI shows) answers a typed state naming the version in place of each revoked payload", async () => {
    const codec = new EncryptionCodec(keySourceFor(loadClientConfig({ ...run.variables })?.encryption ?? assert.fail('a KMS section')));
    const shown = await decodeOrDescribe([codec], run.storedResult);
    assert.equal(text(shown.metadata?.encoding), 'json/plain');
    const state = (JSON.parse(text(shown.data)) as { undecodable: Record<string, unknown> }).undecodable;
    assert.equal(state.state, 'key-version-revoked');
    assert.equal(state.version, 1);
    assert.equal(state.keyName, 'aggregation-payloads');
    assert.match(String(state.message), /key version revoked/);
  });
});
