// npm test: runs alone (its workers must keep up with the budget's rate: files beside it take the cores they need)
/**
 * The fleet's request budget, held by Temporal (src/budget/fleet-budget.ts), on a real dev server with
 * real worker processes started as production starts them: two workers together run at the limit
 * they set on their queue (90% of a service's bucket, with room for the first burst) under sustained
 * demand once the first burst has passed, the sandbox's own bucket of the same rate and burst
 * refusing nothing after that burst. It runs alone
 * because it asserts a throughput; the budget's ceilings (a strict whole-second limit, a throttled
 * tenant paused across the fleet) are asserted in fleet-budget-limits.test.ts, which runs beside other
 * files. What is checked are counts of requests per 1-second window and outcomes, never how long
 * anything took; the rates are printed as `# ...` lines.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ConnectionsClient } from '../../src/client/connections.js';
import { ARRIVAL_SPREAD_S, describeQueueLimits, queueRatesFor } from '../../src/budget/fleet-budget.js';
import { startProcessStack, type ProcessStack } from '../helpers/process-stack.js';
import { cachedInput, completeAll, startBudgetConnections, startBudgetWorkers, wholeSecondsOf } from '../helpers/budget-connections.js';
import { uniqueId, waitFor } from '../helpers/temporal.js';

let stack: ProcessStack;
before(async () => (stack = await startProcessStack()));
after(() => stack?.stop());

void describe('the fleet request budget', () => {
  void it(
    "two worker processes run at their queue's limit (90% of a service's bucket) under sustained demand, and the bucket refuses nothing after the first burst",
    { timeout: 300_000 },
    async () => {
      const taskQueue = uniqueId('budget');
      const customerId = uniqueId('tenant');
      // The service takes 20 a second from the fleet and up to one second's worth (20) at once: the
      // sandbox's bucket of the same shape judges every request of the (only) tenant.
      const budget = 20;
      stack.sandbox.updateRateLimits({ mode: 'bucket', burst: null, tenants: { [customerId]: budget } });
      const queueRps = queueRatesFor({ totalRps: budget, tenantRps: budget }).queueRps;
      await startBudgetWorkers(stack, taskQueue, 2, { SERVICE_BUDGET_RPS: String(budget) });
      // The workers run their first activities before the measured demand arrives (a worker process's
      // first calls are slow, and calls reaching the service later than Temporal dispatched them let the
      // service's full bucket waste its refill: see docs/fleet.md).
      const warmUp = uniqueId('warm');
      await completeAll(stack.client, await startBudgetConnections(stack, taskQueue, warmUp, 4, () => 'pending_polls_1'));
      // Sustained demand, arriving at once: 100 connections started together, far more than a second's
      // worth waiting each time (each makes 5 requests, one at a time: 500 in all, so about 260 still
      // wait when the 240 measured below have been made; more would only lengthen the run).
      const count = 100;
      const connections = new ConnectionsClient({ client: stack.client, taskQueue });
      const logins = await Promise.all(Array.from({ length: count }, () => stack.savedLogin(customerId, 'pending_polls_3')));
      const ids = await Promise.all(
        logins.map(async (loginId, index) => {
          return (await connections.start(`connection-${customerId}:c${index}`, cachedInput(customerId, loginId))).workflowId;
        }),
      );

      // Read while most connections still wait: the whole seconds between the first and the current
      // one had demand all through.
      const measuredRequests = 12 * budget;
      const during = await waitFor(
        () => {
          const read = stack.sandbox.requestRates(customerId);
          const tenant = read.tenants[customerId];
          return tenant && tenant.accepted + tenant.refused >= measuredRequests ? { tenant, currentSecond: read.currentSecond } : undefined;
        },
        { timeoutMs: 180_000, intervalMs: 50, describe: `${measuredRequests} requests at the service` },
      );
      const sustained = wholeSecondsOf(during.tenant, during.currentSecond);
      const average = sustained.requests / sustained.seconds;
      // The same from the third second on (the first two are the first burst's): the steady rate.
      const firstSecond = during.tenant.perSecond[0]?.second ?? during.currentSecond;
      const burstEnd = firstSecond + 2;
      const steady = wholeSecondsOf(during.tenant, during.currentSecond, burstEnd);
      const percent = (rate: number) => `${((100 * rate) / budget).toFixed(1)}%`;
      console.log(
        `# bucket ${budget}/s holding ${budget}, queue limit ${queueRps}/s: ${sustained.requests} requests in ${sustained.seconds} whole seconds of sustained demand, ` +
          `${average.toFixed(2)}/s (${percent(average)} of the budget), at most ${sustained.max} in one second; ` +
          `after the first burst ${steady.requests} in ${steady.seconds} s, ${(steady.requests / steady.seconds).toFixed(2)}/s (${percent(steady.requests / steady.seconds)}); ` +
          `the first seconds ${during.tenant.perSecond
            .slice(0, 4)
            .map((count) => `+${count.second - firstSecond} s ${count.accepted}+${count.refused}`)
            .join(', ')} (accepted+refused)`,
      );

      const results = await completeAll(stack.client, ids);
      assert.ok(
        results.every((result) => result.accountsDetail !== undefined),
        'every connection retrieved its data',
      );
      const rates = stack.sandbox.requestRates(customerId).tenants[customerId];
      stack.sandbox.updateRateLimits({ mode: 'window', tenants: { [customerId]: null } });
      assert.ok(rates, 'the sandbox counted the tenant');
      // The first burst (Temporal lets its queue's r + 1 go at once after an idle spell) keeps 50 ms of
      // room for calls reaching the service apart (docs/fleet.md); workers busy with 100 new workflows
      // can take more, and the service then refuses one, which the fleet pauses for and retries. After
      // that burst nothing may be refused.
      const refusedInBurst = rates.perSecond.filter((count) => count.second < burstEnd).reduce((sum, count) => sum + count.refused, 0);
      const refusedAfter = rates.perSecond.filter((count) => count.second >= burstEnd);
      console.log(
        `# bucket ${budget}/s: ${rates.accepted} accepted, ${rates.refused} refused by the bucket over the whole run ` +
          `(${refusedInBurst} in the first burst's two seconds; ${rates.perSecond.length} seconds with requests)`,
      );
      assert.ok(sustained.seconds >= 5, `${sustained.seconds} whole seconds measured`);
      // The limit the workers set on the queue: 90% or more of the bucket, with the 50 ms room kept.
      const held = await describeQueueLimits({ workflowService: stack.client.workflowService, namespace: stack.client.options.namespace, taskQueue });
      // The API carries the rate as a 32-bit float.
      assert.ok(
        held.queueRps !== undefined && Math.abs(held.queueRps - queueRps) < 0.001,
        `the queue's limit as the workers set it: ${held.queueRps}/s, the rule's ${queueRps}/s`,
      );
      assert.ok(
        queueRps >= 0.9 * budget && queueRps <= (budget - 1) / (1 + ARRIVAL_SPREAD_S),
        `the queue's limit ${queueRps}/s: 90% of the budget or more, the burst's room kept`,
      );
      // The steady rate is what the budget promises; the whole seconds with the first burst's are printed
      // above (a refusal in the burst pauses the tenant for a moment and leaves a gap).
      const steadyRate = steady.requests / steady.seconds;
      assert.ok(steady.seconds >= 5, `${steady.seconds} whole seconds after the first burst`);
      assert.ok(
        steadyRate >= 0.97 * queueRps,
        `the workers keep up with the queue's limit (${queueRps}/s) under sustained demand, saw ${steadyRate.toFixed(2)}/s: ${JSON.stringify(during.tenant.perSecond)}`,
      );
      assert.equal(
        refusedAfter.reduce((sum, count) => sum + count.refused, 0),
        0,
        `the service's bucket refused nothing after the first burst: ${JSON.stringify(rates.perSecond)}`,
      );
      assert.ok(refusedInBurst <= 1, `at most the one request beyond the burst's room refused in it: ${JSON.stringify(rates.perSecond)}`);
      assert.ok(rates.accepted >= count * 3, `${rates.accepted} requests for ${count} connections of at least 3 each`);
    },
  );
});
