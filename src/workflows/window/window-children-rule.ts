/**
 * The window judged by its children's times, when no fresh reading of the live path judges it
 * (window-live-path.ts), and children stuck in flight: pure functions from the children's times and
 * the window's facts to what the controller applies (window-controller.ts's header gives the rules).
 */
import type { WindowControl, WindowMemory } from '../../contract/window/window-definitions.js';
import { median } from './window-numbers.js';
import { atShare, belowShare, farAboveShare } from './window-share.js';
import type { WindowFacts, WindowVerdict } from './window-verdict.js';

/** Why the window shrinks for slowness: the fleet's crowding, its children's busy time, or their starts. */
function slowness(memory: WindowMemory, own: number, worst: number, finishRatio: number, startRatio: number | undefined): string {
  if (own < worst) return `another book's children took ${worst.toFixed(2)}x their best time (this book's ${own.toFixed(2)}x): the fleet is crowded`;
  if (finishRatio >= (startRatio ?? 0))
    return `children took ${finishRatio.toFixed(2)}x their best time, busy ${Math.round(median(memory.recentBusyMs ?? []) ?? 0)} ms against ${Math.round(memory.bestBusyMs ?? 0)} ms (the median of their whole time ${Math.round(median(memory.recentFinishMs) ?? 0)} ms against ${Math.round(memory.bestFinishMs ?? 0)} ms)`;
  return `children waited ${(startRatio ?? 0).toFixed(2)}x their best time to start, counted in a child's time (median ${Math.round(median(memory.recentStartMs) ?? 0)} ms against ${Math.round(memory.bestStartMs ?? 0)} ms, a child ${Math.round(memory.bestFinishMs ?? 0)} ms)`;
}

/**
 * Children in flight (their ages) far longer than a child takes: the service or the fleet is stuck
 * (a service down for minutes), so the window shrinks now rather than when they end, at most once
 * per that long (`sinceChangeMs`: since its last change). Why; undefined: not stuck.
 */
export function stuckReason(bestFinishMs: number | undefined, agesMs: readonly number[], control: WindowControl, sinceChangeMs: number): string | undefined {
  const age = median(agesMs);
  if (bestFinishMs === undefined || age === undefined) return undefined;
  const ratio = (age + control.slackMs) / (bestFinishMs + control.slackMs);
  if (ratio < control.shrinkAbove) return undefined;
  if (sinceChangeMs < (bestFinishMs + control.slackMs) * control.shrinkAbove) return undefined;
  return `children in flight for ${ratio.toFixed(2)}x their best time (median ${Math.round(age)} ms against ${Math.round(bestFinishMs)} ms): the service or the fleet is not keeping up`;
}

/**
 * `finishRatio`: children's recent busy time over their best; `startRatio`: their starts' wait, as
 * it lengthens a child. Undefined ratios (too few children yet) decide nothing.
 */
export function childrenVerdict(
  facts: WindowFacts,
  control: WindowControl,
  memory: WindowMemory,
  finishRatio: number | undefined,
  startRatio: number | undefined,
): WindowVerdict {
  const { size, sinceChange, share } = facts;
  if (finishRatio === undefined) return undefined;
  const own = Math.max(finishRatio, startRatio ?? 0);
  // Crowding is the fleet's: the worst any book's children see.
  const worst = Math.max(own, share?.crowding ?? 0);
  if (worst >= control.shrinkAbove && facts.mayShrink) {
    // A book below its share leaves the shrinking to those above it.
    if (belowShare(share, size)) return undefined;
    return { kind: 'shrink', reason: slowness(memory, own, worst, finishRatio, startRatio) };
  }
  if (share !== undefined && farAboveShare(share, size) && worst > control.growBelow && facts.halfRound) {
    return { kind: 'giveWay', share, why: `children slow to ${worst.toFixed(2)}x their best time` };
  }
  if (facts.throttled || !facts.windowFull || worst > control.growBelow || sinceChange < size) return undefined;
  if (atShare(share, size)) return undefined;
  // Slow start ends at the first sign of crowding: children halfway to where growth stops.
  return {
    kind: 'grow',
    slowStartOver: worst > 1 + (control.growBelow - 1) / 2,
    reason: `children finish in ${finishRatio.toFixed(2)}x their best time and the service answers`,
  };
}
