/**
 * The rate set on Temporal's queue for a service limit (src/budget/fleet-budget.ts), checked against
 * a model of the server's limiter (server 1.32.2's `simpleLimiter`: a GCRA with a one-second burst)
 * dispatching as fast as it lets, with the service's own limiter (sandbox/rate-limits.ts) judging
 * each request: no refusal, and in bucket mode most of the budget used.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ARRIVAL_SPREAD_S, dispatchRateFor, queueRatesFor } from '../../src/budget/fleet-budget.js';
import { RateLimiter } from '../../sandbox/rate-limits.js';

/**
 * Dispatch times (ms) of Temporal's limiter at `rate` with the backlog never empty, for `seconds` from
 * t = `startMs` after idle; with `spread`, the burst's calls reach the service ARRIVAL_SPREAD_S later
 * than the rest (the worst the rule allows for).
 */
function temporalDispatches(rate: number, startMs: number, seconds: number, spread = false): number[] {
  const intervalMs = 1_000 / rate;
  const burstMs = 1_000;
  let ready = -Infinity;
  const times: number[] = [];
  let now = startMs;
  while (now < startMs + seconds * 1_000) {
    if (ready <= now) {
      times.push(now);
      ready = Math.max(now, ready + burstMs) - burstMs + intervalMs;
    } else now = ready;
  }
  const burst = Math.floor(rate) + 1;
  return spread ? times.map((time, index) => (index < burst ? time + ARRIVAL_SPREAD_S * 1_000 : time)).sort((a, b) => a - b) : times;
}

function refusalsAt(times: readonly number[], limit: { mode: 'window' | 'bucket'; perSecond: number; burst?: number }): number {
  let clock = 0;
  const limiter = new RateLimiter(() => clock);
  limiter.update({ mode: limit.mode, defaultPerSecond: limit.perSecond, burst: limit.burst ?? null });
  let refused = 0;
  for (const time of times) {
    clock = time;
    if (!limiter.admit('tenant').admitted) refused += 1;
  }
  return refused;
}

void describe('the dispatch rate for a service limit', () => {
  void it("is (budget - 1) / 1.05 in bucket mode with one second's burst, (budget - 1) / 2 in strict mode", () => {
    assert.equal(dispatchRateFor(20), 18.095);
    assert.equal(dispatchRateFor(8), 6.666);
    assert.equal(dispatchRateFor(100), 94.285);
    assert.equal(dispatchRateFor(8, { mode: 'bucket', burst: 16 }), 8);
    assert.equal(dispatchRateFor(8, { mode: 'strict' }), 3.5);
    assert.equal(dispatchRateFor(1), 0.487);
    assert.deepEqual(queueRatesFor({ totalRps: 60, tenantRps: 40 }), { queueRps: 56.19, tenantRps: 37.142 });
    assert.deepEqual(queueRatesFor({ totalRps: 60, tenantRps: 40, burst: 120 }), { queueRps: 60, tenantRps: 40 });
    assert.deepEqual(queueRatesFor({ totalRps: 8, tenantRps: 8, mode: 'strict' }), { queueRps: 3.5, tenantRps: 3.5 });
  });

  void it("never overflows the service's limit in the model of Temporal's limiter, and uses most of a bucket", () => {
    for (const budget of [0.5, 1, 1.5, 2, 3, 8, 10, 20, 60, 100]) {
      for (const burst of [1, 1.5, 2, budget, 2 * budget, budget + 0.5].filter((value) => value >= 1)) {
        const rate = dispatchRateFor(budget, { mode: 'bucket', burst });
        for (const startMs of [0, 123.4, 999.9]) {
          for (const spread of [false, true]) {
            const times = temporalDispatches(rate, startMs, 30, spread);
            assert.equal(
              refusalsAt(times, { mode: 'bucket', perSecond: budget, burst }),
              0,
              `bucket ${budget}/s, burst ${burst}: dispatched at ${rate}/s${spread ? ', the burst late' : ''}`,
            );
          }
        }
        // At the budget itself, the burst alone overflows the bucket by one.
        if (burst === budget && budget >= 2) assert.equal(refusalsAt(temporalDispatches(budget, 0, 5), { mode: 'bucket', perSecond: budget, burst }), 1);
      }
      const strict = dispatchRateFor(budget, { mode: 'strict' });
      if (budget >= 1) {
        for (const startMs of [0, 500, 999.9])
          assert.equal(
            refusalsAt(temporalDispatches(strict, startMs, 30), { mode: 'window', perSecond: budget }),
            0,
            `strict ${budget}/s: dispatched at ${strict}/s`,
          );
      }
    }
    for (const budget of [20, 100]) assert.ok(dispatchRateFor(budget) / budget >= 0.9, `${budget}/s`);
  });
});
