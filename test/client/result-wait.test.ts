/**
 * The pipeline's wait for a result outlives Temporal going away: the dev server is killed while a
 * caller waits on `result()`, stays down until the SDK's own retries (≈ 20 s) are spent and ours have
 * taken over, then comes back on the same database; the wait resolves with the connection's data.
 * And a wait that Temporal refuses for longer than the caller allows fails as a wait
 * (ResultWaitFailedError), never as a connection failure. Real dev server process, real worker and sandbox.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { DevServer } from '../../scripts/lib/dev-server.js';
import { ConnectionsClient, ResultWaitFailedError, connectionKey, type TransientRetry } from '../../src/client/index.js';
import { startConnectionStack, type ConnectionStack } from '../helpers/connection-stack.js';
import { uniqueId, waitFor } from '../helpers/temporal.js';
import { liveInput } from './client-stack.js';
import { correctAnswer } from './scenario-answers.js';

let runDir: string;
let server: DevServer;
let env: TestWorkflowEnvironment;
let stack: ConnectionStack;
let client: ConnectionsClient;

before(async () => {
  runDir = await mkdtemp(join(tmpdir(), 'result-wait-'));
  server = await DevServer.start({ dbFile: join(runDir, 'temporal.sqlite'), logPath: join(runDir, 'server.log') });
  env = await TestWorkflowEnvironment.createFromExistingServer({ address: server.address });
  stack = await startConnectionStack(env);
  client = new ConnectionsClient({ client: stack.client, taskQueue: stack.taskQueue, address: server.address });
});

after(async () => {
  await stack?.stop();
  await env?.teardown();
  await server?.close();
  if (runDir) await rm(runDir, { recursive: true, force: true });
});

describe('waiting for a result', () => {
  it('rides out a Temporal server that is down longer than the SDK retries, and resolves with the data', async () => {
    const key = connectionKey(stack.customerId, uniqueId('server-restart'));
    const first = await client.startAndAwaitFirstStep(key, liveInput(stack.customerId, 'security_question', 'SandboxBank'));
    assert.equal(first.step, 'challenge');

    const retries: TransientRetry[] = [];
    const waiting = client.result(key, { onRetry: (retry) => retries.push(retry) });
    let settled = false;
    void waiting.then(
      () => (settled = true),
      () => (settled = true),
    );

    await server.stop('SIGKILL');
    // Down until our layer has retried: the SDK's connection-level retries are spent by then.
    await waitFor(() => retries.length >= 1, { timeoutMs: 90_000, describe: "the result wait to retry past the SDK's own retries" });
    assert.equal(settled, false, 'the wait is still on while the server is down');
    assert.equal(retries[0]?.code, 'UNAVAILABLE');
    await server.start();

    const answer = await correctAnswer(stack.sandboxUrl, 'security_question', 0);
    const outcome = await client.answer(key, { challengeSetId: first.step === 'challenge' ? first.challengeSet.id : '', responses: answer });
    assert.equal(outcome.outcome, 'accepted');
    const result = await waiting;
    assert.ok(result.accountsDetail, 'the waited-for result carries the accounts');
  });

  it('fails as a wait, not as the connection, when Temporal refuses longer than the caller allows', async () => {
    const key = connectionKey(stack.customerId, uniqueId('gives-up'));
    const first = await client.startAndAwaitFirstStep(key, liveInput(stack.customerId, 'security_question', 'SandboxBank'));
    assert.equal(first.step, 'challenge');

    await server.stop('SIGKILL');
    try {
      const error = await client.result(key, { giveUpAfterMs: 1 }).then(
        () => assert.fail('the wait resolved with the server down'),
        (caught: unknown) => caught,
      );
      assert.ok(error instanceof ResultWaitFailedError, `a ResultWaitFailedError, got ${String(error)}`);
      assert.equal(error.workflowId, key);
      assert.equal(error.lastCode, 'UNAVAILABLE');
    } finally {
      await server.start();
    }
    const state = await client.getState(key);
    assert.equal(state.status, 'AwaitingAnswer', 'the connection itself was untouched by the failed wait');
  });
});
