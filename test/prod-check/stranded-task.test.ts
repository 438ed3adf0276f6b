/**
 * The remedy prod:check applies to a workflow task the server lost (scripts/prod-check/stranded-tasks.ts),
 * shown on a task really lost: a real Temporal server on PostgreSQL, a workflow task put on a queue
 * nobody polls, the server stopped and matching's rows of it deleted, so history holds the task as
 * SCHEDULED and matching no longer has it, as the upgrade left some (docs/reliability.md). A poll
 * gets nothing; the sweeper finds it and runs tdbg workflow refresh-tasks; a poll then gets it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { Client, Connection } from '@temporalio/client';
import type { Timeline } from '../../scripts/chaos/timeline.js';
import { postgresBinDir, type PostgresCluster } from '../../scripts/prod-check/postgres.js';
import { renderStrandedTasks, StrandedTaskSweeper } from '../../scripts/prod-check/stranded-tasks.js';
import { findServerBinaries, type ProdTemporalServer } from '../../scripts/prod-check/temporal-server.js';
import { loadTestConfig } from '../../scripts/lib/test-settings.js';
import { startProductionServer, type ProductionServer } from '../helpers/production-server.js';

const QUEUE = 'stranded-task-test';
const missing = [...(postgresBinDir() ? [] : ['PostgreSQL (apt-get install -y postgresql)']), ...findServerBinaries().missing];
if (missing.length > 0 && loadTestConfig().ci) throw new Error(`the stranded-task test cannot run in CI: missing ${missing.join('; ')}`);

/** One poll of the queue, as a worker makes it; the workflow id it got, or undefined when it got nothing in `ms`. */
async function pollOnce(address: string, ms: number): Promise<string | undefined> {
  const connection = await Connection.connect({ address });
  try {
    const task = await connection.withDeadline(Date.now() + ms, () =>
      connection.workflowService.pollWorkflowTaskQueue({ namespace: 'default', taskQueue: { name: QUEUE }, identity: 'stranded-task-test' }),
    );
    return task.workflowExecution?.workflowId || undefined;
  } catch (error) {
    if (/DEADLINE_EXCEEDED|deadline/i.test(error instanceof Error ? error.message : String(error))) return undefined;
    throw error;
  } finally {
    await connection.close();
  }
}

void describe('a workflow task the server lost', { skip: missing.length > 0 ? `missing: ${missing.join('; ')}` : false }, () => {
  let production: ProductionServer | undefined;
  let postgres: PostgresCluster;
  let server: ProdTemporalServer;
  let timeline: Timeline;

  before(async () => {
    // History saves how far its transfer queue got every second (default 30 s), so a restart does not
    // hand matching the task again.
    production = await startProductionServer('stranded-task', {
      dynamicConfig: { 'history.transferProcessorUpdateAckInterval': '1s', 'history.transferProcessorUpdateAckIntervalJitterCoefficient': 0 },
    });
    ({ postgres, server, timeline } = production);
  });

  after(async () => {
    await production?.stop();
  });

  void it('is found SCHEDULED with workers polling, regenerated with tdbg workflow refresh-tasks, and then delivered', { timeout: 180_000 }, async () => {
    const connection = await Connection.connect({ address: server.address });
    try {
      const client = new Client({ connection });
      const handle = await client.workflow.start('strandedTaskTest', { taskQueue: QUEUE, workflowId: 'stranded-task-test' });
      // No poller: matching writes the task to its backlog, and history records it handed it over.
      // Stopped, the server loses it with matching's rows.
      await delay(4_000);
      await server.stop();
      const deleted = await postgres.sql('temporal', 'DELETE FROM tasks; DELETE FROM tasks_v2;');
      await server.start();
      assert.match(deleted, /DELETE [1-9]/, `matching had the task in its backlog: ${deleted}`);
      assert.equal(await pollOnce(server.address, 5_000), undefined, 'lost: a poller gets nothing');

      const abort = new AbortController();
      const sweepConnection = await Connection.connect({ address: server.address });
      const sweeper = new StrandedTaskSweeper({
        connection: sweepConnection,
        namespace: 'default',
        address: server.address,
        tdbg: findServerBinaries().binaries!.tdbg!,
        workersPolling: () => true,
        timeline,
        signal: abort.signal,
        strandedAfterMs: 2_000,
        sweepEveryMs: 500,
      });
      const refreshedBy = Date.now() + 60_000;
      while (!timeline.entries().some((entry) => entry.text.startsWith('stranded workflow task')) && Date.now() < refreshedBy) await delay(200);
      const delivered = await pollOnce(server.address, 10_000);
      abort.abort();
      const stranded = await sweeper.settle();
      await sweepConnection.close();

      const report = renderStrandedTasks(stranded).join('\n');
      assert.equal(stranded.length, 1, report);
      assert.equal(stranded[0]!.workflowId, handle.workflowId);
      assert.ok(stranded[0]!.refreshes.length >= 1 && stranded[0]!.refreshes.every((refresh) => refresh.ok), report);
      assert.match(report, /^ {2}stranded-task-test: attempt 1, scheduled at \+[\d.]+s; refreshed at \+[\d.]+s; at the end: RUNNING$/m);
      assert.equal(delivered, handle.workflowId, `after the refresh a poller gets the task:\n${report}`);
    } finally {
      await connection.close();
    }
  });
});
