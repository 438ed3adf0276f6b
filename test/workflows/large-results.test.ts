/**
 * Results of any size: a business login's year of transactions through a real worker, dev server and
 * sandbox, with payloads encrypted and stored outside history (a local payload store). The result
 * equals what the sandbox serves, the raw history stays small, a worker killed mid-retrieval loses
 * nothing, and without a payload store a result that cannot fit ends the connection at once as
 * ResultTooLarge.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFile } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Client, WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { createAggregatorClient } from '../../src/aggregator/client.js';
import { AggregatorNetworkError } from '../../src/aggregator/errors.js';
import type { AccountsDetailResponse } from '../../src/aggregator/schemas.js';
import { dataConverterFor } from '../../src/codec/data-converter.js';
import { connectionStateQuery, type ConnectionResult } from '../../src/contract/connection/connection-definitions.js';
import { TEST_ENCRYPTION, TEST_ENCRYPTION_ENV, startConnectionStack, type ConnectionStack } from '../helpers/connection-stack.js';
import { killProcess, startProcess, stopAllProcesses } from '../helpers/processes.js';
import { createDevEnvironment, uniqueId, waitFor } from '../helpers/temporal.js';
import { fetchRawHistory, payloadsIn, encodedSize } from '../helpers/raw-history.js';

const ONE_MIB = 1024 * 1024;
const CLI = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));
const run = promisify(execFile);
const DETAIL = { WithTransactions: true, DaysOfTransactions: 'Days365' } as const;

let env: TestWorkflowEnvironment;
let storeDirectory: string;
let stack: ConnectionStack;

before(async () => {
  env = await createDevEnvironment();
  storeDirectory = await mkdtemp(join(tmpdir(), 'payload-store-'));
  stack = await startConnectionStack(env, { payloadStore: { kind: 'local', directory: storeDirectory } });
});

after(async () => {
  await stopAllProcesses();
  await stack?.stop();
  await env?.teardown();
  if (storeDirectory) await rm(storeDirectory, { recursive: true, force: true });
});

/** What the sandbox itself serves for the login, fetched directly (no worker, no Temporal). */
async function servedBySandbox(sandboxUrl: string, customerId: string, loginId: string): Promise<AccountsDetailResponse> {
  const service = createAggregatorClient({ baseUrl: sandboxUrl, customerId, timeoutMs: 60_000 });
  const session = await resentOnNetworkError(() => service.authorizeCached(loginId));
  assert.equal(session.kind, 'ready');
  let outcome = await service.getAccountsDetail(session.requestId, DETAIL);
  while (outcome.kind === 'pending') outcome = await service.getAccountsDetailAsync(session.requestId);
  return outcome.data;
}

/**
 * A cached Authorize is idempotent, so it is resent as the workflow resends it. Why here: once in CI
 * the first request after a long retrieval met a keep-alive socket the sandbox had just closed
 * (ECONNRESET, "network error"), with this process's event loop busy with 80 MB of JSON.
 */
async function resentOnNetworkError<T>(call: () => Promise<T>, sends = 3): Promise<T> {
  for (let send = 1; ; send += 1) {
    try {
      return await call();
    } catch (error) {
      if (!(error instanceof AggregatorNetworkError) || send >= sends) throw error;
    }
  }
}

function transactionsOf(detail: AccountsDetailResponse | undefined): number {
  return (detail?.Accounts ?? []).reduce((sum, account) => sum + (account.Transactions?.length ?? 0), 0);
}

async function assertSmallHistory(workflowId: string): Promise<void> {
  const raw = await fetchRawHistory(env.connection, env.namespace ?? 'default', workflowId);
  assert.ok(raw.bytes.length < ONE_MIB, `the history is ${raw.bytes.length} bytes, under 1 MiB`);
  const largest = Math.max(...payloadsIn(raw.events).map(encodedSize));
  assert.ok(largest <= 256 * 1024, `no payload in history over 256 KiB (largest ${largest} bytes)`);
}

/** The operator CLI, as a process configured by its environment, follows the connection to its stored result. */
async function assertCliReadsResult(workflowId: string): Promise<void> {
  const { stdout } = await run(process.execPath, ['--import', 'tsx', CLI, 'watch', workflowId], {
    env: {
      PATH: process.env.PATH,
      TEMPORAL_ADDRESS: env.address,
      TEMPORAL_NAMESPACE: env.namespace ?? 'default',
      TEMPORAL_TASK_QUEUE: stack.taskQueue,
      ...TEST_ENCRYPTION_ENV,
      PAYLOAD_STORE: 'local',
      PAYLOAD_STORE_DIRECTORY: storeDirectory,
    },
  });
  assert.match(stdout, new RegExp(`connection ${workflowId} completed`));
}

describe('large business logins', () => {
  for (const [username, transactions] of [
    ['large_10x5000', 50_000],
    ['large_100x5000', 500_000],
  ] as const) {
    it(`completes a cached connection of ${username} with the sandbox's data and a history under 1 MiB`, async () => {
      const loginId = await stack.savedLogin(username);
      const handle = await stack.start({ session: { kind: 'cached', loginId }, products: { accountsDetail: DETAIL }, timing: { pollIntervalMs: 200 } });
      const result = await handle.result();
      assert.equal(transactionsOf(result.accountsDetail), transactions);
      const served = await servedBySandbox(stack.sandboxUrl, stack.customerId, loginId);
      assert.deepEqual(result.accountsDetail?.Accounts, served.Accounts, 'the data equals what the sandbox serves');
      await assertSmallHistory(handle.workflowId);
      if (username === 'large_10x5000') await assertCliReadsResult(handle.workflowId);
    });
  }

  it('finishes a large retrieval whose worker was killed mid-retrieval', async () => {
    const taskQueue = uniqueId('large-kill');
    const payloadStoreEnv = { PAYLOAD_STORE: 'local', PAYLOAD_STORE_DIRECTORY: storeDirectory };
    const workerEnv = {
      TEMPORAL_ADDRESS: env.address,
      TEMPORAL_TASK_QUEUE: taskQueue,
      AGGREGATOR_BASE_URL: stack.sandboxUrl,
      WORKER_METRICS_PORT: '0',
      ...TEST_ENCRYPTION_ENV,
      ...payloadStoreEnv,
    };
    const client = new Client({
      connection: env.connection,
      namespace: env.namespace ?? 'default',
      dataConverter: dataConverterFor({ encryption: TEST_ENCRYPTION, payloadStore: { kind: 'local', directory: storeDirectory } }),
    });
    const loginId = await stack.savedLogin('large_10x5000');
    const first = await startProcess('worker', workerEnv);
    const handle = await client.workflow.start('connectionWorkflow', {
      taskQueue,
      workflowId: uniqueId('large-kill'),
      args: [{ customerId: stack.customerId, session: { kind: 'cached', loginId }, products: { accountsDetail: DETAIL }, timing: { pollIntervalMs: 2_000 } }],
    });
    await waitFor(async () => ((await handle.query(connectionStateQuery)).pending?.nextPollAt ? true : undefined), {
      timeoutMs: 30_000,
      describe: 'the retrieval pending on a poll timer',
    });
    await killProcess(first.child);
    await startProcess('worker', workerEnv);
    const result = (await handle.result()) as ConnectionResult;
    assert.equal(transactionsOf(result.accountsDetail), 50_000);
    await assertSmallHistory(handle.workflowId);
  });
});

describe('without a payload store', () => {
  let plain: ConnectionStack;
  before(async () => {
    plain = await startConnectionStack(env, { payloadStore: { kind: 'off' } });
  });
  after(async () => {
    await plain?.stop();
  });

  it('ends a connection whose result cannot fit in history at once as ResultTooLarge, status Failed', async () => {
    const loginId = await plain.savedLogin('large_10x5000');
    const handle = await plain.start({ session: { kind: 'cached', loginId }, products: { accountsDetail: DETAIL }, timing: { pollIntervalMs: 200 } });
    const error = await handle.result().then(
      () => assert.fail('expected ResultTooLarge'),
      (caught: unknown) => caught,
    );
    assert.ok(error instanceof WorkflowFailedError && error.cause instanceof ApplicationFailure, `a connection failure, not ${String(error)}`);
    assert.equal(error.cause.type, 'ResultTooLarge');
    assert.equal((await handle.query(connectionStateQuery)).status, 'Failed');
  });
});
