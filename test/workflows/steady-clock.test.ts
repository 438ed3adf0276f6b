/**
 * The book refresh's clock (src/workflows/steady-clock.ts) on a real server: code after a local
 * activity reads the time from before it, the same in the run and on replay, also when the activity
 * outlasts its workflow task's timeout (the worker heartbeats the task meanwhile); a timer moves it on.
 */
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker, type InjectedSinks } from '@temporalio/worker';
import type { ClockReading, ClockSinks } from './fixtures/steady-clock-workflow.js';
import { createDevEnvironment, uniqueId } from '../helpers/temporal.js';

const WORKFLOWS = fileURLToPath(new URL('./fixtures/steady-clock-workflow.ts', import.meta.url));

function collecting(readings: ClockReading[]): InjectedSinks<ClockSinks> {
  return { clock: { read: { fn: (_info, reading) => void readings.push(reading), callDuringReplay: true } } };
}

let env: TestWorkflowEnvironment;
before(async () => {
  env = await createDevEnvironment();
});
after(async () => {
  await env?.teardown();
});

describe('the steady clock', () => {
  it('keeps the time from before a local activity, in the run and on replay, and moves on after a timer', async () => {
    const taskQueue = uniqueId('steady-clock');
    const run: ClockReading[] = [];
    const worker = await Worker.create({
      connection: env.nativeConnection,
      namespace: env.namespace ?? 'default',
      taskQueue,
      workflowsPath: WORKFLOWS,
      activities: { pause: (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)) },
      sinks: collecting(run),
    });
    // A 2 s task timeout: a 2.5 s local activity outlasts it, so the worker heartbeats the task while it runs.
    const history = await worker.runUntil(async () => {
      const handle = await env.client.workflow.start('steadyClockWorkflow', {
        taskQueue,
        workflowId: uniqueId('steady-clock'),
        args: [2_500],
        workflowTaskTimeout: '2s',
      });
      await handle.result();
      return handle.fetchHistory();
    });

    const replayed: ClockReading[] = [];
    await Worker.runReplayHistory({ workflowsPath: WORKFLOWS, sinks: collecting(replayed) }, history);

    assert.deepEqual(
      run.map((reading) => reading.at),
      ['start', 'after a short local activity', 'after a local activity longer than the task heartbeat', 'after a timer'],
    );
    const [start, afterShort, afterLong, afterTimer] = run as [ClockReading, ClockReading, ClockReading, ClockReading];
    assert.equal(afterShort.steady, start.steady, 'after a local activity: the time from before it');
    assert.equal(afterLong.steady, start.steady, 'after a long local activity too');
    assert.ok(afterTimer.steady > start.steady + 2_500, `after a timer the clock moves on (${afterTimer.steady - start.steady} ms)`);
    assert.equal(afterTimer.steady, afterTimer.date, 'after a timer: the task time');
    assert.ok(afterLong.date > start.date + 2_000, 'Date.now() itself moved with the long local activity');
    assert.deepEqual(
      replayed.map((reading) => reading.steady),
      run.map((reading) => reading.steady),
      `the steady readings on replay are the run's (Date.now() read ${JSON.stringify(run.map((r) => r.date - start.date))} ms in the run, ${JSON.stringify(replayed.map((r) => r.date - start.date))} on replay)`,
    );
  });
});
