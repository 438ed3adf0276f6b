/**
 * The window judged by the live path instead of by its children, apart from the children's rule
 * (window-children-rule.ts) because it reads another signal: a pure function from the last readings
 * and the window's facts to a verdict the controller applies (window-controller.ts).
 *
 * **The live path first.** Where the Temporal server counts the service queue's waiting tasks by
 * priority (window-watch.ts reads it with the fleet), the window is judged by what live users
 * feel instead of by its children: it shrinks when a live task has waited `liveSlowMs` to start
 * (at the server's count, or at the 90th percentile of the live starts of the last seconds on the
 * worker it runs on),
 * and grows (a round at a time, as by children) only while the last readings are within `liveNearMs`.
 * Children's busy time then neither shrinks nor stops the window: it lengthens when unattended
 * work queues behind unattended work (one worker's workflow-task slots), long before the cores
 * are busy or a live user waits (measured: docs/fleet.md). Stuck children, a throttle and the
 * shares hold as by children. Without a reading, everything is judged by the children.
 */
import type { WindowControl, WindowMemory } from '../../contract/window/window-definitions.js';
import { atShare, belowShare, farAboveShare } from './window-share.js';
import type { WindowFacts, WindowVerdict } from './window-verdict.js';

/**
 * `live`: the fresh readings; `lastChangeAt`: the window's last change (workflow ms); `busy`: the
 * children's busy time over their best, told in the reason only.
 */
export function liveVerdict(
  facts: WindowFacts,
  control: WindowControl,
  live: NonNullable<WindowMemory['live']>,
  lastChangeAt: number,
  busy: () => number | undefined,
): WindowVerdict {
  const { size, sinceChange, share } = facts;
  const { liveSlowMs, liveNearMs } = control;
  // Each decision on a reading taken after the last change: one snapshot of the server moves the window once.
  if (live.at <= lastChangeAt) return undefined;
  const latest = live.waitMs.at(-1) ?? 0;
  const worst = Math.max(...live.waitMs);
  const starts =
    live.workerSamples === undefined
      ? ''
      : `; this worker's last ${live.workerSamples} live start(s): ${live.workerWaitMs ?? 0} ms above its shortest at the 90th percentile`;
  const waited = `live tasks waited ${latest} ms to start (${live.waiting} waiting at the server's last count${starts})`;
  // The worker's own starts only give way: they read a little above their shortest even with the
  // live path near idle, and held as a bar to growth they kept windows small without holding live
  // answers nearer idle (docs/benchmarks.md, 2026-11-30).
  const ownSlow = (live.workerWaitMs ?? 0) >= liveSlowMs;
  if ((latest >= liveSlowMs || ownSlow) && facts.mayShrink) {
    // A book below its share leaves the giving way to those above it.
    if (belowShare(share, size)) return undefined;
    return { kind: 'shrink', reason: `${waited}: the live path slowed (gives way at ${liveSlowMs} ms)` };
  }
  const near = worst <= liveNearMs;
  if (share !== undefined && farAboveShare(share, size) && !near && facts.halfRound) return { kind: 'giveWay', share, why: waited };
  if (facts.throttled || !facts.windowFull || !near || sinceChange < size) return undefined;
  if (atShare(share, size)) return undefined;
  const ratio = busy();
  // Slow start ends at the first live task seen waiting at all.
  return {
    kind: 'grow',
    slowStartOver: worst > 0,
    reason: `live tasks waited at most ${worst} ms to start (near idle: ${liveNearMs} ms) and the service answers${ratio === undefined ? '' : `; children busy ${ratio.toFixed(2)}x their best`}`,
  };
}
