/**
 * The arithmetic of children's times the window's modules share (the controller and its rules): a
 * median, the best of recent medians, a recent median over the best, and a clamp to the window's
 * bounds. Pure and import-free but for types.
 */
import type { WindowBounds } from '../../contract/window/window-definitions.js';

export function median(values: readonly number[]): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

export function clamp(value: number, bounds: WindowBounds): number {
  return Math.min(bounds.ceiling, Math.max(bounds.floor, Math.round(value)));
}

/** The lowest median over a full set (`full`) of recent values: the time when not crowded. */
export function bestOf(best: number | undefined, recent: readonly number[], full: number): number | undefined {
  if (recent.length < full && best !== undefined) return best;
  const now = median(recent);
  if (now === undefined) return best;
  return best === undefined ? now : Math.min(best, now);
}

/**
 * The recent median over the best, once `minimum` values are in; `base` is added to both sides with
 * the slack: what else a child's time holds besides the value measured.
 */
export function ratioOf(recent: readonly number[], best: number | undefined, minimum: number, slackMs: number, base = 0): number | undefined {
  const current = median(recent);
  if (current === undefined || best === undefined || recent.length < minimum) return undefined;
  return (current + base + slackMs) / (best + base + slackMs);
}
