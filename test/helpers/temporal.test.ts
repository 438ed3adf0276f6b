import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { ConnectionStatusKey, CustomerIdKey, InstitutionKey, LoginIdKey } from '../../src/contract/search-attributes.js';
import type { echoWorkflow } from './fixtures/echo-workflow.js';
import { createDevEnvironment, createTimeSkippingEnvironment, uniqueId, waitFor } from './temporal.js';

const workflowsPath = fileURLToPath(new URL('./fixtures/echo-workflow.ts', import.meta.url));

void describe('the dev server environment', () => {
  let env: TestWorkflowEnvironment;
  before(async () => {
    env = await createDevEnvironment();
  });
  after(async () => {
    await env?.teardown();
  });

  void it('runs a workflow that upserts the connection search attributes and finds it with a visibility query', async () => {
    const taskQueue = uniqueId('helpers-echo');
    const status = uniqueId('Status');
    const worker = await Worker.create({ connection: env.nativeConnection, namespace: 'default', taskQueue, workflowsPath });
    const workflowId = uniqueId('echo');

    const result = await worker.runUntil(
      env.client.workflow.execute<typeof echoWorkflow>('echoWorkflow', {
        taskQueue,
        workflowId,
        args: [{ message: 'hello', status, customerId: 'customer-1', institution: 'Bank of Tests', loginId: 'login-1' }],
      }),
    );
    assert.equal(result.message, 'hello');

    const attributes = (await env.client.workflow.getHandle(workflowId).describe()).typedSearchAttributes;
    assert.equal(attributes.get(ConnectionStatusKey), status);
    assert.equal(attributes.get(CustomerIdKey), 'customer-1');
    assert.equal(attributes.get(InstitutionKey), 'Bank of Tests');
    assert.equal(attributes.get(LoginIdKey), 'login-1');

    const found = await waitFor(
      async () => {
        const ids: string[] = [];
        for await (const execution of env.client.workflow.list({ query: `ConnectionStatus = "${status}"` })) ids.push(execution.workflowId);
        return ids.length > 0 ? ids : undefined;
      },
      { timeoutMs: 15_000, intervalMs: 200, describe: `a workflow with ConnectionStatus = "${status}" in visibility` },
    );
    assert.deepEqual(found, [workflowId]);
  });
});

void describe('the time-skipping environment', () => {
  let env: TestWorkflowEnvironment;
  before(async () => {
    env = await createTimeSkippingEnvironment();
  });
  after(async () => {
    await env?.teardown();
  });

  void it('skips a 30-minute durable timer in a workflow that upserts the connection search attributes', async () => {
    const taskQueue = uniqueId('helpers-sleep');
    const worker = await Worker.create({ connection: env.nativeConnection, taskQueue, workflowsPath });
    const workflowId = uniqueId('sleepy-echo');

    const result = await worker.runUntil(
      env.client.workflow.execute<typeof echoWorkflow>('echoWorkflow', {
        taskQueue,
        workflowId,
        args: [{ message: 'awake', status: 'Sleeping', customerId: 'customer-2', institution: 'Bank of Time', loginId: 'login-2', sleep: '30 minutes' }],
      }),
    );

    assert.equal(result.message, 'awake');
    assert.ok(result.elapsedMs >= 30 * 60_000, `workflow time passed: ${result.elapsedMs} ms`);
    const attributes = (await env.client.workflow.getHandle(workflowId).describe()).typedSearchAttributes;
    assert.equal(attributes.get(ConnectionStatusKey), 'Sleeping');
    assert.equal(attributes.get(LoginIdKey), 'login-2');
  });
});
