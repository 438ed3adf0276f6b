/**
 * Live tasks' waits to start, as the worker records them for its windows: kept over a span, read at
 * the 90th percentile, a stranded wait (scheduled while no worker ran) left out; and on a real dev
 * server with the product's worker, a connection started at a live priority key recorded, one at an
 * unattended key not, and both in the window's reading of the live path.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { combineLivePath, createLivePathActivities } from '../../src/activities/live-path-activities.js';
import { DEFAULT_PRIORITY_POLICY } from '../../src/contract/priority.js';
import { LiveTaskWaits, SHORTEST_SPAN_MS, STRANDED_WAIT_MS } from '../../src/metrics/live-task-waits.js';
import { createSandboxLogin } from '../../bench/sandbox-fixtures.js';
import { connectionStackOfFile } from '../helpers/connection-stack.js';
import { uniqueId } from '../helpers/temporal.js';

const NOW = 1_000_000;

void describe("live tasks' waits to start, kept by the worker", () => {
  void it('reads the 90th percentile of the span above the shortest wait kept, the longest of fewer than ten', () => {
    const waits = new LiveTaskWaits();
    assert.deepEqual(waits.recent(15_000, NOW), { samples: 0, p90Ms: 0 });
    for (const [wait, ago] of [
      [5, 1_000],
      [400, 2_000],
      [7, 3_000],
    ] as const)
      waits.record(wait, NOW - ago);
    assert.deepEqual(waits.recent(15_000, NOW), { samples: 3, p90Ms: 395 }, 'one slow start of three is the reading');
    for (let index = 0; index < 17; index += 1) waits.record(10 + index, NOW - 500);
    assert.deepEqual(waits.recent(15_000, NOW), { samples: 20, p90Ms: 20 }, '18th of 20 sorted (25 ms), less the shortest (5 ms)');
  });

  void it("reads the same whichever way the worker's clock is off the server's", () => {
    const spread = [3, 4, 6, 9, 30, 120];
    for (const offset of [-500, 0, 700]) {
      const waits = new LiveTaskWaits();
      for (const wait of spread) waits.record(wait + offset, NOW - 100);
      assert.deepEqual(waits.recent(15_000, NOW), { samples: 6, p90Ms: 117 }, `clock off by ${offset} ms`);
    }
  });

  void it('forgets starts older than the span (the shortest still counts), and leaves out a stranded wait and one that is not a number', () => {
    const waits = new LiveTaskWaits();
    waits.record(2, NOW - 20_000);
    waits.record(STRANDED_WAIT_MS, NOW);
    waits.record(-STRANDED_WAIT_MS, NOW);
    waits.record(Number.NaN, NOW);
    waits.record(50, NOW);
    assert.deepEqual(waits.recent(15_000, NOW), { samples: 1, p90Ms: 48 });
  });

  void it('takes the shortest over the last ten minutes, so a clock step forward is learned', () => {
    const waits = new LiveTaskWaits();
    waits.record(2, NOW - SHORTEST_SPAN_MS - 1_000);
    waits.record(302, NOW - 60_000);
    waits.record(310, NOW - 1_000);
    assert.deepEqual(waits.recent(15_000, NOW), { samples: 1, p90Ms: 8 }, 'the wait from before the step no longer sets the shortest');
  });

  void it('keeps the last 512 starts', () => {
    const waits = new LiveTaskWaits();
    for (let index = 0; index < 600; index += 1) waits.record(index < 88 ? 10_000 : 1, NOW);
    assert.deepEqual(waits.recent(15_000, NOW), { samples: 512, p90Ms: 0 });
  });

  void it("puts the worker's starts beside the server's instant, and gives no reading without the server's", () => {
    const activityStarts = { samples: 4, p90Ms: 180 };
    assert.deepEqual(combineLivePath({ waitMs: 20, waiting: 1 }, activityStarts), { waitMs: 20, waiting: 1, workerWaitMs: 180, workerSamples: 4 });
    assert.deepEqual(combineLivePath({ waitMs: 20, waiting: 1 }, { samples: 0, p90Ms: 0 }), { waitMs: 20, waiting: 1 }, 'no starts: the server alone');
    assert.deepEqual(combineLivePath({ waitMs: 20, waiting: 1 }, undefined), { waitMs: 20, waiting: 1 }, 'a process without live work: the server alone');
    assert.equal(combineLivePath(null, activityStarts), null, 'no server count: the window judges by its children');
  });
});

void describe("live tasks' waits recorded by the product's worker", () => {
  const current = connectionStackOfFile();

  async function connectionAt(priorityKey: number): Promise<void> {
    const { stack } = current;
    const loginId = await createSandboxLogin(stack.sandboxUrl, stack.customerId, `pending_polls_${priorityKey}`, 1);
    const handle = await stack.client.workflow.start('connectionWorkflow', {
      taskQueue: stack.taskQueue,
      workflowId: uniqueId('live-waits'),
      args: [{ customerId: stack.customerId, session: { kind: 'cached', loginId }, products: { accountsDetail: {} }, timing: { pollIntervalMs: 50 } }],
      priority: { priorityKey },
    });
    await handle.result();
  }

  void it('records the service calls of a connection at a live key, not of one at an unattended key, and the window reads them', async () => {
    const { stack } = current;
    const { liveStarts } = stack;
    await connectionAt(DEFAULT_PRIORITY_POLICY.keys.scheduled);
    assert.equal(liveStarts.recent(60_000).samples, 0, "an unattended connection's calls are not the live path");
    await connectionAt(DEFAULT_PRIORITY_POLICY.keys.live);
    const recorded = liveStarts.recent(60_000);
    // Authorize, the accounts request and at least one poll: each a service call inheriting the connection's key.
    assert.ok(recorded.samples >= 3, `live starts recorded: ${recorded.samples}`);
    const reader = createLivePathActivities({
      temporal: stack.client,
      taskQueue: stack.taskQueue,
      liveKey: DEFAULT_PRIORITY_POLICY.keys.live,
      own: liveStarts,
    });
    const reading = await reader.livePath();
    // The connection ended just now: its starts are within the reading's 15 s.
    assert.ok((reading?.workerSamples ?? 0) >= 3, JSON.stringify(reading));
    assert.equal(typeof reading?.workerWaitMs, 'number', JSON.stringify(reading));
  });
});
