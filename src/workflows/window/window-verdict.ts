/**
 * What a window's rule decides and what it decides from: the rules (window-children-rule.ts,
 * window-live-path.ts) are pure functions of these facts, and the controller (window-controller.ts)
 * gathers the facts and applies the verdict, so the rules stand apart from the memory they change.
 */
import type { WindowShare } from '../../contract/window/window-definitions.js';

/** The window as a rule sees it at a child's end. */
export interface WindowFacts {
  readonly size: number;
  /** Completions since the last change. */
  readonly sinceChange: number;
  readonly share: WindowShare | undefined;
  /** A shrink for slowness may happen now (half a round, a child's time after the last, a throttle settled). */
  readonly mayShrink: boolean;
  /** Half a round of completions since the last change. */
  readonly halfRound: boolean;
  /** The service's wait for this tenant has not passed. */
  readonly throttled: boolean;
  readonly windowFull: boolean;
}

/** Shrink by the shrink factor, give way toward the share, or grow (`slowStartOver`: the first sign of crowding, seen now); undefined: hold. */
export type WindowVerdict =
  | { readonly kind: 'shrink'; readonly reason: string }
  | { readonly kind: 'giveWay'; readonly share: WindowShare; readonly why: string }
  | { readonly kind: 'grow'; readonly slowStartOver: boolean; readonly reason: string }
  | undefined;
