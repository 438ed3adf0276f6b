/**
 * How many connections a book's refresh keeps in flight, decided from what the refresh observes and
 * nothing else (no knowledge of the machine): a window that regulates itself, as TCP's does.
 *
 * - **Time alone.** The best median time a child took to finish this night (and the best median time
 *   from asking Temporal to start a child to seeing it started) is the fleet's time for a child when
 *   it is not crowded.
 * - **Busy time.** A child's time holds its polls' fixed waits (polls × the interval: 10 s a poll in
 *   production), which a busy fleet does not lengthen, so crowding is judged on its busy time, the
 *   rest (the child tells its polls' waits with its end); a child's whole time still says when
 *   children in flight are stuck.
 * - **Grow** while children's busy time is within `growBelow` times the best and the window is full: by half
 *   again per round until the first sign of crowding (slow start: until children are halfway to
 *   `growBelow`, or the first shrink), then by an eighth (at least one). A round is as many
 *   completions as the window holds, so each decision sees the last one's effect.
 * - **Shrink** when the recent median reaches `shrinkAbove` times the best (busy time or starting;
 *   a start's wait counted with a child's best time, as it lengthens a child): to `shrinkFactor` of
 *   the size, at most once per half round and once per child's time (the children that finish just
 *   after a shrink started before it: they say nothing of its effect).
 * - **Stuck:** when the children in flight have been out `shrinkAbove` times that long, shrink the
 *   same way without waiting for them to end (a service down for minutes).
 * - **Throttled:** when the service told the tenant to wait (TOO_MANY_REQUESTS), halve, once per
 *   throttle, and do not grow until it has passed; children slowed by waiting it out do not shrink
 *   the window again (for slowness or as stuck) until a child's time after it.
 * - **Shared by weight** with the other books refreshing at once: window-share.ts.
 * - **The live path first** where the server counts live tasks waiting: window-live-path.ts.
 * - An operator's pin holds the size; the controller still learns meanwhile.
 * The rules themselves are pure functions (window-children-rule.ts, window-live-path.ts) this class
 * applies. Deterministic and import-free: workflow code. Times are workflow time (ms).
 */
import type {
  LivePathReading,
  WindowBounds,
  WindowChange,
  WindowControl,
  WindowMemory,
  WindowShare,
  WindowView,
} from '../../contract/window/window-definitions.js';
import { childrenVerdict, stuckReason } from './window-children-rule.js';
import { liveVerdict } from './window-live-path.js';
import { bestOf, clamp, median, ratioOf } from './window-numbers.js';
import { fleetOthers, giveWay, shareOf } from './window-share.js';
import type { WindowFacts, WindowVerdict } from './window-verdict.js';

/**
 * Completions the recent median is taken over: the window's size, within these bounds. At least 16:
 * the best time is the lowest such median of the night, and the lowest of many small medians sits
 * far below a typical one (busy times vary by a third or more): medians of 4 read an uncrowded
 * fleet as 1.4-1.7x its best, of 16 as 1.2-1.3x (a simulation of lognormal times, 250 ms slack on
 * 600 ms); a half-size night with medians of 8 and tighter thresholds held A's window at 2 to 6
 * with children "1.7x" slower at a window of 2.
 */
export const RECENT_MIN = 16;
const RECENT_MAX = 32;
/** Window changes kept for the report. */
const CHANGES_KEPT = 50;
/**
 * Live-path readings kept: growth needs each of them near idle. The server counts a queue every few
 * seconds and a reading is the oldest task waiting at that moment, so one reading can miss a wait.
 */
const LIVE_READINGS = 2;
/** A reading older than this many fleet reads (at least LIVE_READ_MIN_MS each), or two stall checks, no longer judges the window. */
const LIVE_FRESH_READS = 3;
export const LIVE_READ_MIN_MS = 5_000;

/** Where a window in slow start heads, and the least time one of its rounds takes (WindowController.ramp). */
export interface WindowRamp {
  readonly to: number;
  readonly minRoundMs: number;
}

/** A window's next size in slow start: by half (at least one), a round at a time. */
export function slowStartGrowth(size: number): number {
  return size + Math.max(1, Math.ceil(size / 2));
}

/**
 * A live task waiting this long is stranded, not slowed: no worker takes it (its pinned build's
 * workers are gone, its type is run nowhere), and it would hold every window at its floor for as
 * long as it waits. A fleet where live work truly waits this long has shrunk on the way there, and
 * its children are stuck too (observeInFlight).
 */
export const LIVE_STRANDED_MS = 60_000;

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
      bestBusyMs: this.memory.bestBusyMs,
      recentBusyMs: median(this.memory.recentBusyMs ?? []),
      share: this.share,
      liveWaitMs: this.memory.live?.waitMs.at(-1),
      liveWaiting: this.memory.live?.waiting,
      liveReadAt: this.memory.live === undefined ? undefined : new Date(this.memory.live.at).toISOString(),
    };
  }

  /**
   * The live path as the server last counted it (live-path-activities.ts); `null`: this server gives
   * no such count, and the window judges by its children.
   */
  observeLivePath(reading: LivePathReading | null, now: number): void {
    if (reading === null) {
      if (this.memory.live !== undefined) this.memory = { ...this.memory, live: undefined };
      return;
    }
    const wait = reading.waitMs >= LIVE_STRANDED_MS ? 0 : Math.max(0, reading.waitMs);
    const waitMs = [...(this.memory.live?.waitMs ?? []), wait].slice(-LIVE_READINGS);
    const own = reading.workerSamples === undefined ? {} : { workerWaitMs: reading.workerWaitMs ?? 0, workerSamples: reading.workerSamples };
    this.memory = { ...this.memory, live: { at: now, waitMs, waiting: Math.max(0, reading.waiting), ...own } };
  }

  /** The live path's readings when fresh enough to judge by. */
  private freshLive(now: number): NonNullable<WindowMemory['live']> | undefined {
    const live = this.memory.live;
    if (live === undefined || live.waitMs.length === 0) return undefined;
    // While a page drains, the window looks around only at its stall checks.
    const freshMs = Math.max(LIVE_FRESH_READS * Math.max(this.control.fleetCheckMs, LIVE_READ_MIN_MS), 2 * (this.stallCheckMs ?? 0));
    return now - live.at <= freshMs ? live : undefined;
  }

  /**
   * The other running refreshes' windows and weights (read from their memos) and this tenant's
   * weight: from now on the window keeps to its share of the fleet. No others: no share. A refresh
   * that holds no room (paused or cancelling: it publishes a window of 0) is not sharing the fleet,
   * so its weight does not shrink the others' shares.
   */
  observeFleet(others: readonly { readonly size: number; readonly weight: number; readonly crowding?: number | undefined }[], weight: number): void {
    this.memory = { ...this.memory, ...fleetOthers(others, weight) };
  }

  /**
   * How much slower than their best this book's children finish or start (what it publishes for the
   * others); undefined until it knows, and while the live path judges it: its children's slowness is
   * then no crowding of the fleet's, and a window still judging by its children must not take it for one.
   */
  get crowding(): number | undefined {
    if (this.memory.live !== undefined) return undefined;
    const finishRatio = this.busyRatio();
    return finishRatio === undefined ? undefined : Math.max(finishRatio, this.startRatio() ?? 0);
  }

  /**
   * Until when the published crowding holds: two child times (or two reads of the fleet, whichever
   * is longer) after the last child that finished normally. A book whose children stopped finishing
   * (paused, draining a page's last ones, waiting on a service that is down) no longer reads the fleet.
   */
  get crowdingUntil(): number | undefined {
    const at = this.memory.lastTimedAt;
    if (at === undefined) return undefined;
    return at + 2 * Math.max(median(this.memory.recentFinishMs) ?? 0, this.control.fleetCheckMs);
  }

  /**
   * A start's wait is judged by what it adds to a child's whole time (the best finish, itself
   * counted from the ask to start): starts of a few tens of ms that take a few hundred on a busy
   * fleet are not yet congestion, starts that add as much again as a child takes are.
   */
  private startRatio(): number | undefined {
    return this.ratio(this.memory.recentStartMs, this.memory.bestStartMs, this.memory.bestFinishMs ?? 0);
  }

  /** This refresh's weighted share of every running refresh's window; undefined while it runs alone. */
  get share(): WindowShare | undefined {
    return shareOf(this.size, this.memory.weight ?? 1, this.memory.others);
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
  observeFinish(durationMs: number, timed: boolean, now: number, windowFull: boolean, busyMs = durationMs): void {
    if (!timed) return;
    const recentFinishMs = [...this.memory.recentFinishMs, Math.max(0, durationMs)].slice(-this.recentLength);
    const recentBusyMs = [...(this.memory.recentBusyMs ?? []), Math.max(0, Math.min(busyMs, durationMs))].slice(-this.recentLength);
    this.memory = {
      ...this.memory,
      recentFinishMs,
      bestFinishMs: this.best(this.memory.bestFinishMs, recentFinishMs),
      recentBusyMs,
      bestBusyMs: this.best(this.memory.bestBusyMs, recentBusyMs),
      sinceChange: this.memory.sinceChange + 1,
      lastTimedAt: now,
    };
    this.decide(now, windowFull);
  }

  /**
   * Children still in flight, by age: when most have been out far longer than a child takes, the
   * service or the fleet is stuck (a service down for minutes): shrink now rather than when they end,
   * at most once per that long.
   */
  observeInFlight(agesMs: readonly number[], now: number): void {
    const reason = this.throttleSettled(now) ? stuckReason(this.memory.bestFinishMs, agesMs, this.control, now - this.lastChangeAt) : undefined;
    if (reason !== undefined) this.change(clamp(Math.floor(this.memory.size * this.control.shrinkFactor), this.bounds), reason, now, true);
  }

  /**
   * Children that waited out the service's Retry-After are slow for that, not for a crowded fleet:
   * the throttle has already halved the window, so slowness says nothing new until a child's time
   * after the throttle passed.
   */
  private throttleSettled(now: number): boolean {
    const until = this.memory.throttledUntil;
    return until === undefined || now >= until + (median(this.memory.recentFinishMs) ?? 0);
  }

  /** How long to wait for room before looking at the children in flight again; undefined before any child finished. */
  get stallCheckMs(): number | undefined {
    const best = this.memory.bestFinishMs;
    return best === undefined ? undefined : Math.max(1_000, Math.round((best + this.control.slackMs) * this.control.shrinkAbove));
  }

  /** The service told the tenant to wait until `until` (epoch ms). */
  observeThrottle(until: number, reason: string, now: number): void {
    if (until <= now) return;
    const already = this.throttled(now);
    this.memory = { ...this.memory, throttledUntil: Math.max(until, this.memory.throttledUntil ?? 0) };
    if (already) return;
    this.change(
      clamp(Math.floor(this.memory.size / 2), this.bounds),
      `the service throttled the tenant until ${new Date(until).toISOString()} (${reason})`,
      now,
      true,
    );
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
    return bestOf(best, recent, this.recentLength);
  }

  /** Children's recent busy time over their best (a memory carried from before busy times were told: their whole time). */
  private busyRatio(): number | undefined {
    const busy = this.memory.recentBusyMs;
    if (busy !== undefined && busy.length >= Math.min(RECENT_MIN, this.recentLength)) return this.ratio(busy, this.memory.bestBusyMs);
    return this.ratio(this.memory.recentFinishMs, this.memory.bestFinishMs);
  }

  /** `base` is added to both sides with the slack: what else a child's time holds besides the value measured. */
  private ratio(recent: readonly number[], best: number | undefined, base = 0): number | undefined {
    return ratioOf(recent, best, Math.min(RECENT_MIN, this.recentLength), this.control.slackMs, base);
  }

  private decide(now: number, windowFull: boolean): void {
    const live = this.freshLive(now);
    const facts: WindowFacts = {
      size: this.memory.size,
      sinceChange: this.memory.sinceChange,
      share: this.share,
      mayShrink: this.mayShrink(now),
      halfRound: this.halfRound,
      throttled: this.throttled(now),
      windowFull,
    };
    const verdict =
      live === undefined
        ? childrenVerdict(facts, this.control, this.memory, this.busyRatio(), this.startRatio())
        : liveVerdict(facts, this.control, live, this.lastChangeAt, () => this.busyRatio());
    this.apply(verdict, now);
  }

  private apply(verdict: WindowVerdict, now: number): void {
    if (verdict?.kind === 'shrink') this.shrinkFor(verdict.reason, now);
    else if (verdict?.kind === 'giveWay') {
      const { to, reason } = giveWay(verdict.share, this.memory.size, verdict.why);
      this.change(clamp(to, this.bounds), reason, now, true);
    } else if (verdict?.kind === 'grow') this.grow(verdict.slowStartOver, verdict.reason, now);
  }

  /** When the window last changed (workflow ms). */
  private get lastChangeAt(): number {
    return this.memory.lastChange ? Date.parse(this.memory.lastChange.at) : Number.NEGATIVE_INFINITY;
  }

  /**
   * Where the window heads while in slow start (growing by half, a round at a time, while nothing
   * says crowded), for the estimated end; undefined once slow start is over (a shrink or a throttle's
   * halving ends it), while pinned, at its ceiling, or at or above its share of the fleet (it does
   * not grow there). Judged by the live path, it moves at most once a reading, one every fleet read.
   */
  ramp(now: number): WindowRamp | undefined {
    const { shrunk, pinned, size } = this.memory;
    const share = this.share;
    if (shrunk || pinned !== undefined || size >= this.bounds.ceiling || (share !== undefined && size >= share.size + 1)) return undefined;
    return { to: this.bounds.ceiling, minRoundMs: this.freshLive(now) === undefined ? 0 : this.control.fleetCheckMs };
  }

  /** The service's wait for this tenant has not passed. */
  private throttled(now: number): boolean {
    return this.memory.throttledUntil !== undefined && this.memory.throttledUntil > now;
  }

  /** Half a round of completions since the last change. */
  private get halfRound(): boolean {
    return this.memory.sinceChange >= Math.max(1, Math.ceil(this.memory.size / 2));
  }

  /**
   * A shrink for slowness waits half a round, a child's time after the last such shrink (children
   * that finish within it started before it and say nothing of it), and a throttle's end.
   */
  private mayShrink(now: number): boolean {
    const sinceShrinkMs = now - (this.memory.shrankAt ?? Number.NEGATIVE_INFINITY);
    return this.halfRound && sinceShrinkMs >= (median(this.memory.recentFinishMs) ?? 0) && this.throttleSettled(now);
  }

  private shrinkFor(reason: string, now: number): void {
    this.change(clamp(Math.floor(this.memory.size * this.control.shrinkFactor), this.bounds), reason, now, true);
    this.memory = { ...this.memory, shrankAt: now };
  }

  /** By half in slow start, by an eighth after it (at least one); `slowStartOver`: the first sign of crowding, seen now. */
  private grow(slowStartOver: boolean, reason: string, now: number): void {
    const ending = slowStartOver && !this.memory.shrunk;
    if (ending) this.memory = { ...this.memory, shrunk: true };
    const size = this.memory.size;
    const step = this.memory.shrunk ? Math.max(1, Math.ceil(size / 8)) : slowStartGrowth(size) - size;
    const share = this.share;
    this.change(
      clamp(size + step, this.bounds),
      `${reason}${ending ? ' (slow start over: from now on by an eighth)' : ''}${share === undefined ? '' : ` (share ${share.size.toFixed(1)} of ${share.fleetSize})`}`,
      now,
      false,
    );
  }

  private change(to: number, reason: string, now: number, shrink: boolean): void {
    const from = this.memory.size;
    this.memory = { ...this.memory, sinceChange: 0, shrunk: this.memory.shrunk || shrink };
    if (to === from) return;
    this.memory = { ...this.memory, size: to };
    // A pinned window keeps its size; the change is still recorded, as what the controller would do.
    this.record({
      at: new Date(now).toISOString(),
      from,
      to,
      reason: this.memory.pinned === undefined ? reason : `${reason} (pinned at ${this.memory.pinned}: not applied)`,
    });
  }

  private record(change: WindowChange): void {
    this.memory = { ...this.memory, lastChange: change, changes: [...this.memory.changes, change].slice(-CHANGES_KEPT) };
  }
}
