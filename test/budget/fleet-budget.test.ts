// npm test: runs alone (its workers must keep up with the budget's rate: files beside it take the cores they need)
/**
 * The fleet's request budget, held by Temporal (src/budget/fleet-budget.ts), on a real dev server with
 * real worker processes started as production starts them: two workers together use a service's
 * bucket (at least 90% of its rate under sustained demand, the sandbox's own bucket of the same rate
 * and burst refusing nothing) and keep a strict whole-second limit, counted by the sandbox per whole
 * second of its own clock; and a tenant the service throttles (TOO_MANY_REQUESTS with Retry-After) is
 * paused across the fleet by its throttle workflow while every one of its connections still
 * completes. What is checked are counts of requests per 1-second window and outcomes, never how long
 * anything took; the rates are printed as `# ...` lines.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@temporalio/client';
import { ConnectionsClient } from '../../src/client/connections.js';
import type { ConnectionInputArgs } from '../../src/contract/connection-input.js';
import type { Sandbox } from '../../src/sandbox/server.js';
import type { ConnectionResult } from '../../src/contract/connection-definitions.js';
import { queueRatesFor } from '../../src/budget/fleet-budget.js';
import type { TenantRequestRates } from '../../src/sandbox/rate-limits.js';
import { tenantThrottleWorkflowId, throttleStateQuery, type ThrottleState } from '../../src/contract/tenant-throttle-definitions.js';
import { startProcessStack, type ProcessStack } from '../helpers/process-stack.js';
import { uniqueId, waitFor } from '../helpers/temporal.js';

let stack: ProcessStack;
let client: Client;
let sandbox: Sandbox;

before(async () => {
  stack = await startProcessStack();
  ({ client, sandbox } = stack);
});

after(async () => {
  await stack?.stop();
});

async function startWorkers(taskQueue: string, count: number, extra: Record<string, string>): Promise<void> {
  await Promise.all(Array.from({ length: count }, () => stack.startWorker(taskQueue, { env: extra })));
}

/** Starts `count` cached connections of the tenant, each a few requests (Authorize, the request, a poll or more). */
async function startConnections(taskQueue: string, customerId: string, count: number, username = (index: number) => `pending_polls_${index + 1}`): Promise<string[]> {
  const connections = new ConnectionsClient({ client, taskQueue });
  const ids: string[] = [];
  for (let index = 0; index < count; index += 1) {
    const loginId = await stack.savedLogin(customerId, username(index));
    const input: ConnectionInputArgs = { customerId, session: { kind: 'cached', loginId }, products: { accountsDetail: {} }, timing: { pollIntervalMs: 200 } };
    ids.push((await connections.start(`connection-${customerId}:c${index}`, input)).workflowId);
  }
  return ids;
}

async function completeAll(workflowIds: readonly string[]): Promise<ConnectionResult[]> {
  return Promise.all(workflowIds.map((workflowId) => client.workflow.getHandle(workflowId).result() as Promise<ConnectionResult>));
}

/** Requests in the whole seconds after the first one with requests and before `untilSecond` (seconds without any count as 0). */
function wholeSecondsOf(rates: TenantRequestRates, untilSecond: number): { seconds: number; requests: number; max: number } {
  const first = rates.perSecond[0]?.second ?? untilSecond;
  const inner = rates.perSecond.filter((count) => count.second > first && count.second < untilSecond);
  return {
    seconds: Math.max(0, untilSecond - first - 1),
    requests: inner.reduce((sum, count) => sum + count.accepted + count.refused, 0),
    max: Math.max(0, ...inner.map((count) => count.accepted + count.refused)),
  };
}

void describe('the fleet request budget', () => {
  void it("uses a service's bucket across two worker processes: at least 90% of it under sustained demand, and the bucket refuses nothing", { timeout: 300_000 }, async () => {
    const taskQueue = uniqueId('budget');
    const customerId = uniqueId('tenant');
    // The service takes 20 a second from the fleet and up to one second's worth (20) at once: the
    // sandbox's bucket of the same shape judges every request of the (only) tenant.
    const budget = 20;
    sandbox.updateRateLimits({ mode: 'bucket', burst: null, tenants: { [customerId]: budget } });
    const queueRps = queueRatesFor({ totalRps: budget, tenantRps: budget }).queueRps;
    await startWorkers(taskQueue, 2, { SERVICE_BUDGET_RPS: String(budget) });
    // The workers run their first activities before the measured demand arrives (a worker process's
    // first calls are slow, and calls reaching the service later than Temporal dispatched them let the
    // service's full bucket waste its refill: see docs/fleet.md).
    const warmUp = uniqueId('warm');
    await completeAll(await startConnections(taskQueue, warmUp, 4, () => 'pending_polls_1'));
    // Sustained demand, arriving at once: 100 connections started together, far more than a second's
    // worth waiting each time (each makes 3 or more requests, one at a time).
    const count = 100;
    const connections = new ConnectionsClient({ client, taskQueue });
    const logins = await Promise.all(Array.from({ length: count }, () => stack.savedLogin(customerId, 'pending_polls_6')));
    const ids = await Promise.all(
      logins.map(async (loginId, index) => {
        const input: ConnectionInputArgs = { customerId, session: { kind: 'cached', loginId }, products: { accountsDetail: {} }, timing: { pollIntervalMs: 200 } };
        return (await connections.start(`connection-${customerId}:c${index}`, input)).workflowId;
      }),
    );

    // Read while most connections still wait: the whole seconds between the first and the current
    // one had demand all through.
    const measuredRequests = 12 * budget;
    const during = await waitFor(
      () => {
        const read = sandbox.requestRates(customerId);
        const tenant = read.tenants[customerId];
        return tenant && tenant.accepted + tenant.refused >= measuredRequests ? { tenant, currentSecond: read.currentSecond } : undefined;
      },
      { timeoutMs: 180_000, intervalMs: 50, describe: `${measuredRequests} requests at the service` },
    );
    const sustained = wholeSecondsOf(during.tenant, during.currentSecond);
    const average = sustained.requests / sustained.seconds;
    // The same without the first two whole seconds (the first burst's): the steady rate.
    const steady = wholeSecondsOf({ ...during.tenant, perSecond: during.tenant.perSecond.slice(2) }, during.currentSecond);
    const percent = (rate: number) => `${((100 * rate) / budget).toFixed(1)}%`;
    console.log(
      `# bucket ${budget}/s holding ${budget}, queue limit ${queueRps}/s: ${sustained.requests} requests in ${sustained.seconds} whole seconds of sustained demand, ` +
        `${average.toFixed(2)}/s (${percent(average)} of the budget), at most ${sustained.max} in one second; ` +
        `after the first burst ${steady.requests} in ${steady.seconds} s, ${(steady.requests / steady.seconds).toFixed(2)}/s (${percent(steady.requests / steady.seconds)})`,
    );

    const results = await completeAll(ids);
    assert.ok(results.every((result) => result.accountsDetail !== undefined), 'every connection retrieved its data');
    const rates = sandbox.requestRates(customerId).tenants[customerId];
    sandbox.updateRateLimits({ mode: 'window', tenants: { [customerId]: null } });
    assert.ok(rates, 'the sandbox counted the tenant');
    console.log(`# bucket ${budget}/s: ${rates.accepted} accepted, ${rates.refused} refused by the bucket over the whole run (${rates.perSecond.length} seconds with requests)`);
    assert.ok(sustained.seconds >= 5, `${sustained.seconds} whole seconds measured`);
    assert.ok(average >= 0.9 * budget, `at least 90% of the budget under sustained demand, saw ${average.toFixed(2)}/s: ${JSON.stringify(during.tenant.perSecond)}`);
    assert.equal(rates.refused, 0, `the service's bucket refused nothing: ${JSON.stringify(rates.perSecond)}`);
    assert.ok(rates.accepted >= count * 3, `${rates.accepted} requests for ${count} connections of at least 3 each`);
  });

  void it('keeps a strict whole-second limit across two worker processes: no second at the service sees more than the budget', { timeout: 240_000 }, async () => {
    const taskQueue = uniqueId('budget');
    const customerId = uniqueId('tenant');
    // 6 requests in any whole second for the whole fleet: each worker alone would be allowed as much.
    await startWorkers(taskQueue, 2, { SERVICE_BUDGET_RPS: '6', SERVICE_BUDGET_MODE: 'strict' });
    const ids = await startConnections(taskQueue, customerId, 12);
    const results = await completeAll(ids);
    assert.ok(results.every((result) => result.accountsDetail !== undefined), 'every connection retrieved its data');

    const rates = sandbox.requestRates(customerId).tenants[customerId];
    assert.ok(rates, 'the sandbox counted the tenant');
    const whole = wholeSecondsOf(rates, (rates.perSecond.at(-1)?.second ?? 0) + 1);
    console.log(
      `# strict 6/s, queue limit ${queueRatesFor({ totalRps: 6, tenantRps: 6, mode: 'strict' }).queueRps}/s: ${rates.accepted} requests in ${rates.perSecond.length} seconds with requests, ` +
        `${(whole.requests / Math.max(1, whole.seconds)).toFixed(2)}/s after the first second, at most ${rates.maxRequestsPerSecond} in one second`,
    );
    assert.ok(rates.accepted >= 12 * 3, `${rates.accepted} requests for 12 connections of at least 3 each`);
    assert.equal(rates.refused, 0);
    assert.ok(rates.maxRequestsPerSecond <= 6, `at most 6 requests in any second at the service, saw ${rates.maxRequestsPerSecond}: ${JSON.stringify(rates.perSecond)}`);
  });

  void it('pauses a tenant the service throttles across the fleet, and every one of its connections completes', { timeout: 240_000 }, async () => {
    const taskQueue = uniqueId('throttle');
    const customerId = uniqueId('tenant');
    // The service takes 2 requests a second from this tenant and asks for 2 s when refusing; the budget is far above.
    sandbox.updateRateLimits({ tenants: { [customerId]: 2 }, retryAfterSeconds: 2 });
    await startWorkers(taskQueue, 2, { SERVICE_BUDGET_RPS: '40' });
    const ids = await startConnections(taskQueue, customerId, 10);

    const throttle = client.workflow.getHandle(tenantThrottleWorkflowId(customerId));
    const paused = await waitFor(
      async () => {
        const state = await throttle.query(throttleStateQuery).catch(() => undefined);
        return state?.status === 'throttled' ? state : undefined;
      },
      { timeoutMs: 120_000, describe: 'the tenant paused by its throttle workflow' },
    );
    assert.match(paused.reason ?? '', /TOO_MANY_REQUESTS \(HTTP 429, Retry-After 2 s\)/);
    const connections = new ConnectionsClient({ client, taskQueue });
    const view = await connections.budget.show();
    assert.ok(view.throttles.some((entry) => entry.customerId === customerId), '`budget show` lists the paused tenant');
    // A connection whose call is held says so (what `show` prints), and it is no failure.
    const held = await waitFor(
      async () => {
        for (const workflowId of ids) {
          const wait = await connections.budgetWait(workflowId, customerId);
          if (wait && /its tenant is paused until .*TOO_MANY_REQUESTS/.test(wait.reason)) return wait;
        }
        return undefined;
      },
      { timeoutMs: 120_000, describe: 'a connection showing that its call waits for the paused tenant' },
    );
    assert.ok(held.call.length > 0);

    const results = await completeAll(ids);
    assert.ok(results.every((result) => result.accountsDetail !== undefined), 'every connection completed with its data');
    const final = (await throttle.result()) as ThrottleState;
    assert.equal(final.status, 'released');
    assert.ok(final.notices >= 1);
    const rates = sandbox.requestRates(customerId).tenants[customerId];
    assert.ok(rates && rates.refused >= 1, 'the service refused some requests');
    sandbox.updateRateLimits({ tenants: { [customerId]: null }, retryAfterSeconds: null });
  });
});
