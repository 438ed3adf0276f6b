/**
 * A book refresh's estimated end (src/workflows/book/book-estimate.ts): the rate the window sustains now
 * (children in flight over a child's time), not the lagging rate of the logins done while it grew.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { estimateEnd, RATE_AFTER } from '../../src/workflows/book/book-estimate.js';

/** Logins done one every `everyMs` up to `at`. */
const doneEvery = (count: number, everyMs: number, at: number) => Array.from({ length: count }, (_, index) => at - (count - 1 - index) * everyMs);

void describe('the estimated end of a book refresh', () => {
  void it('says nothing before enough logins are done', () => {
    assert.equal(
      estimateEnd({ now: 1_000, left: 100, windowSize: 10, recentFinishMs: 1_000, recentDone: doneEvery(RATE_AFTER - 1, 100, 1_000), activeNow: 1_000 }),
      undefined,
    );
  });

  void it("reads the window by Little's law: 360 left, 20 in flight, 10 s a child, ends in 180 s, whatever the logins done while it grew say", () => {
    // 40 done over the first 84 s while the window grew: their rate (0.48 a second) says 750 s more.
    const end = estimateEnd({ now: 84_000, left: 360, windowSize: 20, recentFinishMs: 10_000, recentDone: doneEvery(40, 2_100, 84_000), activeNow: 84_000 });
    assert.equal(end, 84_000 + 180_000);
  });

  void it('counts a window in slow start growing by half a round up to where it heads: 360 left, 14 in flight heading for 50, 10 s a child', () => {
    // Rounds of 14, 21, 32 and 48 finish 115 in 40 s; the 245 left at 50 a round take 49 s more.
    const end = estimateEnd({
      now: 30_000,
      left: 360,
      windowSize: 14,
      recentFinishMs: 10_000,
      recentDone: doneEvery(40, 750, 30_000),
      activeNow: 30_000,
      ramp: { to: 50, minRoundMs: 0 },
    });
    assert.equal(end, 30_000 + 40_000 + 49_000);
    // The same window no longer growing (slow start over, pinned, throttled): Little's law on 14.
    const held = estimateEnd({ now: 30_000, left: 360, windowSize: 14, recentFinishMs: 10_000, recentDone: doneEvery(40, 750, 30_000), activeNow: 30_000 });
    assert.equal(held, 30_000 + (360 * 10_000) / 14);
  });

  void it('counts a round of the ramp as a fleet read when the live path judges the window and a child takes less', () => {
    // 1 s children, a reading every 5 s: 14, 21, 32 and 48 finish 115 in 4 readings (20 s); 245 at 50 a second take 4.9 s.
    const end = estimateEnd({
      now: 0,
      left: 360,
      windowSize: 14,
      recentFinishMs: 1_000,
      recentDone: doneEvery(40, 75, 0),
      activeNow: 0,
      ramp: { to: 50, minRoundMs: 5_000 },
    });
    assert.equal(end, 20_000 + (245 * 1_000) / 50);
  });

  void it('stops counting the ramp once fewer are left than the next round holds', () => {
    // 20 left with 14 in flight heading for 50: one round of 14, then the 6 left in one child's time.
    assert.equal(
      estimateEnd({
        now: 0,
        left: 20,
        windowSize: 14,
        recentFinishMs: 10_000,
        recentDone: doneEvery(64, 100, 0),
        activeNow: 0,
        ramp: { to: 50, minRoundMs: 0 },
      }),
      20_000,
    );
  });

  void it("lets the last logins end within one child's time once fewer are left than the window holds", () => {
    assert.equal(estimateEnd({ now: 0, left: 5, windowSize: 20, recentFinishMs: 10_000, recentDone: doneEvery(64, 100, 0), activeNow: 0 }), 10_000);
  });

  void it("falls back to the rate of the logins done before the window knows a child's time", () => {
    // 9 done, one a second: 8 intervals over 8 s; 100 left → 100 s.
    assert.equal(
      estimateEnd({ now: 50_000, left: 100, windowSize: 4, recentFinishMs: undefined, recentDone: doneEvery(9, 1_000, 20_000), activeNow: 20_000 }),
      150_000,
    );
  });
});
