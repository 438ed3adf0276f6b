/**
 * Durability: the worker process is killed (SIGKILL) while a connection waits on a poll timer and
 * while it awaits an answer; a new worker process, started from the production bundle, finishes it
 * with the right data. Real dev server, real sandbox, real worker processes.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { bundleWorkflowCode } from '@temporalio/worker';
import { createSandbox } from '../../src/sandbox/server.js';
import { SANDBOX_PASSWORD, SCENARIOS, describeScenario } from '../../src/sandbox/scenarios.js';
import type { ConnectionInputArgs } from '../../src/workflows/connection-input.js';
import { connectionStateQuery, submitAnswerUpdate, type ConnectionResult, type ConnectionState } from '../../src/workflows/definitions.js';
import { WORKFLOWS_PATH } from '../helpers/connection-stack.js';
import { createDevEnvironment, uniqueId, waitFor } from '../helpers/temporal.js';

const WORKER_ENTRY = fileURLToPath(new URL('../../src/worker.ts', import.meta.url));

let env: TestWorkflowEnvironment;
let sandbox: Awaited<ReturnType<typeof createSandbox>>;
let bundleDir: string;
let bundlePath: string;
const customerId = uniqueId('tenant');
const workers = new Set<ChildProcess>();

before(async () => {
  env = await createDevEnvironment();
  sandbox = await createSandbox({ port: 0 });
  bundleDir = await mkdtemp(join(tmpdir(), 'workflow-bundle-'));
  bundlePath = join(bundleDir, 'workflow-bundle.js');
  await writeFile(bundlePath, (await bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: { info() {}, warn() {}, error() {}, debug() {}, trace() {}, log() {} } })).code);
});

after(async () => {
  for (const worker of workers) worker.kill('SIGKILL');
  await sandbox?.close();
  await env?.teardown();
  if (bundleDir) await rm(bundleDir, { recursive: true, force: true });
});

/** Starts `src/worker.ts` as its own process and resolves once it reports it is polling. */
async function startWorkerProcess(taskQueue: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', WORKER_ENTRY], {
    env: {
      PATH: process.env.PATH,
      TEMPORAL_ADDRESS: env.address,
      TEMPORAL_TASK_QUEUE: taskQueue,
      AGGREGATOR_BASE_URL: sandbox.url,
      WORKER_WORKFLOW_BUNDLE: bundlePath,
      WORKER_METRICS_PORT: '0',
      LOG_LEVEL: 'INFO',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  workers.add(child);
  child.once('exit', () => workers.delete(child));
  let output = '';
  const started = new Promise<void>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('"worker started"')) resolve();
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('exit', (code) => reject(new Error(`worker exited with ${code} before starting:\n${output}`)));
  });
  await started;
  return child;
}

async function kill(child: ChildProcess): Promise<void> {
  const exited = once(child, 'exit');
  child.kill('SIGKILL');
  const [code, signal] = (await exited) as [number | null, string | null];
  assert.equal(signal, 'SIGKILL', `worker ended with ${code}/${signal}`);
}

async function start(input: Omit<ConnectionInputArgs, 'customerId'>, taskQueue: string) {
  return env.client.workflow.start('connectionWorkflow', { taskQueue, workflowId: uniqueId('durable'), args: [{ customerId, ...input }] });
}

async function stateOf(workflowId: string, predicate: (state: ConnectionState) => boolean, describe: string): Promise<ConnectionState> {
  return waitFor(
    async () => {
      const state = await env.client.workflow.getHandle(workflowId).query(connectionStateQuery);
      return predicate(state) ? state : undefined;
    },
    { timeoutMs: 30_000, describe },
  );
}

describe('a killed worker loses nothing', () => {
  it('finishes a connection whose worker was killed while it waited on a poll timer', async () => {
    const taskQueue = uniqueId('durable-poll');
    const response = await fetch(`${sandbox.url}/sandbox/${customerId}/logins`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'pending_polls_4' }) });
    const { LoginId: loginId } = (await response.json()) as { LoginId: string };

    const first = await startWorkerProcess(taskQueue);
    const handle = await start({ session: { kind: 'cached', loginId }, products: { accountsDetail: { WithTransactions: true } }, timing: { pollIntervalMs: 2_000 } }, taskQueue);
    const waiting = await stateOf(handle.workflowId, (s) => (s.pending?.pollCount ?? 0) >= 1 && s.pending?.nextPollAt !== undefined, 'a poll made and the next one on a timer');
    await kill(first);

    await startWorkerProcess(taskQueue);
    const result = (await handle.result()) as ConnectionResult;
    assert.equal(result.totalPolls, 4, 'every poll counted once across both workers');
    assert.ok(waiting.totalPolls < 4, 'the kill happened mid-polling');
    assert.equal(result.loginId, loginId);
    assert.ok(result.accountsDetail && result.accountsDetail.Accounts.length >= 2);
  });

  it('finishes a connection whose worker was killed while it awaited an answer', async () => {
    const taskQueue = uniqueId('durable-answer');
    const scenario = SCENARIOS.find((entry) => entry.username === 'triple_question') ?? assert.fail('scenario');
    const answer = describeScenario(scenario).challengeSequence[0]?.answer ?? assert.fail('answer');

    const first = await startWorkerProcess(taskQueue);
    const handle = await start(
      { session: { kind: 'live', institution: scenario.institution, username: scenario.username, password: SANDBOX_PASSWORD, save: true }, products: { accountsDetail: {} }, timing: { pollIntervalMs: 500 } },
      taskQueue,
    );
    await stateOf(handle.workflowId, (s) => s.status === 'AwaitingAnswer', 'the triple question');
    await kill(first);

    await startWorkerProcess(taskQueue);
    const outcome = await handle.executeUpdate(submitAnswerUpdate, { args: [{ challengeSetId: '1', responses: answer }] });
    assert.equal(outcome.outcome, 'accepted');
    const result = (await handle.result()) as ConnectionResult;
    assert.ok(result.loginId);
    assert.ok(result.accountsDetail && result.accountsDetail.Accounts.length >= 2);
  });
});
