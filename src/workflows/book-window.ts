/**
 * How many connections a book's refresh keeps in flight, decided from what the refresh observes and
 * nothing else (no knowledge of the machine): a window that regulates itself, as TCP's does.
 *
 * - **Time alone.** The best median time a child took to finish this night (and the best median time
 *   from asking Temporal to start a child to seeing it started) is the fleet's time for a child when
 *   it is not crowded.
 * - **Grow** while children finish within `growBelow` times that and the window is full: by half
 *   again per round until the first sign of crowding (slow start), then by an eighth (at least one).
 *   A round is as many completions as the window holds, so each decision sees the last one's effect.
 * - **Shrink** when the recent median reaches `shrinkAbove` times the best (finishing or starting;
 *   a start's wait counted with a child's best time, as it lengthens a child): to `shrinkFactor` of
 *   the size, at most once per half round.
 * - **Stuck:** when the children in flight have been out `shrinkAbove` times that long, shrink the
 *   same way without waiting for them to end (a service down for minutes).
 * - **Throttled:** when the service told the tenant to wait (TOO_MANY_REQUESTS), halve, once per
 *   throttle, and do not grow until it has passed.
 * - An operator's pin holds the size; the controller still learns meanwhile.
 * Deterministic and import-free: workflow code. Times are workflow time (ms).
 */
import type { WindowBounds, WindowChange, WindowControl, WindowMemory, WindowView } from '../contract/book-definitions.js';

/** Completions the recent median is taken over: the window's size, within these bounds. */
const RECENT_MIN = 4;
const RECENT_MAX = 20;
/** Window changes kept for the report. */
const CHANGES_KEPT = 50;

function median(values: readonly number[]): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

function clamp(value: number, bounds: WindowBounds): number {
  return Math.min(bounds.ceiling, Math.max(bounds.floor, Math.round(value)));
}

export class WindowController {
  private memory: WindowMemory;

  constructor(
    private readonly bounds: WindowBounds,
    private readonly control: WindowControl,
    memory?: WindowMemory,
  ) {
    this.memory = memory ?? { size: clamp(bounds.start, bounds), changes: [], recentFinishMs: [], recentStartMs: [], sinceChange: 0, shrunk: false };
  }

  /** Children to keep in flight now. */
  get size(): number {
    return this.memory.pinned ?? this.memory.size;
  }

  get carried(): WindowMemory {
    return this.memory;
  }

  get view(): WindowView {
    return {
      size: this.size,
      floor: this.bounds.floor,
      ceiling: this.bounds.ceiling,
      pinned: this.memory.pinned,
      lastChange: this.memory.lastChange,
      bestFinishMs: this.memory.bestFinishMs,
      recentFinishMs: median(this.memory.recentFinishMs),
    };
  }

  get changes(): readonly WindowChange[] {
    return this.memory.changes;
  }

  private get recentLength(): number {
    return Math.min(RECENT_MAX, Math.max(RECENT_MIN, this.memory.size));
  }

  /** Time from asking Temporal to start a child to seeing it started. */
  observeStart(latencyMs: number): void {
    const recentStartMs = [...this.memory.recentStartMs, Math.max(0, latencyMs)].slice(-this.recentLength);
    this.memory = { ...this.memory, recentStartMs, bestStartMs: this.best(this.memory.bestStartMs, recentStartMs) };
  }

  /**
   * A child finished. `timed`: it completed normally, so its time says how crowded the fleet is (a
   * failure or a skip can end early and would make the fleet look fast).
   */
  observeFinish(durationMs: number, timed: boolean, now: number, windowFull: boolean): void {
    if (!timed) return;
    const recentFinishMs = [...this.memory.recentFinishMs, Math.max(0, durationMs)].slice(-this.recentLength);
    this.memory = { ...this.memory, recentFinishMs, bestFinishMs: this.best(this.memory.bestFinishMs, recentFinishMs), sinceChange: this.memory.sinceChange + 1 };
    this.decide(now, windowFull);
  }

  /**
   * Children still in flight, by age: when most have been out far longer than a child takes, the
   * service or the fleet is stuck (a service down for minutes): shrink now rather than when they end,
   * at most once per that long.
   */
  observeInFlight(agesMs: readonly number[], now: number): void {
    const best = this.memory.bestFinishMs;
    const age = median(agesMs);
    if (best === undefined || age === undefined) return;
    const ratio = (age + this.control.slackMs) / (best + this.control.slackMs);
    if (ratio < this.control.shrinkAbove) return;
    const lastAt = this.memory.lastChange ? Date.parse(this.memory.lastChange.at) : Number.NEGATIVE_INFINITY;
    if (now - lastAt < (best + this.control.slackMs) * this.control.shrinkAbove) return;
    this.change(
      clamp(Math.floor(this.memory.size * this.control.shrinkFactor), this.bounds),
      `children in flight for ${ratio.toFixed(2)}x their best time (median ${Math.round(age)} ms against ${Math.round(best)} ms): the service or the fleet is not keeping up`,
      now,
      true,
    );
  }

  /** How long to wait for room before looking at the children in flight again; undefined before any child finished. */
  get stallCheckMs(): number | undefined {
    const best = this.memory.bestFinishMs;
    return best === undefined ? undefined : Math.max(1_000, Math.round((best + this.control.slackMs) * this.control.shrinkAbove));
  }

  /** The service told the tenant to wait until `until` (epoch ms). */
  observeThrottle(until: number, reason: string, now: number): void {
    if (until <= now) return;
    const already = this.memory.throttledUntil !== undefined && this.memory.throttledUntil > now;
    this.memory = { ...this.memory, throttledUntil: Math.max(until, this.memory.throttledUntil ?? 0) };
    if (already) return;
    this.change(clamp(Math.floor(this.memory.size / 2), this.bounds), `the service throttled the tenant until ${new Date(until).toISOString()} (${reason})`, now, true);
  }

  /** An operator's size, held until unpinned. */
  pin(size: number, now: number): void {
    const from = this.size;
    this.memory = { ...this.memory, pinned: size };
    this.record({ at: new Date(now).toISOString(), from, to: size, reason: `pinned by an operator at ${size}` });
  }

  unpin(now: number): void {
    const from = this.size;
    this.memory = { ...this.memory, pinned: undefined, sinceChange: 0 };
    this.record({ at: new Date(now).toISOString(), from, to: this.size, reason: 'unpinned by an operator: the controller sizes the window again' });
  }

  /** The lowest median over a full set of recent values: the time when not crowded. */
  private best(best: number | undefined, recent: readonly number[]): number | undefined {
    if (recent.length < this.recentLength && best !== undefined) return best;
    const now = median(recent);
    if (now === undefined) return best;
    return best === undefined ? now : Math.min(best, now);
  }

  /** `base` is added to both sides with the slack: what else a child's time holds besides the value measured. */
  private ratio(recent: readonly number[], best: number | undefined, base = 0): number | undefined {
    const current = median(recent);
    if (current === undefined || best === undefined || recent.length < Math.min(RECENT_MIN, this.recentLength)) return undefined;
    return (current + base + this.control.slackMs) / (best + base + this.control.slackMs);
  }

  private decide(now: number, windowFull: boolean): void {
    const { size, sinceChange } = this.memory;
    const finishRatio = this.ratio(this.memory.recentFinishMs, this.memory.bestFinishMs);
    // A start's wait is judged by what it adds to a child's whole time (the best finish, itself
    // counted from the ask to start): starts of a few tens of ms that take a few hundred on a busy
    // fleet are not yet congestion, starts that add as much again as a child takes are.
    const startRatio = this.ratio(this.memory.recentStartMs, this.memory.bestStartMs, this.memory.bestFinishMs ?? 0);
    if (finishRatio === undefined) return;
    const throttled = this.memory.throttledUntil !== undefined && this.memory.throttledUntil > now;
    const worst = Math.max(finishRatio, startRatio ?? 0);
    if (worst >= this.control.shrinkAbove && sinceChange >= Math.max(1, Math.ceil(size / 2))) {
      const what = finishRatio >= (startRatio ?? 0)
        ? `children took ${finishRatio.toFixed(2)}x their best time (median ${Math.round(median(this.memory.recentFinishMs) ?? 0)} ms against ${Math.round(this.memory.bestFinishMs ?? 0)} ms)`
        : `children waited ${(startRatio ?? 0).toFixed(2)}x their best time to start, counted in a child's time (median ${Math.round(median(this.memory.recentStartMs) ?? 0)} ms against ${Math.round(this.memory.bestStartMs ?? 0)} ms, a child ${Math.round(this.memory.bestFinishMs ?? 0)} ms)`;
      this.change(clamp(Math.floor(size * this.control.shrinkFactor), this.bounds), what, now, true);
      return;
    }
    if (throttled || !windowFull || worst > this.control.growBelow || sinceChange < size) return;
    const step = this.memory.shrunk ? Math.max(1, Math.ceil(size / 8)) : Math.max(1, Math.ceil(size / 2));
    this.change(clamp(size + step, this.bounds), `children finish in ${finishRatio.toFixed(2)}x their best time and the service answers`, now, false);
  }

  private change(to: number, reason: string, now: number, shrink: boolean): void {
    const from = this.memory.size;
    this.memory = { ...this.memory, sinceChange: 0, shrunk: this.memory.shrunk || shrink };
    if (to === from) return;
    this.memory = { ...this.memory, size: to };
    // A pinned window keeps its size; the change is still recorded, as what the controller would do.
    this.record({ at: new Date(now).toISOString(), from, to, reason: this.memory.pinned === undefined ? reason : `${reason} (pinned at ${this.memory.pinned}: not applied)` });
  }

  private record(change: WindowChange): void {
    this.memory = { ...this.memory, lastChange: change, changes: [...this.memory.changes, change].slice(-CHANGES_KEPT) };
  }
}
