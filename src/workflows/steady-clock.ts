/**
 * Workflow time that a local activity's result does not move. Deterministic workflow code; one per
 * workflow run (it holds state, so never at module level: the modules are shared by every workflow
 * of a thread).
 *
 * Why: `Date.now()` in code that runs after a local activity is not the same on replay. Measured on
 * server 1.32.2 with the pinned SDK, in a book refresh's history: a `stillEnrolled` marker recorded
 * with the task that scheduled it (started at 30.980), whose result the worker delivered in a new
 * task started at 31.036; replaying it, the SDK delivers the result at once, at the marker's
 * complete time, 31.000. A child started after it was timed from 31.036 in the run and from 31.000 on
 * replay; enough such differences moved a window decision, its memo update took the place of a timer
 * cancel in the replayed commands, and a replay of the refresh failed as nondeterministic (its
 * worker's cache had evicted it), with its last children done and the refresh stuck.
 *
 * The rule: code after a local activity keeps the time from before it (the task that scheduled it:
 * the same in a run and on replay) until something in history wakes the workflow again (a child's
 * start or end, a timer, an update), whose time is its task's in both.
 */
export class SteadyClock {
  private pinned: number | undefined;

  now(): number {
    return this.pinned ?? Date.now();
  }

  iso(): string {
    return new Date(this.now()).toISOString();
  }

  /** A history event woke the workflow (a child started or ended, a timer fired, an update arrived): its task's time holds. */
  woke(): void {
    this.pinned = undefined;
  }

  /** Awaits a local activity; the code after it keeps the time from before it (failed or not). */
  async local<T>(call: () => Promise<T>): Promise<T> {
    const before = this.now();
    try {
      return await call();
    } finally {
      this.pinned = before;
    }
  }
}
