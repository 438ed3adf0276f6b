/**
 * The book refresh's window controller on its own (pure code, workflow time given): it grows while
 * children finish near their best time and the window is full, shrinks when they slow down or wait
 * to start, halves once per throttle, keeps to its floor and ceiling, and holds an operator's pin.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DEFAULT_WINDOW_CONTROL } from '../../src/contract/window/window-definitions.js';
import { LIVE_READ_MIN_MS, LIVE_STRANDED_MS, RECENT_MIN, WindowController } from '../../src/workflows/window/window-controller.js';

const BOUNDS = { floor: 2, ceiling: 40, start: 4 };

/** `count` children that each took `ms`, finishing while the window was full. */
function finish(window: WindowController, count: number, ms: number, at = 0, full = true): void {
  for (let index = 0; index < count; index += 1) window.observeFinish(ms, true, at + index, full);
}

void describe('book refresh window', () => {
  void it('starts at its start size and grows by half a round at a time while children finish at their best time', () => {
    const window = new WindowController(BOUNDS, DEFAULT_WINDOW_CONTROL);
    assert.equal(window.size, 4);
    finish(window, RECENT_MIN, 1_000);
    assert.equal(window.size, 6, 'the first median (RECENT_MIN children) at the best time: +50%');
    finish(window, 6, 1_000);
    assert.equal(window.size, 9);
    assert.match(window.view.lastChange?.reason ?? '', /1\.00x their best time/);
  });

  void it('does not grow while the window is not full (no demand), nor past its ceiling', () => {
    const window = new WindowController({ floor: 1, ceiling: 5, start: 4 }, DEFAULT_WINDOW_CONTROL);
    finish(window, 20, 1_000, 0, false);
    assert.equal(window.size, 4, 'a window that is not full learns nothing about room');
    finish(window, 40, 1_000);
    assert.equal(window.size, 5, 'held at the ceiling');
  });

  void it('shrinks when children take twice their best time, and afterwards grows by an eighth only', () => {
    const window = new WindowController(BOUNDS, DEFAULT_WINDOW_CONTROL);
    finish(window, RECENT_MIN, 1_000);
    finish(window, 6, 1_000);
    finish(window, 9, 1_000);
    const grown = window.size;
    assert.ok(grown >= 13, `grew to ${grown}`);
    finish(window, 20, 3_000, 1_000);
    assert.ok(window.size < grown, `shrank from ${grown} to ${window.size}`);
    assert.match(window.view.lastChange?.reason ?? '', /children took [\d.]+x their best time/);
    const shrunk = window.size;
    finish(window, 40, 1_000, 2_000);
    assert.ok(window.size > shrunk, 'grows again once children are fast');
    const change = window.view.lastChange;
    assert.ok(change && change.to - change.from <= Math.ceil(change.from / 8), `after a shrink it grows by an eighth: ${JSON.stringify(change)}`);
  });

  void it('shrinks to its floor and no further when children keep slowing (a service down for minutes)', () => {
    const window = new WindowController(BOUNDS, DEFAULT_WINDOW_CONTROL);
    finish(window, 4, 500);
    // Rounds a child's time apart: a shrink waits for children started after the last one.
    for (let round = 0; round < 10; round += 1) finish(window, 20, 30_000, round * 31_000);
    assert.equal(window.size, 2);
  });

  void it('shrinks when children wait to start far longer than they did, even if they finish in time', () => {
    const window = new WindowController(BOUNDS, DEFAULT_WINDOW_CONTROL);
    for (let index = 0; index < RECENT_MIN; index += 1) window.observeStart(20);
    finish(window, RECENT_MIN, 1_000);
    assert.equal(window.size, 6);
    for (let index = 0; index < 20; index += 1) window.observeStart(2_000);
    finish(window, 6, 1_000, 100);
    assert.ok(window.size < 6, `shrank to ${window.size}`);
    assert.match(window.view.lastChange?.reason ?? '', /waited [\d.]+x their best time to start/);
  });

  void it("judges crowding on children's busy time, not their polls' fixed waits", () => {
    const window = new WindowController(BOUNDS, DEFAULT_WINDOW_CONTROL);
    const finishBusy = (count: number, wholeMs: number, busyMs: number, at: number) => {
      for (let index = 0; index < count; index += 1) window.observeFinish(wholeMs, true, at + index, true, busyMs);
    };
    finishBusy(RECENT_MIN, 11_000, 1_000, 0);
    assert.equal(window.size, 6);
    finishBusy(6, 21_000, 1_000, 100);
    assert.equal(window.size, 9, 'one more 10 s poll each, the same busy time: not crowding, grows');
    finishBusy(20, 13_000, 3_000, 200);
    assert.ok(window.view.size < 9, `busy 3x, whole time only 1.2x: shrank to ${window.view.size}`);
    assert.match(window.view.lastChange?.reason ?? '', /children took [\d.]+x their best time, busy \d+ ms against 1000 ms/);
    assert.equal(window.view.bestFinishMs, 11_000, 'the whole time kept for the stuck rule');
  });

  void it('publishes its crowding until two child times after the last child that finished, so a book whose children stopped says nothing of the fleet', () => {
    const window = new WindowController(BOUNDS, DEFAULT_WINDOW_CONTROL);
    assert.equal(window.crowdingUntil, undefined, 'nothing finished: nothing to tell');
    finish(window, RECENT_MIN, 20_000, 100_000);
    const last = 100_000 + RECENT_MIN - 1;
    assert.equal(window.crowdingUntil, last + 2 * 20_000, 'two child times after the last one');
    const quick = new WindowController(BOUNDS, DEFAULT_WINDOW_CONTROL);
    finish(quick, RECENT_MIN, 300, 0);
    assert.equal(quick.crowdingUntil, RECENT_MIN - 1 + 2 * DEFAULT_WINDOW_CONTROL.fleetCheckMs, 'at least two reads of the fleet, however quick its children');
    quick.observeFinish(300, false, 50_000, true);
    assert.equal(
      quick.crowdingUntil,
      RECENT_MIN - 1 + 2 * DEFAULT_WINDOW_CONTROL.fleetCheckMs,
      'a failure or a skip ends early: it does not renew the reading',
    );
  });

  void it("says where it heads while in slow start, a round a child's time or a fleet read when the live path judges it", () => {
    const window = new WindowController(BOUNDS, DEFAULT_WINDOW_CONTROL);
    assert.deepEqual(window.ramp(0), { to: 40, minRoundMs: 0 }, 'a new window heads for its ceiling');
    window.observeLivePath({ waitMs: 0, waiting: 0 }, 0);
    assert.deepEqual(window.ramp(1_000), { to: 40, minRoundMs: DEFAULT_WINDOW_CONTROL.fleetCheckMs }, 'judged by the live path: one move a reading');
  });

  void it('says nothing of a ramp once slow start is over, while pinned, at its ceiling, or at its share of the fleet', () => {
    const throttled = new WindowController(BOUNDS, DEFAULT_WINDOW_CONTROL);
    throttled.observeThrottle(10_000, 'TOO_MANY_REQUESTS', 0);
    assert.equal(throttled.ramp(20_000), undefined, "a throttle's halving ends slow start, after the throttle too");
    const pinned = new WindowController(BOUNDS, DEFAULT_WINDOW_CONTROL);
    pinned.pin(20, 0);
    assert.equal(pinned.ramp(0), undefined, 'pinned: it holds');
    const slowed = new WindowController(BOUNDS, DEFAULT_WINDOW_CONTROL);
    finish(slowed, RECENT_MIN, 1_000);
    finish(slowed, 20, 3_000, 1_000);
    assert.match(slowed.view.lastChange?.reason ?? '', /children took [\d.]+x their best time/);
    assert.equal(slowed.ramp(2_000), undefined, 'slow start over once it shrank');
    const full = new WindowController({ floor: 1, ceiling: 5, start: 4 }, DEFAULT_WINDOW_CONTROL);
    finish(full, 40, 1_000);
    assert.equal(full.size, 5);
    assert.equal(full.ramp(0), undefined, 'at its ceiling');
    const above = new WindowController({ floor: 2, ceiling: 50, start: 30 }, DEFAULT_WINDOW_CONTROL);
    above.observeFleet([{ size: 4, weight: 1 }], 1);
    assert.equal(above.ramp(0), undefined, 'above its share of 17: it does not grow');
  });

  void it('halves once per throttle and does not grow until it has passed', () => {
    const window = new WindowController({ floor: 1, ceiling: 40, start: 16 }, DEFAULT_WINDOW_CONTROL);
    window.observeThrottle(10_000, 'TOO_MANY_REQUESTS, Retry-After 10 s', 0);
    assert.equal(window.size, 8);
    window.observeThrottle(12_000, 'again', 1_000);
    assert.equal(window.size, 8, 'the same throttle, extended: no second halving');
    finish(window, 40, 1_000, 2_000);
    assert.equal(window.size, 8, 'no growth while throttled');
    finish(window, 8, 1_000, 20_000);
    assert.ok(window.size > 8, 'grows again after the throttle');
  });

  void it("after a throttle, children slowed by waiting it out do not shrink the window again until a child's time after it", () => {
    const window = new WindowController({ floor: 1, ceiling: 40, start: 16 }, DEFAULT_WINDOW_CONTROL);
    finish(window, 16, 1_000);
    const before = window.size;
    window.observeThrottle(10_000, 'TOO_MANY_REQUESTS, Retry-After 5 s', 5_000);
    const halved = window.size;
    assert.equal(halved, Math.floor(before / 2));
    finish(window, 20, 6_000, 6_000);
    window.observeInFlight([6_000, 6_000, 6_000], 9_000);
    assert.equal(window.size, halved, "the Retry-After's slow children and those in flight: no second shrink");
    finish(window, 20, 6_000, 20_000);
    assert.ok(window.size < halved, `slow children a child's time after the throttle: shrank to ${window.view.size}`);
  });

  void it('holds an operator pin while it keeps learning, and resumes from its own size when unpinned', () => {
    const window = new WindowController(BOUNDS, DEFAULT_WINDOW_CONTROL);
    window.pin(20, 0);
    assert.equal(window.size, 20);
    assert.equal(window.view.pinned, 20);
    finish(window, RECENT_MIN, 1_000, 1);
    assert.equal(window.size, 20, 'pinned');
    assert.match(window.view.lastChange?.reason ?? '', /pinned at 20: not applied/);
    window.unpin(10);
    assert.equal(window.view.pinned, undefined);
    assert.equal(window.size, 6);
  });

  void it('carries its memory across continue-as-new', () => {
    const window = new WindowController(BOUNDS, DEFAULT_WINDOW_CONTROL);
    finish(window, 4, 1_000);
    const next = new WindowController(BOUNDS, DEFAULT_WINDOW_CONTROL, structuredClone(window.carried));
    assert.equal(next.size, window.size);
    assert.equal(next.view.bestFinishMs, 1_000);
    assert.deepEqual(next.changes, window.changes);
  });

  void it('below its share of the fleet, holds when children slow; above it, shrinks (the book above gives way)', () => {
    const big = new WindowController({ floor: 2, ceiling: 50, start: 30 }, DEFAULT_WINDOW_CONTROL);
    const small = new WindowController({ floor: 2, ceiling: 50, start: 4 }, DEFAULT_WINDOW_CONTROL);
    big.observeFleet([{ size: 4, weight: 1 }], 1);
    small.observeFleet([{ size: 30, weight: 1 }], 1);
    assert.equal(small.view.share?.size, 17);
    finish(big, 30, 1_000);
    finish(small, 4, 1_000);
    finish(big, 30, 3_000, 100);
    finish(small, 8, 3_000, 100);
    assert.ok(big.size < 30, `the book above its share shrank: ${big.size}`);
    assert.ok(small.size >= 4, `the book below its share did not shrink: ${small.size}`);
  });

  void it('above its share by a quarter, shrinks toward it as soon as children slow at all; at or above its share, does not grow', () => {
    const window = new WindowController({ floor: 2, ceiling: 50, start: 30 }, DEFAULT_WINDOW_CONTROL);
    window.observeFleet([{ size: 4, weight: 1 }], 1);
    finish(window, 30, 1_000);
    assert.equal(window.size, 30, 'fast children, but 30 is above its share of 17: no growth');
    finish(window, 20, 1_700, 100);
    assert.equal(window.size, 25, 'children at 1.6x (not yet 2x): gives way by 15%, to no less than its share');
    assert.match(window.view.lastChange?.reason ?? '', /giving way to 1 other book: 30 is above this book's share of 17\.0/);
  });

  void it('leaves a paused book (a window of 0) out of the share: its weight takes nothing from the others', () => {
    const alone = new WindowController({ floor: 2, ceiling: 50, start: 30 }, DEFAULT_WINDOW_CONTROL);
    alone.observeFleet([{ size: 0, weight: 1 }], 1);
    assert.equal(alone.view.share, undefined, 'beside a paused book only, it runs as if alone');
    const beside = new WindowController({ floor: 2, ceiling: 50, start: 30 }, DEFAULT_WINDOW_CONTROL);
    beside.observeFleet(
      [
        { size: 0, weight: 3 },
        { size: 4, weight: 1 },
      ],
      1,
    );
    assert.equal(beside.view.share?.size, 17, "half of 34 with the one running book, the paused one's weight 3 not counted");
    assert.equal(beside.view.share?.refreshes, 2);
  });

  void it('grows with an equal book (the fleet as a whole still finds its size), and by weight', () => {
    const window = new WindowController({ floor: 2, ceiling: 50, start: 10 }, DEFAULT_WINDOW_CONTROL);
    window.observeFleet([{ size: 10, weight: 1 }], 1);
    finish(window, RECENT_MIN, 1_000);
    assert.ok(window.size > 10, `equal books both grow: ${window.size}`);
    const heavy = new WindowController({ floor: 2, ceiling: 50, start: 12 }, DEFAULT_WINDOW_CONTROL);
    heavy.observeFleet([{ size: 4, weight: 1 }], 3);
    assert.equal(heavy.view.share?.size, 12, 'weight 3 of 4: three quarters of 16');
    finish(heavy, RECENT_MIN, 1_000);
    assert.ok(heavy.size > 12, `at its weighted share and not above it by a child, it grows: ${heavy.size}`);
  });

  /**
   * A fleet that carries `capacity` children at their time alone (beyond it every child slows in
   * proportion): A refreshes alone first, then B joins at its start size; completions come in
   * proportion to each window, and each book reads the other's window as it goes. Deterministic.
   */
  function shareAFleet(capacity: number, weights: { readonly a: number; readonly b: number }) {
    const a = new WindowController({ floor: 2, ceiling: 50, start: 4 }, DEFAULT_WINDOW_CONTROL);
    const b = new WindowController({ floor: 2, ceiling: 50, start: 4 }, DEFAULT_WINDOW_CONTROL);
    let now = 0;
    let aAlone = 0;
    for (let step = 0; step < 8_000; step += 1) {
      const joined = step >= 1_500;
      if (step === 1_500) aAlone = a.size;
      const total = a.size + (joined ? b.size : 0);
      const childMs = 1_000 * Math.max(1, total / capacity);
      const [book, other, weight, otherWeight] = joined && step % total >= a.size ? [b, a, weights.b, weights.a] : [a, b, weights.a, weights.b];
      if (joined) book.observeFleet([{ size: other.size, weight: otherWeight, crowding: other.crowding }], weight);
      now += childMs / total;
      book.observeFinish(childMs, true, now, true);
    }
    return { aAlone, a: a.size, b: b.size };
  }

  void it("a book that joins a fleet another has filled is given its weighted share, and together they keep near the fleet's capacity", () => {
    const capacity = 24;
    const equal = shareAFleet(capacity, { a: 1, b: 1 });
    assert.ok(equal.aAlone > capacity, `A alone grew into the fleet first: ${equal.aAlone}`);
    // Settles at A 20, B 17: the band below is what the rules allow (a book a child above its share stops growing, 15% above gives way).
    assert.ok(Math.abs(equal.a - equal.b) <= 0.25 * Math.max(equal.a, equal.b), `equal weights, near equal windows: A ${equal.a}, B ${equal.b}`);
    assert.ok(
      equal.a + equal.b <= capacity * DEFAULT_WINDOW_CONTROL.shrinkAbove,
      `together no more crowded than one book alone lets itself be: ${equal.a + equal.b} for ${capacity}`,
    );
    const weighted = shareAFleet(capacity, { a: 1, b: 3 });
    // Settles at A 10, B 26.
    assert.ok(weighted.b >= 2 * weighted.a, `weight 3 against 1: B ${weighted.b}, A ${weighted.a}`);
  });

  void describe('judged by the live path, where the server counts it', () => {
    const live = (window: WindowController, waitMs: number, at: number, waiting = waitMs > 0 ? 1 : 0) => window.observeLivePath({ waitMs, waiting }, at);
    /** A reading, then `count` children of `ms` finishing after it: what a refresh sees between two looks. */
    const readThenFinish = (window: WindowController, waitMs: number, at: number, count: number, ms: number) => {
      live(window, waitMs, at);
      finish(window, count, ms, at + 1);
    };

    void it('grows a round at a time while live tasks start at once, even with children far slower than their best', () => {
      const window = new WindowController(BOUNDS, DEFAULT_WINDOW_CONTROL);
      readThenFinish(window, 0, 0, 4, 1_000);
      assert.equal(window.size, 6, 'a round of the start size, no wait for RECENT_MIN children');
      // Busy 900 ms against 100 (9x), the whole time 1.2 s against 1 s.
      for (let look = 1; look <= 4; look += 1) {
        live(window, 0, look * 5_000);
        for (let index = 0; index < window.size; index += 1)
          window.observeFinish(look === 1 ? 1_000 : 1_200, true, look * 5_000 + 1 + index, true, look === 1 ? 100 : 900);
      }
      assert.ok(window.size > 9, `children busy 9x their best neither shrank nor stopped it: ${window.size}`);
      assert.match(window.view.lastChange?.reason ?? '', /live tasks waited at most 0 ms to start.*children busy \d\.\d\dx their best/);
      assert.equal(window.view.liveWaitMs, 0);
      assert.equal(window.crowding, undefined, "its children's slowness is not published as the fleet's crowding");
    });

    void it('moves once per reading: a round of children after one snapshot of the server grows it once', () => {
      const window = new WindowController(BOUNDS, DEFAULT_WINDOW_CONTROL);
      live(window, 0, 0);
      finish(window, 40, 1_000, 1);
      assert.equal(window.size, 6);
      live(window, 0, 5_000);
      finish(window, 40, 1_000, 5_001);
      assert.equal(window.size, 9);
    });

    void it('gives way when a live task waits, and grows again only once every reading is near idle', () => {
      const window = new WindowController(BOUNDS, DEFAULT_WINDOW_CONTROL);
      for (let look = 0; look < 4; look += 1) readThenFinish(window, 0, look * 5_000, window.size, 1_000);
      const grown = window.size;
      assert.ok(grown > BOUNDS.start);
      readThenFinish(window, DEFAULT_WINDOW_CONTROL.liveSlowMs + 50, 30_000, Math.ceil(grown / 2), 1_000);
      assert.equal(window.size, Math.floor(grown * DEFAULT_WINDOW_CONTROL.shrinkFactor), `shrank from ${grown}`);
      assert.match(window.view.lastChange?.reason ?? '', /live tasks waited 200 ms to start \(1 waiting.*the live path slowed/);
      const shrunk = window.size;
      // One reading near idle after a slow one: the last two are not all near idle yet.
      readThenFinish(window, 10, 35_000, shrunk * 2, 1_000);
      assert.equal(window.size, shrunk, 'held while a reading of the last two was slow');
      readThenFinish(window, 0, 40_000, shrunk, 1_000);
      assert.equal(window.size, shrunk + Math.ceil(shrunk / 8), 'past slow start: by an eighth');
    });

    void it("gives way when its worker's own live starts wait, and does not let them hold growth back", () => {
      const window = new WindowController(BOUNDS, DEFAULT_WINDOW_CONTROL);
      const own = (waitMs: number, workerWaitMs: number, at: number, count: number) => {
        window.observeLivePath({ waitMs, waiting: 0, workerWaitMs, workerSamples: 12 }, at);
        finish(window, count, 1_000, at + 1);
      };
      // The server sees nothing waiting; the worker's starts read above near idle, under slow: it grows.
      for (let look = 0; look < 4; look += 1) own(0, DEFAULT_WINDOW_CONTROL.liveNearMs + 10, look * 5_000, window.size);
      const grown = window.size;
      assert.ok(grown > BOUNDS.start, `grew with the worker's starts at ${DEFAULT_WINDOW_CONTROL.liveNearMs + 10} ms: ${grown}`);
      own(0, DEFAULT_WINDOW_CONTROL.liveSlowMs, 30_000, Math.ceil(grown / 2));
      assert.equal(window.size, Math.floor(grown * DEFAULT_WINDOW_CONTROL.shrinkFactor), `gave way from ${grown}`);
      assert.match(
        window.view.lastChange?.reason ?? '',
        /this worker's last 12 live start\(s\): 150 ms above its shortest at the 90th percentile\): the live path slowed/,
      );
    });

    void it('holds between near idle and slow', () => {
      const window = new WindowController(BOUNDS, DEFAULT_WINDOW_CONTROL);
      for (let look = 0; look < 4; look += 1) readThenFinish(window, DEFAULT_WINDOW_CONTROL.liveNearMs + 10, look * 5_000, 10, 1_000);
      assert.equal(window.size, BOUNDS.start);
    });

    void it('reads a live task waiting a minute or more as stranded (no worker takes it), not as a slow live path', () => {
      const window = new WindowController(BOUNDS, DEFAULT_WINDOW_CONTROL);
      readThenFinish(window, LIVE_STRANDED_MS, 0, 4, 1_000);
      assert.equal(window.size, 6, 'grew as on an idle live path');
    });

    void it('judges by its children again when the server gives no reading, or the last one is stale', () => {
      const none = new WindowController(BOUNDS, DEFAULT_WINDOW_CONTROL);
      live(none, 0, 0);
      none.observeLivePath(null, 1);
      finish(none, 4, 1_000, 2);
      assert.equal(none.size, 4, 'by children: no decision before RECENT_MIN of them');
      assert.equal(none.view.liveWaitMs, undefined);
      const stale = new WindowController(BOUNDS, DEFAULT_WINDOW_CONTROL);
      live(stale, 0, 0);
      finish(stale, 4, 1_000, 3 * Math.max(DEFAULT_WINDOW_CONTROL.fleetCheckMs, LIVE_READ_MIN_MS) + 1);
      assert.equal(stale.size, 4, 'a reading three fleet reads old no longer judges');
    });

    void it('still shrinks for children stuck in flight and halves for a throttle', () => {
      const window = new WindowController(BOUNDS, DEFAULT_WINDOW_CONTROL);
      for (let look = 0; look < 3; look += 1) readThenFinish(window, 0, look * 5_000, window.size, 1_000);
      const before = window.size;
      window.observeInFlight(new Array(before).fill(10_000), 20_000);
      assert.ok(window.size < before, `stuck: ${before} -> ${window.size}`);
      const atStuck = window.size;
      window.observeThrottle(80_000, 'Retry-After', 20_100);
      assert.equal(window.size, Math.max(BOUNDS.floor, Math.floor(atStuck / 2)));
      readThenFinish(window, 0, 25_000, 40, 1_000);
      assert.equal(window.size, Math.max(BOUNDS.floor, Math.floor(atStuck / 2)), 'no growth while throttled');
    });

    void it('above its share by 15%, gives way as soon as a live task waits at all', () => {
      const window = new WindowController({ floor: 2, ceiling: 50, start: 20 }, DEFAULT_WINDOW_CONTROL);
      window.observeFleet([{ size: 10, weight: 1 }], 1);
      readThenFinish(window, DEFAULT_WINDOW_CONTROL.liveNearMs + 1, 0, 10, 1_000);
      assert.equal(window.size, 17, 'by 0.85, never below its share of (20 + 10) / 2');
      assert.match(
        window.view.lastChange?.reason ?? '',
        /^giving way to 1 other book: 20 is above this book's share of 15\.0 .* while live tasks waited 41 ms/,
      );
    });
  });
});
