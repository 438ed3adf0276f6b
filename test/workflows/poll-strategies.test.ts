/**
 * The polling strategies side by side on a real dev server: the default (a durable timer per poll)
 * and the two that poll outside the workflow (activity retries; a heartbeating activity). Each
 * retrieves the same data with the same poll count, gives up at the deadline with PollingTimedOut,
 * shows what it can in the state query, and survives its worker being killed.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { Client, WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import proto from '@temporalio/proto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { dataConverterFor } from '../../src/codec/data-converter.js';
import { POLL_STRATEGIES, type ConnectionInputArgs, type PollStrategy } from '../../src/contract/connection/connection-input.js';
import { createSandbox } from '../../sandbox/server.js';
import { connectionStateQuery, type ConnectionResult, type ConnectionState } from '../../src/contract/connection/connection-definitions.js';
import { startConnectionStack, TEST_ENCRYPTION, type ConnectionStack } from '../helpers/connection-stack.js';
import { killProcess, stopAllProcesses } from '../helpers/processes.js';
import { createDevEnvironment, uniqueId, waitFor } from '../helpers/temporal.js';
import { startWorkerProcess as startWorker, writeWorkflowBundle, type WorkflowBundleFile } from '../helpers/worker-processes.js';

const EventType = proto.temporal.api.enums.v1.EventType;

let env: TestWorkflowEnvironment;
let stack: ConnectionStack;

before(async () => {
  env = await createDevEnvironment();
  stack = await startConnectionStack(env);
});

after(async () => {
  await stack?.stop();
  await env?.teardown();
});

async function eventsOf(workflowId: string) {
  return (await stack.client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
}

function count(events: Awaited<ReturnType<typeof eventsOf>>, type: proto.temporal.api.enums.v1.EventType): number {
  return events.filter((event) => event.eventType === type).length;
}

describe('polling strategies', () => {
  it('retrieve the same data with the same poll count; only the timer strategy spends history on each poll', async () => {
    const loginId = await stack.savedLogin('pending_polls_4');
    const results = new Map<PollStrategy, { result: ConnectionResult; events: Awaited<ReturnType<typeof eventsOf>> }>();
    for (const pollStrategy of POLL_STRATEGIES) {
      const handle = await stack.start({
        session: { kind: 'cached', loginId },
        products: { accountsDetail: {}, investments: true },
        timing: { pollIntervalMs: 200, pollStrategy },
      });
      results.set(pollStrategy, { result: await handle.result(), events: await eventsOf(handle.workflowId) });
    }
    const timer = results.get('timer') ?? assert.fail('timer');
    for (const [strategy, { result, events }] of results) {
      assert.equal(result.totalPolls, 8, `${strategy}: 4 polls for accounts detail, 4 for investments`);
      assert.deepEqual(
        result.accountsDetail?.Accounts.map((account) => account.Id),
        timer.result.accountsDetail?.Accounts.map((account) => account.Id),
        strategy,
      );
      assert.ok(result.investments, strategy);
      const timers = count(events, EventType.EVENT_TYPE_TIMER_STARTED);
      const activities = count(events, EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED);
      if (strategy === 'timer') assert.equal(timers, 8, 'a timer per poll');
      // The timer strategy schedules an activity per poll (8); the others one polling activity per
      // operation (2): one timer before the first attempt of each, each later poll a retry the server
      // schedules (activity-retry), or none (heartbeat).
      const fewerActivities = count(timer.events, EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED) - activities;
      if (strategy === 'activity-retry') assert.deepEqual([timers, fewerActivities], [2, 6]);
      if (strategy === 'heartbeat') assert.deepEqual([timers, fewerActivities], [0, 6]);
      if (strategy !== 'timer')
        assert.ok(events.length < timer.events.length - 10, `${strategy}: ${events.length} events vs ${timer.events.length} with timers`);
    }
  });

  for (const pollStrategy of ['activity-retry', 'heartbeat'] as const) {
    it(`${pollStrategy}: gives up at the deadline with PollingTimedOut`, async () => {
      const loginId = await stack.savedLogin('pending_polls_1000');
      const handle = await stack.start({
        session: { kind: 'cached', loginId },
        products: { accountsDetail: {} },
        timing: { pollIntervalMs: 300, pollTimeoutMs: 2_000, pollStrategy },
      });
      const error = await handle.result().then(
        () => assert.fail('expected PollingTimedOut'),
        (caught: unknown) => caught,
      );
      assert.ok(error instanceof WorkflowFailedError && error.cause instanceof ApplicationFailure, String(error));
      assert.equal(error.cause.type, 'PollingTimedOut');
      const state = await handle.query(connectionStateQuery);
      assert.equal(state.status, 'Failed');
    });

    it(`${pollStrategy}: the state query names the strategy while the activity polls`, async () => {
      const loginId = await stack.savedLogin('pending_polls_8');
      const handle = await stack.start({
        session: { kind: 'cached', loginId },
        products: { accountsDetail: {} },
        timing: { pollIntervalMs: 500, pollStrategy },
      });
      const state = await stack.waitForState(handle.workflowId, (s) => s.pending?.strategy === pollStrategy, 'pending, polled by the activity');
      assert.equal(state.status, 'Retrieving');
      assert.equal(state.pending?.operation, 'accounts detail');
      const result = await handle.result();
      assert.equal(result.totalPolls, 8);
    });
  }

  it('refuses an unknown strategy before anything reaches the service', async () => {
    const loginId = await stack.savedLogin('pending_polls_1');
    const calls = stack.upstreamCalls.length;
    const handle = await stack.start({
      session: { kind: 'cached', loginId },
      products: { accountsDetail: {} },
      timing: { pollStrategy: 'busy-loop' as PollStrategy },
    });
    const error = await handle.result().then(
      () => assert.fail('expected InvalidInput'),
      (caught: unknown) => caught,
    );
    assert.ok(error instanceof WorkflowFailedError && error.cause instanceof ApplicationFailure);
    assert.match(error.cause.message, /pollStrategy.*must be one of timer, activity-retry, heartbeat/s);
    assert.equal(stack.upstreamCalls.length, calls, 'no upstream call');
  });
});

describe('polling strategies when the worker is killed', () => {
  let client: Client;
  let sandbox: Awaited<ReturnType<typeof createSandbox>>;
  let bundle: WorkflowBundleFile;
  const customerId = uniqueId('tenant');

  before(async () => {
    client = new Client({
      connection: env.connection,
      namespace: env.namespace ?? 'default',
      dataConverter: dataConverterFor({ encryption: TEST_ENCRYPTION }),
    });
    sandbox = await createSandbox({ port: 0 });
    bundle = await writeWorkflowBundle();
  });

  after(async () => {
    await stopAllProcesses();
    await sandbox?.close();
    await bundle?.remove();
  });

  function startWorkerProcess(taskQueue: string): Promise<ChildProcess> {
    return startWorker({ temporalAddress: env.address, taskQueue, aggregatorUrl: sandbox.url, bundlePath: bundle.path });
  }

  async function savedLogin(username: string): Promise<string> {
    const response = await fetch(`${sandbox.url}/sandbox/${customerId}/logins`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username }),
    });
    return ((await response.json()) as { LoginId: string }).LoginId;
  }

  /** The connection's one pending activity, as `temporal workflow describe` shows it. */
  async function pendingActivity(workflowId: string) {
    return (await client.workflow.getHandle(workflowId).describe()).raw.pendingActivities?.[0];
  }

  for (const pollStrategy of ['activity-retry', 'heartbeat'] as const) {
    it(`${pollStrategy}: a worker killed while polling is replaced and the connection completes`, async () => {
      const taskQueue = uniqueId(`killed-${pollStrategy}`);
      const loginId = await savedLogin('pending_polls_6');
      const first = await startWorkerProcess(taskQueue);
      const input: ConnectionInputArgs = {
        customerId,
        session: { kind: 'cached', loginId },
        products: { accountsDetail: {} },
        timing: { pollIntervalMs: 1_000, pollStrategy },
      };
      const handle = await client.workflow.start('connectionWorkflow', { taskQueue, workflowId: uniqueId('killed'), args: [input] });
      // Polls under way: a retry scheduled (activity-retry) or a heartbeat recorded (heartbeat).
      await waitFor(
        async () => {
          const activity = await pendingActivity(handle.workflowId);
          return pollStrategy === 'activity-retry'
            ? (activity?.attempt ?? 0) >= 2
            : activity?.heartbeatDetails !== null && activity?.heartbeatDetails !== undefined;
        },
        { timeoutMs: 30_000, describe: 'the activity polling' },
      );
      await killProcess(first);
      assert.equal(first.signalCode, 'SIGKILL');

      await startWorkerProcess(taskQueue);
      const result = (await handle.result()) as ConnectionResult;
      assert.ok(result.accountsDetail && result.accountsDetail.Accounts.length >= 2);
      const state: ConnectionState = await client.workflow.getHandle(handle.workflowId).query(connectionStateQuery);
      assert.equal(state.status, 'Completed');
      // Retries count every poll; a heartbeating poller resumes from the last heartbeat the server kept, so it may count fewer.
      if (pollStrategy === 'activity-retry') assert.equal(result.totalPolls, 6);
      else assert.ok(result.totalPolls >= 1 && result.totalPolls <= 6, `totalPolls ${result.totalPolls}`);
    });
  }
});
