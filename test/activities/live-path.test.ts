/**
 * The live path as a window reads it (livePath): on a real server, a task queue nobody polls, with an
 * unattended workflow task waiting and then a live one. Only the live one counts; the server's own
 * statistics say so a few seconds late (it refreshes them every few seconds).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import proto from '@temporalio/proto';
import { createLivePathActivities, liveStatsOf } from '../../src/activities/live-path-activities.js';
import { createDevEnvironment, uniqueId, waitFor } from '../helpers/temporal.js';

const WORKFLOW_QUEUE = proto.temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW;

void describe("the live path read from the server's task queue statistics", () => {
  let env: TestWorkflowEnvironment;
  before(async () => {
    env = await createDevEnvironment();
  });
  after(async () => {
    await env?.teardown();
  });

  void it('counts live tasks waiting to start and leaves unattended ones out', async () => {
    const taskQueue = uniqueId('live-path');
    const reader = createLivePathActivities({ temporal: env.client, taskQueue, liveKey: 1 });
    const unattended = await env.client.workflow.start('nobodyRunsThis', { taskQueue, workflowId: uniqueId('unattended'), priority: { priorityKey: 3 } });
    try {
      // The server has counted the unattended task (key 3) ...
      await waitFor(
        async () => {
          const response = await env.client.workflowService.describeTaskQueue({
            namespace: env.namespace ?? 'default',
            taskQueue: { name: taskQueue },
            taskQueueType: WORKFLOW_QUEUE,
            reportStats: true,
          });
          return Number(response.statsByPriorityKey?.['3']?.approximateBacklogCount ?? 0) >= 1;
        },
        { timeoutMs: 30_000, intervalMs: 500, describe: 'the server to count the unattended task' },
      );
      // ... and the live path is idle.
      assert.deepEqual(await reader.livePath(), { waitMs: 0, waiting: 0 });
      const live = await env.client.workflow.start('nobodyRunsThis', { taskQueue, workflowId: uniqueId('live'), priority: { priorityKey: 1 } });
      try {
        const reading = await waitFor(
          async () => {
            const read = await reader.livePath();
            return read !== null && read.waiting >= 1 ? read : undefined;
          },
          { timeoutMs: 30_000, intervalMs: 1_100, describe: 'the server to count the live task' },
        );
        assert.equal(reading.waiting, 1, 'the live task only');
        assert.ok(reading.waitMs > 0, `it has waited: ${reading.waitMs} ms`);
      } finally {
        await live.terminate('test over');
      }
    } finally {
      await unattended.terminate('test over');
    }
  });

  void it("gives no reading where the server refuses the question, and fails on any other error (the window's call retries it)", async () => {
    const refused = createLivePathActivities({ temporal: env.client, taskQueue: '', liveKey: 1 });
    assert.equal(await refused.livePath(), null, 'INVALID_ARGUMENT (no task queue): the window judges by its children');
    const elsewhere = new Client({ connection: env.connection, namespace: uniqueId('no-such-namespace') });
    const failing = createLivePathActivities({ temporal: elsewhere, taskQueue: 'live-path', liveKey: 1 });
    await assert.rejects(failing.livePath(), /namespace/i);
  });
});

void describe("the live keys' part of a queue's statistics", () => {
  const age = (ms: number) => ({ seconds: Math.floor(ms / 1_000), nanos: (ms % 1_000) * 1e6 });

  void it('takes the oldest wait and the count of every key up to the live one', () => {
    const stats: Parameters<typeof liveStatsOf>[0] = {
      '1': { approximateBacklogCount: 2, approximateBacklogAge: age(1_250) },
      '2': { approximateBacklogCount: 1, approximateBacklogAge: age(4_000) },
      '3': { approximateBacklogCount: 90, approximateBacklogAge: age(60_000) },
    };
    assert.deepEqual(liveStatsOf(stats, 1), { waitMs: 1_250, waiting: 2 });
    assert.deepEqual(liveStatsOf(stats, 2), { waitMs: 4_000, waiting: 3 });
  });

  void it('reads an empty backlog as no wait, whatever age the server left on it', () => {
    assert.deepEqual(liveStatsOf({ '1': { approximateBacklogCount: 0, approximateBacklogAge: age(900) } }, 1), { waitMs: 0, waiting: 0 });
  });

  void it('says nothing when the server counts no priority at all', () => {
    assert.equal(liveStatsOf({}, 1), undefined);
    assert.equal(liveStatsOf(undefined, 1), undefined);
    assert.equal(liveStatsOf(null, 1), undefined);
  });
});
