/**
 * The fleet request budget's ceilings (src/budget/fleet-budget.ts), on a real dev server with real
 * worker processes started as production starts them: a strict whole-second limit that no second at
 * the service exceeds across two workers, and a tenant the service throttles (TOO_MANY_REQUESTS with
 * Retry-After) paused across the fleet by its throttle workflow while every one of its connections
 * still completes. Ceilings and outcomes hold however busy the machine is, so this file runs beside
 * others (the budget's throughput, which does not, is fleet-budget.test.ts).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ConnectionsClient } from '../../src/client/connections.js';
import { queueRatesFor } from '../../src/budget/fleet-budget.js';
import { tenantThrottleWorkflowId, throttleStateQuery, type ThrottleState } from '../../src/contract/throttle/tenant-throttle-definitions.js';
import { startProcessStack, type ProcessStack } from '../helpers/process-stack.js';
import { completeAll, startBudgetConnections, startBudgetWorkers, wholeSecondsOf } from '../helpers/budget-connections.js';
import { uniqueId, waitFor } from '../helpers/temporal.js';

let stack: ProcessStack;
before(async () => (stack = await startProcessStack()));
after(() => stack?.stop());

void describe("the fleet request budget's ceilings", () => {
  void it(
    'keeps a strict whole-second limit across two worker processes: no second at the service sees more than the budget',
    { timeout: 240_000 },
    async () => {
      const taskQueue = uniqueId('budget');
      const customerId = uniqueId('tenant');
      // 6 requests in any whole second for the whole fleet: each worker alone would be allowed as much.
      await startBudgetWorkers(stack, taskQueue, 2, { SERVICE_BUDGET_RPS: '6', SERVICE_BUDGET_MODE: 'strict' });
      const count = 6;
      const ids = await startBudgetConnections(stack, taskQueue, customerId, count);
      const results = await completeAll(stack.client, ids);
      assert.ok(
        results.every((result) => result.accountsDetail !== undefined),
        'every connection retrieved its data',
      );

      const rates = stack.sandbox.requestRates(customerId).tenants[customerId];
      assert.ok(rates, 'the sandbox counted the tenant');
      const whole = wholeSecondsOf(rates, (rates.perSecond.at(-1)?.second ?? 0) + 1);
      console.log(
        `# strict 6/s, queue limit ${queueRatesFor({ totalRps: 6, tenantRps: 6, mode: 'strict' }).queueRps}/s: ${rates.accepted} requests in ${rates.perSecond.length} seconds with requests, ` +
          `${(whole.requests / Math.max(1, whole.seconds)).toFixed(2)}/s after the first second, at most ${rates.maxRequestsPerSecond} in one second`,
      );
      assert.ok(rates.accepted >= count * 3, `${rates.accepted} requests for ${count} connections of at least 3 each`);
      assert.equal(rates.refused, 0);
      assert.ok(
        rates.maxRequestsPerSecond <= 6,
        `at most 6 requests in any second at the service, saw ${rates.maxRequestsPerSecond}: ${JSON.stringify(rates.perSecond)}`,
      );
    },
  );

  void it('pauses a tenant the service throttles across the fleet, and every one of its connections completes', { timeout: 240_000 }, async () => {
    const taskQueue = uniqueId('throttle');
    const customerId = uniqueId('tenant');
    // The service takes 2 requests a second from this tenant and asks for 2 s when refusing; the budget is far above.
    stack.sandbox.updateRateLimits({ tenants: { [customerId]: 2 }, retryAfterSeconds: 2 });
    await startBudgetWorkers(stack, taskQueue, 2, { SERVICE_BUDGET_RPS: '40' });
    const ids = await startBudgetConnections(stack, taskQueue, customerId, 6);

    const throttle = stack.client.workflow.getHandle(tenantThrottleWorkflowId(customerId));
    const paused = await waitFor(
      async () => {
        const state = await throttle.query(throttleStateQuery).catch(() => undefined);
        return state?.status === 'throttled' ? state : undefined;
      },
      { timeoutMs: 120_000, describe: 'the tenant paused by its throttle workflow' },
    );
    assert.match(paused.reason ?? '', /TOO_MANY_REQUESTS \(HTTP 429, Retry-After 2 s\)/);
    const connections = new ConnectionsClient({ client: stack.client, taskQueue });
    const view = await connections.budget.show();
    assert.ok(
      view.throttles.some((entry) => entry.customerId === customerId),
      '`budget show` lists the paused tenant',
    );
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

    const results = await completeAll(stack.client, ids);
    assert.ok(
      results.every((result) => result.accountsDetail !== undefined),
      'every connection completed with its data',
    );
    const final = (await throttle.result()) as ThrottleState;
    assert.equal(final.status, 'released');
    assert.ok(final.notices >= 1);
    const rates = stack.sandbox.requestRates(customerId).tenants[customerId];
    assert.ok(rates && rates.refused >= 1, 'the service refused some requests');
    stack.sandbox.updateRateLimits({ tenants: { [customerId]: null }, retryAfterSeconds: null });
  });
});
