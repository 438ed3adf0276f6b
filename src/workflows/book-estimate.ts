/**
 * When a book's refresh will end, for the operator's progress read (never a command: a query's
 * answer, so it may change without touching replay). Deterministic and import-free: workflow code.
 *
 * The rate is what the window sustains now, by Little's law: children in flight over the time a
 * child takes (the recent median). The rate of the last logins done lags it while the window grows:
 * read at a tenth of a night with 10 s polls, it predicted 644 s for a 252 s night (the window took
 * the first minutes to grow), and 157 s for a 115 s night with 1 s polls. Before the window knows a
 * child's time, the logins done are all there is.
 */

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
}

/** Logins done before the logins-done rate is read. */
export const RATE_AFTER = 8;

/** The estimated end (ms), or undefined while nothing says yet. */
export function estimateEnd({ now, left, windowSize, recentFinishMs, recentDone, activeNow }: EstimateInputs): number | undefined {
  if (recentDone.length < RATE_AFTER) return undefined;
  if (recentFinishMs !== undefined && recentFinishMs > 0 && windowSize > 0) {
    // The last logins trickle out as the window empties: at most as many in flight as are left.
    return now + (left * recentFinishMs) / Math.min(windowSize, Math.max(1, left));
  }
  const since = recentDone[0] as number;
  const span = Math.max(activeNow, recentDone[recentDone.length - 1] as number) - since;
  if (span <= 0) return undefined;
  return now + (left * span) / (recentDone.length - 1);
}
