/**
 * The status gauge's counting (src/metrics/connection-status-gauge.ts) against a real dev server's
 * visibility: running connections of its task queue only, by ConnectionStatus; a count that fails
 * keeps the last values, is logged once per kind and never throws; the loop stops when told.
 * Connections here are started with their status as a search attribute and no worker on their
 * queue, so they stay running in that status.
 */
import assert from 'node:assert/strict';
import { setTimeout as delay } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { Client } from '@temporalio/client';
import { TypedSearchAttributes } from '@temporalio/common';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { loadWorkerConfig } from '../../src/settings/worker.js';
import { CONNECTION_WORKFLOW_TYPE, type ConnectionStatus } from '../../src/contract/connection/connection-definitions.js';
import { ConnectionStatusKey } from '../../src/contract/search-attributes.js';
import { ConnectionStatusGauge, type ConnectionStatusGaugeOptions } from '../../src/metrics/connection-status-gauge.js';
import { createDevEnvironment, uniqueId, waitFor } from '../helpers/temporal.js';
import { unattendedTaskQueue } from '../../src/contract/task-queues.js';

/** What the gauge was set to, by status, and how many times. */
class RecordingGauge {
  readonly values = new Map<string, number>();
  sets = 0;
  set(value: number, tags?: Record<string, string | number | boolean>): void {
    this.values.set(String(tags?.status), value);
    this.sets += 1;
  }
}

class RecordingLogger {
  readonly warnings: string[] = [];
  readonly infos: string[] = [];
  warn(message: string): void {
    this.warnings.push(message);
  }
  info(message: string): void {
    this.infos.push(message);
  }
}

describe('the connection status gauge', () => {
  let env: TestWorkflowEnvironment;
  let client: Client;
  const taskQueue = uniqueId('status-gauge');
  const started: string[] = [];

  async function startConnection(status: ConnectionStatus | undefined, queue = taskQueue, workflowType = CONNECTION_WORKFLOW_TYPE): Promise<void> {
    const workflowId = uniqueId('status-gauge');
    await client.workflow.start(workflowType, {
      taskQueue: queue,
      workflowId,
      args: [],
      ...(status ? { typedSearchAttributes: new TypedSearchAttributes([{ key: ConnectionStatusKey, value: status }]) } : {}),
    });
    started.push(workflowId);
  }

  function gaugeWith(overrides: Partial<ConnectionStatusGaugeOptions> = {}) {
    const gauge = new RecordingGauge();
    const logger = new RecordingLogger();
    const counter = new ConnectionStatusGauge({ client, taskQueues: [taskQueue], gauge, logger, intervalMs: 50, ...overrides });
    return { gauge, logger, counter };
  }

  before(async () => {
    env = await createDevEnvironment();
    client = env.client;
    await startConnection('AwaitingAnswer');
    await startConnection('AwaitingAnswer');
    await startConnection('Retrieving');
    // Not counted: no status yet, another task queue, another workflow type.
    await startConnection(undefined);
    await startConnection('AwaitingAnswer', uniqueId('other-queue'));
    await startConnection('AwaitingAnswer', taskQueue, 'forgetLoginWorkflow');
    // The unattended pool's: counted only by a gauge given its queue too.
    await startConnection('Retrieving', unattendedTaskQueue(taskQueue));
  });

  after(async () => {
    for (const workflowId of started) await client.workflow.getHandle(workflowId).terminate('the test is done with it');
    await env?.teardown();
  });

  it('is set, every round, to the running connections of its task queue in each status', async () => {
    const { gauge, logger, counter } = gaugeWith();
    const expected = { Authorizing: 0, AwaitingAnswer: 2, Retrieving: 1 };
    await waitFor(
      async () => {
        await counter.countOnce();
        return JSON.stringify(Object.fromEntries(gauge.values)) === JSON.stringify(expected);
      },
      { timeoutMs: 20_000, describe: 'the counts of the connections started' },
    );
    assert.deepEqual(Object.fromEntries(gauge.values), expected);
    assert.deepEqual(logger.warnings, []);
  });

  it("counts the unattended pool's connections too when given its queue (UNATTENDED_POOL=separate)", async () => {
    const { gauge, counter } = gaugeWith({ taskQueues: [taskQueue, unattendedTaskQueue(taskQueue)] });
    const expected = { Authorizing: 0, AwaitingAnswer: 2, Retrieving: 2 };
    await waitFor(
      async () => {
        await counter.countOnce();
        return JSON.stringify(Object.fromEntries(gauge.values)) === JSON.stringify(expected);
      },
      { timeoutMs: 20_000, describe: 'the counts of both queues' },
    );
    assert.deepEqual(Object.fromEntries(gauge.values), expected);
  });

  it('keeps its last values when counting fails, logs each kind of failure once, and says when it works again', async () => {
    const working = client;
    // A real server's refusal: a namespace that does not exist.
    const broken = new Client({ connection: env.connection, namespace: uniqueId('no-such-namespace') });
    let current = working;
    const { gauge, logger, counter } = gaugeWith({ client: { workflow: { count: (query?: string) => current.workflow.count(query) } as Client['workflow'] } });
    await waitFor(
      async () => {
        await counter.countOnce();
        return gauge.values.get('AwaitingAnswer') === 2;
      },
      { timeoutMs: 20_000, describe: 'the first counts' },
    );
    const counted = Object.fromEntries(gauge.values);
    const sets = gauge.sets;

    current = broken;
    await counter.countOnce();
    await counter.countOnce();
    assert.equal(gauge.sets, sets, 'nothing set while counting fails');
    assert.deepEqual(Object.fromEntries(gauge.values), counted);
    assert.equal(logger.warnings.length, 1, `one warning for one kind of failure: ${logger.warnings.join('; ')}`);
    assert.match(logger.warnings[0]!, /could not count connections by status \(NamespaceNotFoundError\)/);

    current = working;
    await counter.countOnce();
    assert.equal(gauge.sets, sets + 3);
    assert.equal(logger.infos.length, 1);
    assert.match(logger.infos[0]!, /works again/);
    current = broken;
    await counter.countOnce();
    assert.equal(logger.warnings.length, 2, 'a failure after a recovery is logged again');
  });

  it('counts at once when started, then each interval until stopped', async () => {
    const { gauge, counter } = gaugeWith();
    counter.start();
    await waitFor(() => gauge.sets >= 2 * 3, { timeoutMs: 20_000, describe: 'two rounds' });
    await counter.stop();
    const sets = gauge.sets;
    await delay(300);
    assert.equal(gauge.sets, sets, 'no round after stop()');
  });

  it('counts every 15 s unless WORKER_STATUS_GAUGE_INTERVAL_S says otherwise (0: off)', () => {
    assert.equal(loadWorkerConfig({}).statusGauge.intervalMs, 15_000);
    assert.equal(loadWorkerConfig({ WORKER_STATUS_GAUGE_INTERVAL_S: '0' }).statusGauge.intervalMs, 0);
    assert.equal(loadWorkerConfig({ WORKER_STATUS_GAUGE_INTERVAL_S: '2' }).statusGauge.intervalMs, 2_000);
    assert.throws(() => loadWorkerConfig({ WORKER_STATUS_GAUGE_INTERVAL_S: '-1' }), /WORKER_STATUS_GAUGE_INTERVAL_S/);
  });
});
