/**
 * Histories made by today's code replay under today's code: a cached connection that completes
 * (with the retention notice behind its patch, retention on and off), replayed from the server's
 * history by a fresh replayer, and queried after the worker's cache was dropped. The recorded
 * histories of replay.test.ts prove older code's histories; this proves the newest.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { workerDataConverterFor } from '../../src/codec/data-converter.js';
import { connectionStateQuery } from '../../src/contract/connection/connection-definitions.js';
import { startConnectionStack, TEST_ENCRYPTION, type ConnectionStack } from '../helpers/connection-stack.js';
import { createDevEnvironment, uniqueId } from '../helpers/temporal.js';
import { productWorkflowCode } from '../helpers/test-tier.js';

let env: TestWorkflowEnvironment;

before(async () => {
  env = await createDevEnvironment();
});

after(async () => {
  await env?.teardown();
});

for (const retention of ['off', 'on'] as const) {
  describe(`a history made today, retention ${retention}`, () => {
    let stack: ConnectionStack;
    before(async () => {
      const customerId = uniqueId('tenant');
      stack = await startConnectionStack(env, { customerId, retentionDays: retention === 'on' ? { [customerId]: 30 } : {} });
    });
    after(async () => {
      await stack?.stop();
    });

    it('replays without nondeterminism, and answers a query after the worker restarts', async () => {
      const loginId = await stack.savedLogin('no_mfa');
      const handle = await stack.start({ session: { kind: 'cached', loginId }, products: { accountsDetail: {} }, timing: { pollIntervalMs: 50 } });
      await handle.result();
      const history = await handle.fetchHistory();
      await Worker.runReplayHistory(
        { ...productWorkflowCode(), dataConverter: workerDataConverterFor({ encryption: TEST_ENCRYPTION }) },
        history,
        handle.workflowId,
      );

      // A new worker on the same task queue has nothing cached: the query replays the whole history.
      await stack.stop();
      stack = await startConnectionStack(env, { customerId: stack.customerId, taskQueue: stack.taskQueue });
      const state = await stack.client.workflow.getHandle(handle.workflowId).query(connectionStateQuery);
      assert.equal(state.status, 'Completed');
    });
  });
}
