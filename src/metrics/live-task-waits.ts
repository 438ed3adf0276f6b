/**
 * How long live users' activity tasks waited to start on this worker process, read back over the
 * last seconds (each attempt's scheduled time to now, recorded as it starts). A window (a book's
 * refresh, a tenant's admission) judges the live path by it beside the server's count of waiting
 * tasks (src/activities/live-path-activities.ts): the server's count is an instant, taken every few
 * seconds, and a crowded machine shows first as every task starting a little late, which an instant
 * seldom catches. A wait holds what a live user's step waits for between being scheduled and
 * running: the server persisting and dispatching it, and this process's event loop taking it up.
 * (Live workflow tasks' time on the worker was measured too until 2026-12-03; the windows never
 * acted on it, so it went: docs/benchmarks.md, 2026-11-30.)
 *
 * Each is the worker's clock less the server's (the scheduled time is the server's),
 * so a reading is taken above the shortest of the last ten minutes: a difference between the two
 * clocks, and the network's floor, are in every one and say nothing of crowding. What the SDK does before the
 * activity runs (decoding its input: a KMS's data key when none is cached) is in the wait too.
 *
 * It sees the live tasks of this process only: a window judges by it where it runs beside live work
 * (one pool, or WORKER_POOL=both); a refresh on an unattended pool's own process sees none and judges
 * by the server's count, as before.
 */
/** Waits kept: the last this many starts (a few minutes of a busy fleet's live calls). */
const KEPT = 512;
/** The shortest wait is taken over this long: a clock step or a new network path is learned within it. */
export const SHORTEST_SPAN_MS = 10 * 60_000;
/** A wait this long is a task scheduled while no worker ran (a restart), not a slow path: not recorded. */
export const STRANDED_WAIT_MS = 60_000;

export interface RecentWaits {
  /** Live tasks started within the span. */
  readonly samples: number;
  /**
   * The 90th percentile of their waits (nearest rank: the longest of fewer than ten) above the
   * shortest wait kept, ms; 0 without any.
   */
  readonly p90Ms: number;
}

export class LiveTaskWaits {
  private readonly at = new Float64Array(KEPT);
  private readonly waitMs = new Float64Array(KEPT);
  private next = 0;
  private count = 0;

  /** `waitMs` may be negative: the worker's clock behind the server's. */
  record(waitMs: number, at: number = Date.now()): void {
    if (!Number.isFinite(waitMs) || Math.abs(waitMs) >= STRANDED_WAIT_MS) return;
    this.at[this.next] = at;
    this.waitMs[this.next] = waitMs;
    this.next = (this.next + 1) % KEPT;
    this.count = Math.min(this.count + 1, KEPT);
  }

  /** The waits of live tasks that started within the last `spanMs`. */
  recent(spanMs: number, now: number = Date.now()): RecentWaits {
    const waits: number[] = [];
    let shortest = Number.POSITIVE_INFINITY;
    for (let index = 0; index < this.count; index += 1) {
      const wait = this.waitMs[index]!;
      const age = now - this.at[index]!;
      if (age <= Math.max(spanMs, SHORTEST_SPAN_MS)) shortest = Math.min(shortest, wait);
      if (age <= spanMs) waits.push(wait);
    }
    if (waits.length === 0) return { samples: 0, p90Ms: 0 };
    waits.sort((a, b) => a - b);
    return { samples: waits.length, p90Ms: Math.max(0, Math.round(waits[Math.ceil(0.9 * waits.length) - 1]! - shortest)) };
  }
}
