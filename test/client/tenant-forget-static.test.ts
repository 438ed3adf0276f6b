/**
 * Keys per tenant in static mode (PAYLOAD_TENANT_KEYS_DIR) on a real dev server, worker and sandbox:
 * each tenant's connection is sealed with its own key file (made on its first payload, Temporal being
 * on this machine); a client that may not make key files refuses to start a tenant without one, by
 * name, writing nothing; `tenant forget` terminates the lender's work and destroys its key file, after
 * which `show` says "key destroyed" naming the file, and the other tenant reads on.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { ConnectionsClient, connectionKey } from '../../src/client/index.js';
import { configuredKeysOf } from '../../src/codec/key-provider.js';
import { TenantKeyMissingError } from '../../src/codec/payload-errors.js';
import { SANDBOX_PASSWORD } from '../../sandbox/scenarios.js';
import { loadClientConfig } from '../../src/settings/client.js';
import { loadWorkerConfig } from '../../src/settings/worker.js';
import { startConnectionStack, TEST_ENCRYPTION_ENV, type ConnectionStack } from '../helpers/connection-stack.js';
import { createDevEnvironment, uniqueId } from '../helpers/temporal.js';
import { runCaptured } from '../cli/cli-capture.js';

const keysDir = mkdtempSync(join(tmpdir(), 'tenant-forget-static-'));
let env: TestWorkflowEnvironment;
let stack: ConnectionStack;
let client: ConnectionsClient;
let variables: Record<string, string>;
const forgotten = `static-a-${uniqueId('t').slice(-6)}`;
const kept = `static-b-${uniqueId('t').slice(-6)}`;
const forgottenId = connectionKey(forgotten, 'app-1');
const keptId = connectionKey(kept, 'app-1');
const waiting = (customerId: string) => ({
  customerId,
  session: { kind: 'live' as const, institution: 'SandboxBank', username: 'security_question', password: SANDBOX_PASSWORD },
  products: { accountsDetail: { WithTransactions: true } },
});

async function cli(args: string[], stdin?: string) {
  const own = await ConnectionsClient.connect(loadClientConfig(variables));
  try {
    return await runCaptured(args, { stack, client: own }, { env: variables, ...(stdin === undefined ? {} : { stdin }) });
  } finally {
    await own.close();
  }
}

before(async () => {
  env = await createDevEnvironment();
  const base = { TEMPORAL_ADDRESS: env.address, TEMPORAL_NAMESPACE: env.namespace ?? 'default', ...TEST_ENCRYPTION_ENV, PAYLOAD_TENANT_KEYS_DIR: keysDir };
  const encryption = loadWorkerConfig(base).encryption;
  stack = await startConnectionStack(env, { customerId: forgotten, ...(encryption ? { encryption } : {}) });
  variables = { ...base, TEMPORAL_TASK_QUEUE: stack.taskQueue, AGGREGATOR_CUSTOMER_ID: forgotten };
  client = await ConnectionsClient.connect(loadClientConfig(variables));
  await client.startAndAwaitFirstStep(forgottenId, waiting(forgotten));
  await client.startAndAwaitFirstStep(keptId, waiting(kept));
});

after(async () => {
  await client?.close();
  await stack?.stop();
  await env?.teardown();
  rmSync(keysDir, { recursive: true, force: true });
});

describe('keys per tenant in static mode, end to end', () => {
  it("seals each tenant's connection with a key file of its own, made on its first payload, readable by its owner only", async () => {
    for (const tenant of [forgotten, kept]) assert.equal(statSync(join(keysDir, `${tenant}.key`)).mode & 0o777, 0o600, tenant);
    assert.equal((await client.getState(forgottenId)).status, 'AwaitingAnswer', 'the worker reads what the client sealed with the tenant key');
  });

  it('refuses to start a tenant without a key file where none may be made, by name, and writes nothing', async () => {
    const config = loadClientConfig(variables);
    const keys = configuredKeysOf(config.encryption) ?? assert.fail('configured keys');
    const elsewhere = await ConnectionsClient.connect({ ...config, encryption: { ...keys, tenantKeyFiles: { dir: keysDir, createMissing: false } } });
    const tenant = `static-c-${uniqueId('t').slice(-6)}`;
    try {
      await assert.rejects(
        elsewhere.start(connectionKey(tenant, 'app-1'), waiting(tenant)),
        (error: unknown) => error instanceof TenantKeyMissingError && error.tenant === tenant,
      );
    } finally {
      await elsewhere.close();
    }
    assert.throws(() => statSync(join(keysDir, `${tenant}.key`)), /ENOENT/);
    await assert.rejects(client.describe(connectionKey(tenant, 'app-1')), 'no workflow was started');
  });

  it('forgets a lender: its work terminated, its key file destroyed, show names the file; the other tenant reads on', async () => {
    const run = await cli(['tenant', 'forget', forgotten], `${forgotten}\n`);
    assert.equal(run.code, 0, run.err);
    assert.match(run.err, /This destroys key file "[^"]+\.key": every payload of tenant/);
    assert.match(run.out, /workflows {2}[1-9]\d* running terminated/);
    assert.match(run.out, new RegExp(`key {8}\\S+${forgotten}\\.key destroyed: its payloads are unreadable for good`));
    assert.throws(() => statSync(join(keysDir, `${forgotten}.key`)), /ENOENT/);
    assert.equal((await client.describe(forgottenId)).executionStatus, 'TERMINATED');
    const shown = await cli(['show', forgottenId]);
    assert.equal(shown.code, 1, shown.err);
    assert.match(shown.err, new RegExp(`key destroyed: the key file \\S+${forgotten}\\.key of tenant "${forgotten}" is gone`));
    assert.equal((await client.getState(keptId)).status, 'AwaitingAnswer', 'the other tenant reads on');

    const again = await cli(['tenant', 'forget', forgotten, '--yes']);
    assert.equal(again.code, 0, again.err);
    assert.match(again.out, /already gone/);
  });
});
