/**
 * The fleet's request budget, held by Temporal (src/budget/fleet-budget.ts), on a real dev server with
 * real worker processes started as production starts them: two workers together keep one budget,
 * counted by the sandbox per whole second of its own clock; and a tenant the service throttles
 * (TOO_MANY_REQUESTS with Retry-After) is paused across the fleet by its throttle workflow while
 * every one of its connections still completes. What is checked are counts of requests per
 * 1-second window and outcomes, never how long anything took.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@temporalio/client';
import { ConnectionsClient } from '../../src/client/connections.js';
import type { ConnectionInputArgs } from '../../src/contract/connection-input.js';
import type { Sandbox } from '../../src/sandbox/server.js';
import type { ConnectionResult } from '../../src/contract/connection-definitions.js';
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

/** Starts `count` cached connections of the tenant, each a few requests (Authorize, the request, a poll). */
async function startConnections(taskQueue: string, customerId: string, count: number): Promise<string[]> {
  const connections = new ConnectionsClient({ client, taskQueue });
  const ids: string[] = [];
  for (let index = 0; index < count; index += 1) {
    const loginId = await stack.savedLogin(customerId, `pending_polls_${index + 1}`);
    const input: ConnectionInputArgs = { customerId, session: { kind: 'cached', loginId }, products: { accountsDetail: {} }, timing: { pollIntervalMs: 200 } };
    ids.push((await connections.start(`connection-${customerId}:c${index}`, input)).workflowId);
  }
  return ids;
}

async function completeAll(workflowIds: readonly string[]): Promise<ConnectionResult[]> {
  return Promise.all(workflowIds.map((workflowId) => client.workflow.getHandle(workflowId).result() as Promise<ConnectionResult>));
}

void describe('the fleet request budget', () => {
  void it('holds across two worker processes: no second at the service sees more than the budget', { timeout: 240_000 }, async () => {
    const taskQueue = uniqueId('budget');
    const customerId = uniqueId('tenant');
    // 6 requests a second for the whole fleet: each worker alone would be allowed as much.
    await startWorkers(taskQueue, 2, { SERVICE_BUDGET_RPS: '6' });
    const ids = await startConnections(taskQueue, customerId, 12);
    const results = await completeAll(ids);
    assert.ok(results.every((result) => result.accountsDetail !== undefined), 'every connection retrieved its data');

    const rates = sandbox.requestRates(customerId).tenants[customerId];
    assert.ok(rates, 'the sandbox counted the tenant');
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
