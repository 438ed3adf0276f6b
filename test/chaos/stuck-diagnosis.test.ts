/**
 * The chaos harness's diagnosis of a stuck connection, against a real server: a workflow whose task
 * fails on every attempt (as a wedged connection's did) gets its queries refused, and the harness
 * names that refusal FAILED_PRECONDITION and reads, from describe and the history, the pending
 * workflow task's attempt and the last WorkflowTaskFailed with its cause and its message, which the
 * worker's failure converter encrypted (decoded here with the same key).
 */
import assert from 'node:assert/strict';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { Client } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { dataConverterFor, workerDataConverterFor } from '../../src/codec/data-converter.js';
import { diagnoseStuck, diagnosisLine } from '../../scripts/chaos/diagnosis.js';
import { failureCodeOf } from '../../scripts/chaos/grpc-codes.js';
import { fetchRawHistory } from '../../scripts/chaos/histories.js';
import { TEST_ENCRYPTION } from '../helpers/connection-stack.js';
import { createDevEnvironment, uniqueId } from '../helpers/temporal.js';

const WORKFLOWS = fileURLToPath(new URL('./fixtures/wedged-workflow.ts', import.meta.url));
/** The server retries a failed workflow task at once, then with a backoff of seconds. */
const ATTEMPT_WAIT_MS = 60_000;

let env: TestWorkflowEnvironment;
let worker: Worker;
let running: Promise<void>;
let client: Client;
const taskQueue = uniqueId('chaos-wedged');

before(async () => {
  env = await createDevEnvironment();
  worker = await Worker.create({
    connection: env.nativeConnection,
    namespace: env.namespace ?? 'default',
    taskQueue,
    workflowsPath: WORKFLOWS,
    dataConverter: workerDataConverterFor({ encryption: TEST_ENCRYPTION }),
  });
  running = worker.run();
  client = new Client({ connection: env.connection, namespace: env.namespace ?? 'default', dataConverter: dataConverterFor({ encryption: TEST_ENCRYPTION }) });
});

after(async () => {
  worker?.shutdown();
  await running;
  await env?.teardown();
});

void describe('a connection whose workflow task keeps failing', () => {
  void it('has its queries named FAILED_PRECONDITION and its diagnosis read and decoded', { timeout: ATTEMPT_WAIT_MS + 60_000 }, async () => {
    const workflowId = uniqueId('wedged');
    const handle = await client.workflow.start('wedgedWorkflow', { taskQueue, workflowId, args: ['test'] });
    try {
      const until = Date.now() + ATTEMPT_WAIT_MS;
      let attempt = 0;
      while (attempt < 3 && Date.now() < until) {
        attempt = (await handle.describe()).raw.pendingWorkflowTask?.attempt ?? 0;
        if (attempt < 3) await delay(500);
      }
      assert.ok(attempt >= 3, `the workflow task reached attempt ${attempt} only`);

      const refusal = await client
        .withDeadline(Date.now() + 10_000, () => handle.query('state'))
        .then(
          () => assert.fail('the query was answered'),
          (error: unknown) => error,
        );
      assert.equal(failureCodeOf(refusal), 'FAILED_PRECONDITION', String(refusal));

      // The message left the worker encrypted: history alone does not say it.
      const events = await fetchRawHistory(client.connection, client.options.namespace, { workflowId });
      const rawMessages = events.flatMap((event) =>
        event.workflowTaskFailedEventAttributes?.failure?.message ? [event.workflowTaskFailedEventAttributes.failure.message] : [],
      );
      assert.ok(rawMessages.length > 0 && rawMessages.every((message) => !message.includes('wedged on purpose')), `raw messages: ${rawMessages.join(' | ')}`);

      const diagnosis = await diagnoseStuck(client, workflowId);
      assert.equal(diagnosis.status, 'RUNNING');
      assert.ok((diagnosis.pendingWorkflowTask?.attempt ?? 0) >= 3, JSON.stringify(diagnosis.pendingWorkflowTask));
      assert.ok(diagnosis.workflowTaskFailures >= 1);
      assert.equal(diagnosis.lastWorkflowTaskProblem?.event, 'WorkflowTaskFailed');
      assert.equal(diagnosis.lastWorkflowTaskProblem?.cause, 'WORKFLOW_WORKER_UNHANDLED_FAILURE');
      assert.match(diagnosis.lastWorkflowTaskProblem?.message ?? '', /wedged on purpose: test/);
      assert.deepEqual(diagnosis.pendingActivities, []);
      assert.match(
        diagnosisLine(diagnosis, new Map([['FAILED_PRECONDITION', 1]])),
        /^workflow task attempt \d+ \((SCHEDULED|STARTED).*\); last WorkflowTaskFailed #\d+ \(WORKFLOW_WORKER_UNHANDLED_FAILURE\): .*wedged on purpose: test.*; no pending activity; failed queries: FAILED_PRECONDITION 1$/,
      );
    } finally {
      await handle.terminate('test over');
    }
  });
});
