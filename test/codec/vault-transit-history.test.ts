/**
 * PAYLOAD_KEY_PROVIDER=vault-transit end to end: a real OpenBao, a real dev server, the real sandbox
 * over HTTP. The worker and the pipeline client each load their settings from the variables an
 * operator sets (a token whose policy allows datakey and decrypt on the transit key, nothing else),
 * so each holds its own data key and reads the other's payloads through the KMS; the connection
 * completes, and every payload of its raw history is envelope-v1 under its tenant's own transit key,
 * carrying its wrapped data key. Then that key's version is revoked: the client, the CLI and the
 * console (API and codec) say so by name, for an ended connection and a waiting one alike.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ConnectionsClient, connectionKey } from '../../src/client/index.js';
import { tenantTransitKey } from '../../src/codec/vault-transit.js';
import { createConsoleServer } from '../../src/console/app.js';
import { decodeOrDescribe } from '../../src/console/codec.js';
import { EncryptionCodec } from '../../src/codec/encryption-codec.js';
import { keySourceFor } from '../../src/codec/key-provider.js';
import { KeyVersionRevokedError } from '../../src/codec/payload-errors.js';
import { SANDBOX_PASSWORD } from '../../sandbox/scenarios.js';
import { loadClientConfig } from '../../src/settings/client.js';
import { loadWorkerConfig } from '../../src/settings/worker.js';
import { runCaptured } from '../cli/cli-capture.js';
import { startConnectionStack, type ConnectionStack } from '../helpers/connection-stack.js';
import { runKmsConnection, type KmsConnection } from '../helpers/kms-connection.js';
import { startOpenBao, workerPolicy, type OpenBaoServer } from '../helpers/openbao.js';
import { uniqueId } from '../helpers/temporal.js';
import { tempAuditTrail } from '../helpers/audit.js';

let bao: OpenBaoServer;
let run: KmsConnection;
/** The tenant's own transit key: every payload of its connections is sealed under it (keys per tenant). */
const tenantKey = () => tenantTransitKey(bao.transitKey, run.stack.customerId);
/** A second connection of the same worker, left waiting for an operator's answer when the key version is revoked. */
let waitingId: string;
/** The worker restarted after the revocation (nothing unwrapped before it cached), on the same task queue. */
let restarted: ConnectionStack | undefined;

before(async () => {
  bao = await startOpenBao();
  const token = await bao.token('aggregation-worker', workerPolicy(bao.transitKey));
  run = await runKmsConnection(
    'vault-transit',
    { PAYLOAD_KEY_PROVIDER: 'vault-transit', PAYLOAD_VAULT_ADDR: bao.address, PAYLOAD_VAULT_TOKEN: token },
    (encryption) => {
      assert.equal(encryption?.provider, 'vault-transit');
      return encryption;
    },
  );
  waitingId = connectionKey(run.stack.customerId, uniqueId('vault-waiting'));
  const starter = await ConnectionsClient.connect(loadClientConfig({ ...run.variables }));
  try {
    await starter.startAndAwaitFirstStep(waitingId, {
      customerId: run.stack.customerId,
      session: { kind: 'live', institution: 'SandboxBank', username: 'security_question', password: SANDBOX_PASSWORD },
      products: { accountsDetail: { WithTransactions: true } },
    });
  } finally {
    await starter.close();
  }
});

after(async () => {
  await restarted?.stop();
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
      run.payloads.filter(
        (field) =>
          field.encoding !== 'binary/encrypted' ||
          field.format !== 'envelope-v1' ||
          field.keyId !== `vault-transit:${tenantKey()}` ||
          field.tenant !== run.stack.customerId ||
          field.version !== '1',
      ),
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
    await bao.api('POST', `transit/keys/${tenantKey()}/rotate`, {});
    await bao.api('POST', `transit/keys/${tenantKey()}/config`, { min_decryption_version: 2 });
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
      assert.equal(found.keyName, tenantKey());
    } finally {
      await reader.close();
    }
  });

  it('the CLI says "key version revoked" with the version and the key, and exits 1', async () => {
    const reader = await freshClient();
    try {
      const cli = await runCaptured(['watch', run.workflowId], { stack: run.stack, client: reader }, { env: { ...run.variables } });
      assert.equal(cli.code, 1, cli.err);
      assert.match(cli.err, new RegExp(`key version revoked: version 1 of key "${tenantKey()}" \\(vault-transit:${tenantKey()}\\)`));
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
    assert.equal(state.keyName, tenantKey());
    assert.match(String(state.message), /key version revoked/);
  });
});

describe('a connection waiting for an answer when its key version is revoked, its worker restarted', () => {
  const freshClient = () => ConnectionsClient.connect(loadClientConfig({ ...run.variables }));
  before(async () => {
    // The revocation above has happened (describe blocks run in order); the worker restarts without the keys it had unwrapped.
    await run.stack.stop();
    const encryption = loadWorkerConfig({ ...run.variables }).encryption;
    restarted = await startConnectionStack(run.stack.env, {
      taskQueue: run.stack.taskQueue,
      customerId: run.stack.customerId,
      ...(encryption ? { encryption } : {}),
    });
  });

  it('the pipeline client reading its state gets KeyVersionRevokedError naming version 1, not an opaque query failure', async () => {
    const reader = await freshClient();
    try {
      const error = await reader.getState(waitingId).then(
        () => assert.fail('a revoked history was read'),
        (thrown: unknown) => thrown,
      );
      assert.ok(error instanceof KeyVersionRevokedError, `${String(error)}`);
      assert.equal(error.version, 1);
      assert.equal(error.keyName, tenantKey());
    } finally {
      await reader.close();
    }
  });

  for (const command of [['show'], ['answer', 'Montreal']] as const) {
    it(`the CLI's ${command[0]} says "key version revoked" with the version and the key, and exits 1`, async () => {
      const reader = await freshClient();
      try {
        const cli = await runCaptured([command[0], waitingId, ...command.slice(1)], { stack: run.stack, client: reader }, { env: { ...run.variables } });
        assert.equal(cli.code, 1, cli.err);
        assert.match(cli.err, new RegExp(`key version revoked: version 1 of key "${tenantKey()}" \\(vault-transit:${tenantKey()}\\)`));
        assert.doesNotMatch(cli.out + cli.err, /Encoded failure|vault:v1:/);
      } finally {
        await reader.close();
      }
    });
  }

  it("the console's API answers 422 KeyVersionRevoked with the key and its version, not 502", async () => {
    const reader = await freshClient();
    const token = `console-${uniqueId('token')}`;
    const consoleServer = createConsoleServer({ audit: tempAuditTrail(), connections: reader, token, defaultCustomerId: run.stack.customerId });
    try {
      const { url } = await consoleServer.listen(0, '127.0.0.1');
      const response = await fetch(`${url}/api/connections/${encodeURIComponent(waitingId)}`, { headers: { authorization: `Bearer ${token}` } });
      const body = (await response.json()) as { error?: { code?: string; message?: string; details?: Record<string, unknown> } } & Record<string, unknown>;
      assert.equal(response.status, 422, JSON.stringify(body));
      assert.match(JSON.stringify(body), /KeyVersionRevoked/);
      assert.match(JSON.stringify(body), /key version revoked/);
    } finally {
      await consoleServer.close();
      await reader.close();
    }
  });

  // Last: it lowers the minimum again for good.
  it('reads and answers again once the minimum is lowered: the revocation was not corruption', async () => {
    await bao.api('POST', `transit/keys/${tenantKey()}/config`, { min_decryption_version: 1 });
    const reader = await freshClient();
    try {
      const state = await reader.getState(waitingId);
      assert.equal(state.status, 'AwaitingAnswer');
      const cli = await runCaptured(['show', waitingId], { stack: run.stack, client: reader }, { env: { ...run.variables } });
      assert.equal(cli.code, 0, cli.err);
    } finally {
      await reader.close();
    }
  });
});
