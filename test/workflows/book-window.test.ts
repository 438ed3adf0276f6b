/**
 * The book refresh's window controller on its own (pure code, workflow time given): it grows while
 * children finish near their best time and the window is full, shrinks when they slow down or wait
 * to start, halves once per throttle, keeps to its floor and ceiling, and holds an operator's pin.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DEFAULT_WINDOW_CONTROL } from '../../src/contract/book-definitions.js';
import { WindowController } from '../../src/workflows/book-window.js';

const BOUNDS = { floor: 2, ceiling: 40, start: 4 };

/** `count` children that each took `ms`, finishing while the window was full. */
function finish(window: WindowController, count: number, ms: number, at = 0, full = true): void {
  for (let index = 0; index < count; index += 1) window.observeFinish(ms, true, at + index, full);
}

void describe('book refresh window', () => {
  void it('starts at its start size and grows by half a round at a time while children finish at their best time', () => {
    const window = new WindowController(BOUNDS, DEFAULT_WINDOW_CONTROL);
    assert.equal(window.size, 4);
    finish(window, 4, 1_000);
    assert.equal(window.size, 6, 'one full round at the best time: +50%');
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
    finish(window, 4, 1_000);
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
    for (let round = 0; round < 10; round += 1) finish(window, 20, 30_000, round * 100);
    assert.equal(window.size, 2);
  });

  void it('shrinks when children wait to start far longer than they did, even if they finish in time', () => {
    const window = new WindowController(BOUNDS, DEFAULT_WINDOW_CONTROL);
    for (let index = 0; index < 4; index += 1) window.observeStart(20);
    finish(window, 4, 1_000);
    assert.equal(window.size, 6);
    for (let index = 0; index < 20; index += 1) window.observeStart(2_000);
    finish(window, 6, 1_000, 100);
    assert.ok(window.size < 6, `shrank to ${window.size}`);
    assert.match(window.view.lastChange?.reason ?? '', /waited [\d.]+x their best time to start/);
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

  void it('holds an operator pin while it keeps learning, and resumes from its own size when unpinned', () => {
    const window = new WindowController(BOUNDS, DEFAULT_WINDOW_CONTROL);
    window.pin(20, 0);
    assert.equal(window.size, 20);
    assert.equal(window.view.pinned, 20);
    finish(window, 4, 1_000, 1);
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
});
