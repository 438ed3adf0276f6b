/**
 * The fleet page's night-length rule as the benchmarks compute it (bench/night-rule.ts): each bound,
 * the least of them, and the line that sets the prediction beside the measured night.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { nightRamp, nightRule, nightRuleLine } from '../../bench/night-rule.js';

describe('the night-length rule', () => {
  it('takes the least of the service, the cores and the window, and predicts N over it', () => {
    // The fleet page's example: R = 60, C = 8, c = 200 ms; a window of 330 over 11 s binds at 30 a second.
    const rule = nightRule({ logins: 100_000, serviceLimitRps: 60, cores: 8, cpuPerRefreshMs: 200, ceiling: 330, bestFinishMs: 11_000, nightS: 5_000 });
    assert.equal(rule.service, 20);
    assert.ok(Math.abs(rule.cores - 26.67) < 0.01);
    assert.equal(rule.window, 30);
    assert.equal(rule.rate, 20);
    assert.equal(rule.predictedS, 5_000);
  });

  it("binds on the window when its ceiling over a refresh's time is the least, and leaves out bounds it does not know", () => {
    const rule = nightRule({ logins: 400, cores: 2, cpuPerRefreshMs: 150, ceiling: 50, bestFinishMs: 11_000, nightS: 350 });
    assert.equal(rule.service, undefined);
    assert.ok(Math.abs(rule.rate - 50 / 11) < 1e-9);
    assert.equal(nightRule({ logins: 10, cores: 2, cpuPerRefreshMs: 100, ceiling: 50, bestFinishMs: undefined, nightS: 1 }).window, undefined);
  });

  it('bounds nothing by the cores when no CPU a refresh was measured (an idle read high)', () => {
    const rule = nightRule({ logins: 100, cores: 2, cpuPerRefreshMs: -3, ceiling: 50, bestFinishMs: 10_000, nightS: 100 });
    assert.equal(rule.cores, Number.POSITIVE_INFINITY);
    assert.equal(rule.rate, 5);
    assert.match(
      nightRuleLine({ logins: 100, cores: 2, cpuPerRefreshMs: 0, ceiling: 50, bestFinishMs: 10_000, nightS: 100 }),
      /no CPU a refresh measured \(0\.0 ms\)/,
    );
  });

  it('prints each bound and how far the prediction is from the night measured', () => {
    const line = nightRuleLine({ logins: 1000, cores: 2, cpuPerRefreshMs: 123.2, ceiling: 50, bestFinishMs: 1_310, nightS: 135 });
    assert.equal(
      line,
      'the night-length rule: 1000 / min(no service limit, ⅔ × 2 × 1000 / 123.2 ms = 10.8, 50 / 1.31 s = 38.2) = 1000 / 10.8 a second = 92 s; the night took 135 s (the rule -32%)',
    );
  });

  it("counts the window's ramp from its start: a child's time a round, by half again, until it holds what the rate needs", () => {
    // 10 s children at 4.9 a second need a window of 49: 4, 6, 9, 14, 21, 32 then 48 (each a round), 134 done.
    const ramp = nightRamp(4, 4.9, 10_000, 400);
    assert.deepEqual(ramp, { rounds: 7, done: 134, seconds: 70 });
    const rule = nightRule({ logins: 400, cores: 2, cpuPerRefreshMs: 105.6, ceiling: 50, bestFinishMs: 10_000, start: 4, nightS: 154 });
    assert.ok(Math.abs(rule.predictedS - (70 + 266 / 5)) < 1e-9, `${rule.predictedS}`);
    assert.equal(
      nightRuleLine({ logins: 400, cores: 2, cpuPerRefreshMs: 105.6, ceiling: 50, bestFinishMs: 10_000, start: 4, nightS: 154 }),
      "the night-length rule: the window's ramp from 4 (7 rounds of 10.00 s, 134 done) 70 s + 266 / min(no service limit, ⅔ × 2 × 1000 / 105.6 ms = 12.6, 50 / 10.00 s = 5.0) = 266 / 5.0 a second = 123 s; the night took 154 s (the rule -20%)",
    );
    // A window that starts where the rate needs it has no ramp; a book smaller than the ramp ends in it.
    assert.equal(nightRamp(60, 4.9, 10_000, 400).rounds, 0);
    assert.deepEqual(nightRamp(4, 4.9, 10_000, 15), { rounds: 3, done: 15, seconds: 30 });
  });
});
