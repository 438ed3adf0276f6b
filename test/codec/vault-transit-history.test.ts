/**
 * PAYLOAD_KEY_PROVIDER=vault-transit end to end: a real OpenBao, a real dev server, the real sandbox
 * over HTTP. The worker and the pipeline client each load their settings from the variables an
 * operator sets (a token whose policy allows datakey and decrypt on the transit key, nothing else),
 * so each holds its own data key and reads the other's payloads through the KMS; the connection
 * completes, and every payload of its raw history is envelope-v1, carrying its wrapped data key.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type proto from '@temporalio/proto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { ConnectionsClient, connectionKey, type ConnectionResult } from '../../src/client/index.js';
import { decodeOrDescribe } from '../../src/client/console/codec.js';
import { EncryptionCodec } from '../../src/codec/encryption-codec.js';
import { keySourceFor } from '../../src/codec/key-provider.js';
import { KeyVersionRevokedError } from '../../src/codec/payload-errors.js';
import { runCaptured } from '../client/cli-capture.js';
import { SANDBOX_PASSWORD } from '../../src/sandbox/scenarios.js';
import { loadClientConfig } from '../../src/settings/client.js';
import { loadWorkerConfig } from '../../src/settings/worker.js';
import { startConnectionStack, TEST_ENCRYPTION_ENV, type ConnectionStack } from '../helpers/connection-stack.js';
import { isCoreBookkeeping, isPatchMarker, payloadsIn } from '../helpers/history-payloads.js';
import { startOpenBao, workerPolicy, type OpenBaoServer } from '../helpers/openbao.js';
import { createDevEnvironment, uniqueId } from '../helpers/temporal.js';

type HistoryEvent = proto.temporal.api.history.v1.IHistoryEvent;
const text = (bytes: Uint8Array | null | undefined) => Buffer.from(bytes ?? new Uint8Array()).toString('utf8');

let bao: OpenBaoServer;
let env: TestWorkflowEnvironment;
let stack: ConnectionStack;
let client: ConnectionsClient;
let result: ConnectionResult;
let rawEvents: HistoryEvent[];
let variables: Record<string, string>;
let workflowId: string;

before(async () => {
  bao = await startOpenBao();
  const token = await bao.token('aggregation-worker', workerPolicy(bao.transitKey));
  env = await createDevEnvironment();
  // The static test key stays, decrypt-only, as it would after a switch (and no local key file is made).
  variables = { TEMPORAL_ADDRESS: env.address, TEMPORAL_NAMESPACE: env.namespace ?? 'default', PAYLOAD_KEY_PROVIDER: 'vault-transit', PAYLOAD_VAULT_ADDR: bao.address, PAYLOAD_VAULT_TOKEN: token, PAYLOAD_STORE: 'off', ...TEST_ENCRYPTION_ENV };
  const workerConfig = loadWorkerConfig(variables);
  assert.equal(workerConfig.encryption?.provider, 'vault-transit');
  stack = await startConnectionStack(env, { encryption: workerConfig.encryption });
  client = await ConnectionsClient.connect(loadClientConfig({ ...variables, TEMPORAL_TASK_QUEUE: stack.taskQueue }));

  workflowId = connectionKey(stack.customerId, uniqueId('vault-transit'));
  await client.startAndAwaitFirstStep(workflowId, {
    customerId: stack.customerId,
    session: { kind: 'live', institution: 'SandboxBank', username: 'no_mfa', password: SANDBOX_PASSWORD },
    products: { accountsDetail: { WithTransactions: true } },
    timing: { pollIntervalMs: 50 },
  });
  result = await client.result(workflowId);
  // env.client has no codec: what Temporal stores.
  rawEvents = (await env.client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
});

after(async () => {
  await client?.close();
  await stack?.stop();
  await env?.teardown();
  await bao?.stop();
});

describe('a connection with PAYLOAD_KEY_PROVIDER=vault-transit', () => {
  it('completes, its input written by the client and its result read back, each through the other\'s data key', () => {
    assert.equal(result.customerId, stack.customerId);
    assert.ok((result.accountsDetail?.Accounts[0]?.Transactions?.length ?? 0) > 0, 'transactions came back decrypted');
  });

  it('stores every payload of its history as envelope-v1 with the wrapped data key and its version in the metadata', () => {
    const ours = rawEvents.flatMap((event, index) => payloadsIn(event, `event ${index + 1}`)).filter((entry) => !isCoreBookkeeping(entry) && !isPatchMarker(entry));
    assert.ok(ours.length >= 5, `payloads found: ${ours.length}`);
    const fields = ours.map(({ path, payload }) => ({
      path,
      encoding: text(payload.metadata?.encoding),
      format: text(payload.metadata?.['encryption-format']),
      keyId: text(payload.metadata?.['encryption-key-id']),
      version: text(payload.metadata?.['encryption-key-version']),
    }));
    assert.deepEqual(
      fields.filter((field) => field.encoding !== 'binary/encrypted' || field.format !== 'envelope-v1' || field.keyId !== 'vault-transit:aggregation-payloads' || field.version !== '1'),
      [],
    );
    const wrapped = new Set(ours.map(({ payload }) => text(payload.metadata?.['encryption-wrapped-key'])));
    for (const key of wrapped) assert.match(key, /^vault:v1:[A-Za-z0-9+/]+=*$/);
    assert.equal(wrapped.size, 2, "two data keys: the client's (the input) and the worker's (the rest)");
  });
});

describe('the same history once its key version is revoked (min_decryption_version raised past it)', () => {
  let reader: ConnectionsClient | undefined;
  before(async () => {
    await bao.api('POST', `transit/keys/${bao.transitKey}/rotate`, {});
    await bao.api('POST', `transit/keys/${bao.transitKey}/config`, { min_decryption_version: 2 });
  });
  after(async () => {
    await reader?.close();
  });

  it('a pipeline client (no key cached) gets KeyVersionRevokedError naming version 1', async () => {
    // A fresh settings object: its own key source, so nothing unwrapped before the revocation is cached.
    reader = await ConnectionsClient.connect(loadClientConfig({ ...variables, TEMPORAL_TASK_QUEUE: stack.taskQueue }));
    const error = await reader.result(workflowId).then(
      () => assert.fail('a revoked history was read'),
      (thrown: unknown) => thrown,
    );
    let found: unknown = error;
    while (found instanceof Error && !(found instanceof KeyVersionRevokedError)) found = found.cause;
    assert.ok(found instanceof KeyVersionRevokedError, `${String(error)}`);
    assert.equal(found.version, 1);
    assert.equal(found.keyName, bao.transitKey);
  });

  it('the CLI says "key version revoked" with the version and the key, and exits 1', async () => {
    const fresh = await ConnectionsClient.connect(loadClientConfig({ ...variables, TEMPORAL_TASK_QUEUE: stack.taskQueue }));
    try {
      const run = await runCaptured(['watch', workflowId], { stack, client: fresh }, { env: { ...variables } });
      assert.equal(run.code, 1, run.err);
      assert.match(run.err, /key version revoked: version 1 of key "aggregation-payloads" \(vault-transit:aggregation-payloads\)/);
      assert.match(run.err, /min_decryption_version/);
      assert.doesNotMatch(run.out + run.err, /vault:v1:/, 'never the ciphertext');
    } finally {
      await fresh.close();
    }
  });

  it("the console's codec endpoint (what the Web UI shows) answers a typed state naming the version in place of each revoked payload", async () => {
    const codec = new EncryptionCodec(keySourceFor(loadClientConfig({ ...variables }).encryption!));
    const completed = rawEvents.find((event) => event.workflowExecutionCompletedEventAttributes)?.workflowExecutionCompletedEventAttributes?.result?.payloads?.[0];
    assert.ok(completed, 'the completion event carries the result');
    const shown = await decodeOrDescribe([codec], { metadata: completed.metadata ?? {}, data: completed.data ?? new Uint8Array() });
    assert.equal(text(shown.metadata?.encoding), 'json/plain');
    const state = (JSON.parse(text(shown.data)) as { undecodable: Record<string, unknown> }).undecodable;
    assert.equal(state.state, 'key-version-revoked');
    assert.equal(state.version, 1);
    assert.equal(state.keyName, 'aggregation-payloads');
    assert.match(String(state.message), /key version revoked/);
  });
});
