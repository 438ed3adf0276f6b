/**
 * `tenant forget` on a real OpenBao, dev server, worker and sandbox, with keys per tenant: nothing
 * changes unless the customer id is typed again, nor with a token that may not destroy the key (the
 * worker's); with an administrator's token the lender's running connection is terminated and its key
 * destroyed, `show` then says "key destroyed" by name, and another tenant's connection is untouched.
 * Run again, it finds the key already gone.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { ConnectionsClient, connectionKey } from '../../src/client/index.js';
import { tenantTransitKey } from '../../src/codec/vault-transit.js';
import { SANDBOX_PASSWORD } from '../../sandbox/scenarios.js';
import { loadClientConfig } from '../../src/settings/client.js';
import { loadWorkerConfig } from '../../src/settings/worker.js';
import { transitProcessEnv } from '../../scripts/lib/openbao-server.js';
import { startConnectionStack, TEST_ENCRYPTION_ENV, type ConnectionStack } from '../helpers/connection-stack.js';
import { startOpenBao, workerPolicy, type OpenBaoServer } from '../helpers/openbao.js';
import { createDevEnvironment, uniqueId } from '../helpers/temporal.js';
import { runCaptured } from '../cli/cli-capture.js';

let bao: OpenBaoServer;
let env: TestWorkflowEnvironment;
let stack: ConnectionStack;
let client: ConnectionsClient;
let variables: Record<string, string>;
let workerToken: string;
const forgotten = `forget-a-${uniqueId('t').slice(-6)}`;
const kept = `forget-b-${uniqueId('t').slice(-6)}`;
let forgottenId: string;
let keptId: string;

/** The CLI with its own client (it closes the client it is given when the command ends). */
async function cli(args: string[], options: { token?: string; stdin?: string } = {}) {
  const own = await ConnectionsClient.connect(loadClientConfig(variables));
  try {
    return await runCaptured(
      args,
      { stack, client: own },
      { env: { ...variables, PAYLOAD_VAULT_TOKEN: options.token ?? workerToken }, ...(options.stdin === undefined ? {} : { stdin: options.stdin }) },
    );
  } finally {
    await own.close();
  }
}

const keyExists = (tenant: string) =>
  bao.api('GET', `transit/keys/${tenantTransitKey(bao.transitKey, tenant)}`).then(
    () => true,
    () => false,
  );

before(async () => {
  bao = await startOpenBao();
  workerToken = await bao.token('forget-worker', workerPolicy(bao.transitKey));
  env = await createDevEnvironment();
  const base = {
    TEMPORAL_ADDRESS: env.address,
    TEMPORAL_NAMESPACE: env.namespace ?? 'default',
    ...TEST_ENCRYPTION_ENV,
    ...transitProcessEnv(bao.address, workerToken, bao.transitKey),
  };
  const encryption = loadWorkerConfig(base).encryption;
  stack = await startConnectionStack(env, { customerId: forgotten, ...(encryption ? { encryption } : {}) });
  variables = { ...base, TEMPORAL_TASK_QUEUE: stack.taskQueue, AGGREGATOR_CUSTOMER_ID: forgotten };
  client = await ConnectionsClient.connect(loadClientConfig(variables));
  const waiting = (customerId: string) => ({
    customerId,
    session: { kind: 'live' as const, institution: 'SandboxBank', username: 'security_question', password: SANDBOX_PASSWORD },
    products: { accountsDetail: { WithTransactions: true } },
  });
  forgottenId = connectionKey(forgotten, 'app-1');
  keptId = connectionKey(kept, 'app-1');
  await client.startAndAwaitFirstStep(forgottenId, waiting(forgotten));
  await client.startAndAwaitFirstStep(keptId, waiting(kept));
});

after(async () => {
  await client?.close();
  await stack?.stop();
  await env?.teardown();
  await bao?.stop();
});

describe('tenant forget', () => {
  it('changes nothing unless the customer id is typed again', async () => {
    const run = await cli(['tenant', 'forget', forgotten], { token: bao.rootToken, stdin: 'another-lender\n' });
    assert.equal(run.code, 1, run.err);
    assert.match(run.err, /not confirmed \(another id typed\): nothing changed/);
    assert.equal(await keyExists(forgotten), true);
    assert.equal((await client.getState(forgottenId)).status, 'AwaitingAnswer');
  });

  it("changes nothing with a token that may not destroy the key (the worker's), and says what it needs", async () => {
    const run = await cli(['tenant', 'forget', forgotten, '--yes']);
    assert.equal(run.code, 1, run.err);
    assert.match(
      run.err,
      /may not destroy tenant "forget-a-\w+"'s transit key .*needs "update" on transit\/keys\/.*\/config and "delete" on .*nothing was changed/,
    );
    assert.equal(await keyExists(forgotten), true);
    assert.equal((await client.getState(forgottenId)).status, 'AwaitingAnswer');
  });

  it('refuses a customer id that is not one, by name', async () => {
    const run = await cli(['tenant', 'forget', 'entry-x', '--yes'], { token: bao.rootToken });
    assert.equal(run.code, 2, run.err);
    assert.match(run.err, /<customerId> must not begin with "entry-"/);
  });

  it("with an administrator's token: terminates the lender's work, destroys its key, and show says so by name; another tenant is untouched", async () => {
    const run = await cli(['tenant', 'forget', forgotten], { token: bao.rootToken, stdin: `${forgotten}\n` });
    assert.equal(run.code, 0, run.err);
    assert.match(run.out, new RegExp(`^forgot tenant ${forgotten}$`, 'm'));
    assert.match(run.out, /workflows {2}[1-9]\d* running terminated/);
    assert.match(run.out, /key {8}\S+-tenant-forget-a-\w+ destroyed: its payloads are unreadable for good/);
    assert.equal(await keyExists(forgotten), false);
    assert.equal((await client.describe(forgottenId)).executionStatus, 'TERMINATED');
    const shown = await cli(['show', forgottenId]);
    assert.equal(shown.code, 1, shown.err);
    assert.match(shown.err, /key destroyed: key "\S+-tenant-forget-a-\w+" of tenant "forget-a-\w+" is gone from the KMS/);
    assert.equal((await client.getState(keptId)).status, 'AwaitingAnswer', 'the other tenant reads on');
    assert.equal(await keyExists(kept), true);
  });

  it('run again, finds the key already gone', async () => {
    const run = await cli(['tenant', 'forget', forgotten, '--yes'], { token: bao.rootToken });
    assert.equal(run.code, 0, run.err);
    assert.match(run.out, /workflows {2}0 running terminated/);
    assert.match(run.out, /already gone/);
  });
});
