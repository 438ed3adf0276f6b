/**
 * When a book's refresh will end, for the operator's progress read (never a command: a query's
 * answer, so it may change without touching replay). Deterministic and import-free: workflow code.
 *
 * The rate is what the window sustains, by Little's law: children in flight over the time a child
 * takes (the recent median). The rate of the last logins done lags it while the window grows: read
 * at a tenth of a night with 10 s polls, it predicted 644 s for a 252 s night (the window took the
 * first minutes to grow), and 157 s for a 115 s night with 1 s polls. The window of the moment lags
 * too while it is in slow start: read at a tenth done it was 9 to 14 on its way to 50, and the
 * estimate was 56-80% late. So while the window ramps, it is counted growing by half, a round at a
 * time (a child's time, or a fleet read's when the live path judges it), up to where it heads; once
 * it stops (crowding, a throttle, an operator's pin, its share) the next read counts the window it
 * holds. Where the cores, not the window, end up setting the rate, nothing read this early says so,
 * and the estimate is early until the children slow. Before the window knows a child's time,
 * the logins done are all there is.
 */
import { slowStartGrowth, type WindowRamp } from '../window/window-controller.js';

export interface EstimateInputs {
  /** Now, workflow time (ms). */
  readonly now: number;
  /** Logins not yet done. */
  readonly left: number;
  /** The window's size: children kept in flight while logins are left. */
  readonly windowSize: number;
  /** The recent median time a child took, start to end (ms); undefined until children finished. */
  readonly recentFinishMs: number | undefined;
  /** When the last logins were done, in ms of time not paused, oldest first. */
  readonly recentDone: readonly number[];
  /** Now, in ms of time not paused (while paused: as if resumed now). */
  readonly activeNow: number;
  /** While the window is in slow start: the size it heads for and a round's least time. */
  readonly ramp?: WindowRamp | undefined;
}

/** Logins done before the logins-done rate is read. */
export const RATE_AFTER = 8;

/** The estimated end (ms), or undefined while nothing says yet. */
export function estimateEnd({ now, left, windowSize, recentFinishMs, recentDone, activeNow, ramp }: EstimateInputs): number | undefined {
  if (recentDone.length < RATE_AFTER) return undefined;
  if (recentFinishMs !== undefined && recentFinishMs > 0 && windowSize > 0) {
    // A round (a child's time) finishes the window's size; in slow start the next round holds more.
    let size = windowSize;
    let rest = left;
    let rampMs = 0;
    while (ramp !== undefined && size < ramp.to && rest > size) {
      rest -= size;
      rampMs += Math.max(recentFinishMs, ramp.minRoundMs);
      size = Math.min(ramp.to, slowStartGrowth(size));
    }
    // The last logins trickle out as the window empties: at most as many in flight as are left.
    return now + rampMs + (rest * recentFinishMs) / Math.min(size, Math.max(1, rest));
  }
  const since = recentDone[0] as number;
  const span = Math.max(activeNow, recentDone[recentDone.length - 1] as number) - since;
  if (span <= 0) return undefined;
  return now + (left * span) / (recentDone.length - 1);
}
