/**
 * A window's public surface: how many connections a book's refresh (or a tenant's admission) keeps
 * in flight, why it has its size (WindowView, what an operator reads), its bounds and thresholds,
 * what it publishes to the other windows, the live path's reading it judges by, and the memory it
 * carries across continue-as-new. The rules that size it: src/workflows/window/window-controller.ts.
 * Import-free: the workflow bundle carries it.
 */

/** The window's bounds: it never holds fewer than `floor` children in flight (unless the book runs out) nor more than `ceiling`. */
export interface WindowBounds {
  readonly floor: number;
  readonly ceiling: number;
  /** Where a night's window starts. */
  readonly start: number;
}

export const DEFAULT_WINDOW_BOUNDS: WindowBounds = Object.freeze({ floor: 2, ceiling: 50, start: 4 });
export const WINDOW_LIMITS = { min: 1, max: 1_000 } as const;

/** Why the window has its size: the last change the refresh made to it. */
export interface WindowChange {
  readonly at: string;
  readonly from: number;
  readonly to: number;
  readonly reason: string;
}

export interface WindowView {
  /** Children the refresh keeps in flight now (the pinned size when pinned). */
  readonly size: number;
  readonly floor: number;
  readonly ceiling: number;
  /** Set by an operator (resize): the window holds it until unpinned. */
  readonly pinned?: number | undefined;
  readonly lastChange?: WindowChange | undefined;
  /** The best median time a child took this night (its time alone, as near as the refresh saw it). */
  readonly bestFinishMs?: number | undefined;
  /** The median of the most recent children. */
  readonly recentFinishMs?: number | undefined;
  /** The same for children's busy time (their time less their polls' fixed waits), what crowding lengthens. */
  readonly bestBusyMs?: number | undefined;
  readonly recentBusyMs?: number | undefined;
  /** With other books refreshing at once: this book's weighted share of the windows they all hold. */
  readonly share?: WindowShare | undefined;
  /** The live path as last read: the oldest live task waiting to start (ms) and how many waited; absent where the server gives no such count. */
  readonly liveWaitMs?: number | undefined;
  readonly liveWaiting?: number | undefined;
  /** When that reading was taken: the window judges by it only while fresh (a few fleet reads). */
  readonly liveReadAt?: string | undefined;
}

/** This refresh's fair part of the fleet: the windows of every running refresh, divided by weight. */
export interface WindowShare {
  /** Children this refresh would hold at its share of the fleet's windows. */
  readonly size: number;
  /** The tenant's fairness weight, and the sum of every running refresh's. */
  readonly weight: number;
  readonly fleetWeight: number;
  /** Every running refresh's window together (this one's included), and how many refreshes. */
  readonly fleetSize: number;
  readonly refreshes: number;
  /** The most crowded the other books' children find the fleet (their recent time over their best; 0 if none knows yet). */
  readonly crowding: number;
}

/** Memo key under which a running refresh publishes its window, for the others to share the fleet by weight. */
export const BOOK_REFRESH_MEMO = { window: 'window' } as const;

/**
 * What a running refresh publishes of itself: the children it holds room for (0 while paused), its
 * tenant's weight, and how crowded its children find the fleet (recent time over best, rounded;
 * absent until it knows) with the time until which that reading holds: a refresh whose children
 * stopped finishing (paused, draining, stuck on the service) says nothing of the fleet any more.
 */
export interface PublishedWindow {
  readonly size: number;
  readonly weight: number;
  readonly crowding?: number | undefined;
  /** Epoch ms after which `crowding` is stale and readers leave it out (absent in memos of older builds: fresh). */
  readonly crowdingUntil?: number | undefined;
}

/**
 * What live users' tasks wait for on the service queue, as the server last counted it (its task
 * queue statistics by priority key, for workflow and activity tasks), and how the reading worker saw
 * its own live tasks start: what a window judges the live path by (window-controller.ts).
 */
export interface LivePathReading {
  /** The oldest live task waiting to start, workflow or activity (ms); 0 when none waits. */
  readonly waitMs: number;
  /** Live tasks waiting to start. */
  readonly waiting: number;
  /**
   * Beside it: the 90th percentile of the waits of the live tasks the reading worker started in the
   * last seconds, above the shortest wait it has kept, and how many it started (absent: it started
   * none, or a build before counted none). A window gives way for it as for `waitMs`; it does not hold
   * growth back (window-controller.ts).
   */
  readonly workerWaitMs?: number | undefined;
  readonly workerSamples?: number | undefined;
}

/** The window controller's thresholds. */
export interface WindowControl {
  /** Grow while the recent median child takes at most this times the best median. */
  readonly growBelow: number;
  /** Shrink when it takes at least this times the best (or when starts take this times their best). */
  readonly shrinkAbove: number;
  /** Fraction kept on a shrink for slowness. */
  readonly shrinkFactor: number;
  /** Time added to both sides of a ratio, so that small absolute changes of fast children are not read as congestion. */
  readonly slackMs: number;
  /** How often, at most, the refresh reads whether the service throttled the tenant. */
  readonly throttleCheckMs: number;
  /** How often, at most, the refresh reads the other running refreshes' windows (to share the fleet by weight). */
  readonly fleetCheckMs: number;
  /**
   * How often, at most, the refresh asks Temporal about connections in flight for longer than this:
   * one ended without telling it (terminated by a forget or by hand, timed out) never will.
   */
  readonly silentCheckMs: number;
  /**
   * The live path: the window gives way (shrinks) when a live task has waited this long to start,
   * and grows only while live tasks wait at most `liveNearMs` (window-controller.ts). Without a reading
   * (a server that does not count by priority) the window judges its children's busy time instead.
   */
  readonly liveSlowMs: number;
  readonly liveNearMs: number;
}

export const DEFAULT_WINDOW_CONTROL: WindowControl = Object.freeze({
  growBelow: 1.3,
  shrinkAbove: 1.7,
  shrinkFactor: 0.7,
  slackMs: 250,
  throttleCheckMs: 5_000,
  fleetCheckMs: 5_000,
  silentCheckMs: 30_000,
  liveSlowMs: 150,
  liveNearMs: 40,
});

/** The window controller's memory (carried across pages). */
export interface WindowMemory {
  readonly size: number;
  readonly pinned?: number | undefined;
  readonly lastChange?: WindowChange | undefined;
  readonly changes: readonly WindowChange[];
  readonly bestFinishMs?: number | undefined;
  readonly bestStartMs?: number | undefined;
  readonly recentFinishMs: readonly number[];
  readonly recentStartMs: readonly number[];
  /** Children's busy times (absent in memories carried from before they were told). */
  readonly bestBusyMs?: number | undefined;
  readonly recentBusyMs?: readonly number[] | undefined;
  readonly sinceChange: number;
  /** Past slow start: the window has seen crowding (a shrink, or children beyond halfway to growBelow) and grows by an eighth. */
  readonly shrunk: boolean;
  /** When the window last shrank for slow children (workflow ms): the next such shrink waits a child's time. */
  readonly shrankAt?: number | undefined;
  readonly throttledUntil?: number | undefined;
  /** When a child last finished normally (workflow ms): the crowding it publishes is as fresh as that. */
  readonly lastTimedAt?: number | undefined;
  /** The tenant's fairness weight, and the other running refreshes' windows and weights as last read. */
  readonly weight?: number | undefined;
  readonly others?: { readonly size: number; readonly weight: number; readonly refreshes: number; readonly crowding: number } | undefined;
  /** The live path's last readings (oldest first) and when the last was taken (workflow ms); absent until read, or where the server gives no reading. */
  readonly live?:
    | {
        readonly at: number;
        readonly waitMs: readonly number[];
        readonly waiting: number;
        readonly workerWaitMs?: number;
        readonly workerSamples?: number;
      }
    | undefined;
}
