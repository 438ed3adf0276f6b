/**
 * A data request that fails transiently backs off durably (issue 22): it is a regular activity whose
 * retries the Temporal server schedules (retry policy SERVICE_CALL_RETRY, or the service's Retry-After),
 * so no workflow task stays open during a backoff, queries answer meanwhile, and a worker SIGKILLed
 * during a backoff loses nothing: the server hands the next attempt, numbered on, to its replacement,
 * and the connection completes. (Connections recorded before this shape made the request as a local
 * activity backing off on timers: retired with that shape on 2026-12-03.)
 * Real dev server, real worker processes from the production bundle, and the real sandbox behind a
 * small proxy that makes the accounts-detail request fail with HTTP 503 (the sandbox's own fault
 * injection) until the test lets it through.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@temporalio/client';
import { workerDataConverterFor } from '../../src/codec/data-converter.js';
import { Worker } from '@temporalio/worker';
import proto from '@temporalio/proto';
import type { ConnectionInputArgs } from '../../src/contract/connection/connection-input.js';
import { FAULT_HEADER } from '../../sandbox/faults.js';
import { connectionStateQuery, type ConnectionResult } from '../../src/contract/connection/connection-definitions.js';
import { TEST_ENCRYPTION } from '../helpers/connection-stack.js';
import { recordHistory } from '../helpers/histories.js';
import { killProcess, type ProductProcess } from '../helpers/processes.js';
import { startProcessStack, type ProcessStack } from '../helpers/process-stack.js';
import { fetchRawHistory } from '../helpers/raw-history.js';
import { startSandboxProxy } from '../helpers/sandbox-proxy.js';
import { uniqueId, waitFor } from '../helpers/temporal.js';
import { productWorkflowCode } from '../helpers/test-tier.js';
import { loadTestConfig } from '../../scripts/lib/test-settings.js';

const { EventType } = proto.temporal.api.enums.v1;

/** The activity whose failures the proxy injects. */
const FAILING_ACTIVITY = 'requestAccountsDetail';

/** The sandbox behind a proxy that adds a 503 fault to every accounts-detail request while `failing`. */
interface FailingProxy {
  readonly url: string;
  failing: boolean;
  /** Accounts-detail requests it made fail. */
  failed: number;
  close(): Promise<void>;
}

async function startFailingProxy(upstream: string): Promise<FailingProxy> {
  const state = { failing: true, failed: 0 };
  // The request itself, not its polls (GetAccountsDetailAsync/<id>).
  const proxy = await startSandboxProxy(upstream, ({ method, path }) => {
    if (!state.failing || method !== 'POST' || !/\/GetAccountsDetail$/.test(path)) return undefined;
    state.failed += 1;
    return { pass: true, headers: { [FAULT_HEADER]: 'status=503' } };
  });
  return {
    url: proxy.url,
    get failing() {
      return state.failing;
    },
    set failing(value: boolean) {
      state.failing = value;
    },
    get failed() {
      return state.failed;
    },
    close: () => proxy.close(),
  };
}

/** The failing request's activity as the server holds it now: its attempt and whether it waits for a retry. */
interface PendingRequest {
  readonly attempt: number;
  /** SCHEDULED with a next attempt time: backing off (no worker holds it). */
  readonly backingOff: boolean;
}

describe('a data request that fails transiently', () => {
  let stack: ProcessStack;
  let client: Client;
  let proxy: FailingProxy;
  const customerId = uniqueId('tenant');

  before(async () => {
    stack = await startProcessStack();
    client = stack.client;
    proxy = await startFailingProxy(stack.sandbox.url);
  });

  after(async () => {
    await stack?.stop();
    await proxy?.close();
  });

  function startWorker(taskQueue: string): Promise<ProductProcess> {
    return stack.startWorker(taskQueue, { aggregatorUrl: proxy.url });
  }

  async function pendingRequest(workflowId: string): Promise<PendingRequest | undefined> {
    const description = await client.workflow.getHandle(workflowId).describe();
    const pending = description.raw.pendingActivities?.find((activity) => activity.activityType?.name === FAILING_ACTIVITY);
    if (!pending) return undefined;
    const scheduled = pending.state === proto.temporal.api.enums.v1.PendingActivityState.PENDING_ACTIVITY_STATE_SCHEDULED;
    return { attempt: pending.attempt ?? 1, backingOff: scheduled && pending.nextAttemptScheduleTime != null && (pending.attempt ?? 1) > 1 };
  }

  /** Waits for the request to back off after more than `failedBefore` failed attempts, and a query answered meanwhile. */
  async function queryDuringBackoff(workflowId: string, failedBefore: number, describe: string): Promise<number> {
    return waitFor(
      async () => {
        const before = await pendingRequest(workflowId);
        if (!before?.backingOff || before.attempt - 1 <= failedBefore) return undefined;
        const state = await client.workflow.getHandle(workflowId).query(connectionStateQuery);
        assert.equal(state.status, 'Retrieving');
        const after = await pendingRequest(workflowId);
        return after?.backingOff && after.attempt === before.attempt ? before.attempt - 1 : undefined;
      },
      { timeoutMs: 90_000, intervalMs: 50, describe },
    );
  }

  it('backs off on the server, answers queries meanwhile, and completes after its worker is killed during a backoff', { timeout: 240_000 }, async () => {
    const loginId = await stack.savedLogin(customerId, 'pending_polls_1');
    const taskQueue = uniqueId('durable-backoff');
    const input: ConnectionInputArgs = { customerId, session: { kind: 'cached', loginId }, products: { accountsDetail: {} }, timing: { pollIntervalMs: 300 } };
    proxy.failing = true;

    const first = await startWorker(taskQueue);
    const handle = await client.workflow.start('connectionWorkflow', { taskQueue, workflowId: uniqueId('durable-backoff'), args: [input] });

    // The first worker: failed attempts, the server waiting to retry; a query answered meanwhile.
    const failedOnFirst = await queryDuringBackoff(handle.workflowId, 0, 'a query answered while the request backs off (first worker)');
    await killProcess(first.child);
    assert.equal(first.child.signalCode, 'SIGKILL');

    // The replacement: the server's next attempts go to it, numbered on, and queries answer.
    await startWorker(taskQueue);
    const failedOnSecond = await queryDuringBackoff(handle.workflowId, failedOnFirst, 'a query answered while the request backs off (replacement worker)');
    assert.ok(failedOnSecond > failedOnFirst, 'the replacement made failing attempts of its own');
    proxy.failing = false;

    const result = (await handle.result()) as ConnectionResult;
    assert.ok(result.accountsDetail && result.accountsDetail.Accounts.length >= 2, 'accounts retrieved');
    const state = await handle.query(connectionStateQuery);
    assert.equal(state.status, 'Completed');

    const history = await fetchRawHistory(stack.env.connection, stack.env.namespace ?? 'default', handle.workflowId);
    const requests = history.events.filter((event) => event.activityTaskScheduledEventAttributes?.activityType?.name === FAILING_ACTIVITY);
    assert.equal(requests.length, 1, "one scheduled request: its attempts are the server's retries, not new requests");
    const scheduledId = Number(requests[0]?.eventId);
    const started = history.events.find(
      (event) =>
        event.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED && Number(event.activityTaskStartedEventAttributes?.scheduledEventId) === scheduledId,
    );
    const lastAttempt = started?.activityTaskStartedEventAttributes?.attempt ?? 0;
    // Every failed request was an attempt the server counted: the kill did not start it over at 1.
    assert.equal(lastAttempt, proxy.failed + 1, `the request succeeded at attempt ${lastAttempt} after ${proxy.failed} failed requests`);
    assert.ok(
      history.events.some((event) => Number(event.activityTaskCompletedEventAttributes?.scheduledEventId) === scheduledId),
      'the request completed',
    );

    // The history replays against the current code (and, recorded, against future code).
    const replays = Worker.runReplayHistories(
      { ...productWorkflowCode(), dataConverter: workerDataConverterFor({ encryption: TEST_ENCRYPTION }), replayName: 'durable-backoff' },
      [{ workflowId: handle.workflowId, history: { events: history.events } }],
    );
    for await (const replay of replays) assert.equal(replay.error, undefined, String(replay.error));
    if (loadTestConfig().recordHistories) await recordHistory('recovers-server-backoff-after-kill', { events: history.events }, handle.workflowId);
  });
});
