/**
 * A window's share of the fleet, apart from the controller because it is the one rule about other
 * books (the rest is about this book's own children): pure functions of the windows read from the
 * other refreshes' memos.
 *
 * **Shared by weight.** With other books refreshing at once (their windows read from their memos),
 * a book's share is the fleet's windows together times its weight over all weights, and crowding
 * is the fleet's: each book publishes how much slower than their best its children finish, and
 * each acts on the worst of its own and the others' (a book that joined a crowded fleet learned a
 * crowded best and alone would not see it). The one above its share gives way: a book a child or
 * more below its share does not shrink for crowding, one a child or more above does not grow, and
 * one 15% above shrinks toward its share as soon as children slow past where growth stops. Equal books grow
 * and shrink together, so the fleet as a whole still finds its size. Alone, none of this applies.
 */
import type { WindowMemory, WindowShare } from '../../contract/window/window-definitions.js';

/** A book this far above its share shrinks toward it as soon as children slow (before the fleet is crowded enough to shrink everyone). */
const ABOVE_SHARE = 1.15;
/** On giving way to another book: the fraction kept (never below the share). */
const GIVE_WAY_FACTOR = 0.85;

type FleetOthers = NonNullable<WindowMemory['others']>;

/**
 * The other running refreshes as the memory keeps them, and this tenant's weight. A refresh that
 * holds no room (paused or cancelling: it publishes a window of 0) is not sharing the fleet, so its
 * weight does not shrink the others' shares.
 */
export function fleetOthers(
  others: readonly { readonly size: number; readonly weight: number; readonly crowding?: number | undefined }[],
  weight: number,
): { readonly weight: number; readonly others: FleetOthers } {
  const positive = (value: number | undefined) => (value !== undefined && Number.isFinite(value) && value > 0 ? value : 0);
  const counted = others.filter((other) => positive(other.weight) > 0 && positive(other.size) > 0);
  return {
    weight: positive(weight) || 1,
    others: {
      size: counted.reduce((sum, other) => sum + positive(other.size), 0),
      weight: counted.reduce((sum, other) => sum + other.weight, 0),
      refreshes: counted.length,
      crowding: counted.reduce((worst, other) => Math.max(worst, positive(other.crowding)), 0),
    },
  };
}

/** A window of `size` and `weight`'s weighted share of every running refresh's window; undefined while it runs alone. */
export function shareOf(size: number, weight: number, others: FleetOthers | undefined): WindowShare | undefined {
  if (others === undefined || others.refreshes === 0) return undefined;
  const fleetSize = size + others.size;
  const fleetWeight = weight + others.weight;
  return { size: (fleetSize * weight) / fleetWeight, weight, fleetWeight, fleetSize, refreshes: others.refreshes + 1, crowding: others.crowding };
}

/** A child or more below its share: it leaves shrinking (or giving way) to those above it. */
export function belowShare(share: WindowShare | undefined, size: number): boolean {
  return share !== undefined && size <= share.size - 1;
}

/** A child or more above its share: it does not grow. */
export function atShare(share: WindowShare | undefined, size: number): boolean {
  return share !== undefined && size >= share.size + 1;
}

/** So far above its share that it gives way as soon as children slow. */
export function farAboveShare(share: WindowShare, size: number): boolean {
  return size >= share.size * ABOVE_SHARE;
}

/** Where a window of `size` gives way to (before clamping), and why. */
export function giveWay(share: WindowShare, size: number, why: string): { readonly to: number; readonly reason: string } {
  return {
    to: Math.max(Math.ceil(share.size), Math.floor(size * GIVE_WAY_FACTOR)),
    reason: `giving way to ${share.refreshes - 1} other book${share.refreshes === 2 ? '' : 's'}: ${size} is above this book's share of ${share.size.toFixed(1)} (weight ${share.weight} of ${share.fleetWeight}, windows ${share.fleetSize} in all) while ${why}`,
  };
}
