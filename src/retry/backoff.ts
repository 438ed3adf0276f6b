/**
 * The processes' own waits between attempts (a client through a server's restart, a scheduler not
 * ready yet, a key provider away at start): doubling from a first pause to a ceiling, one formula.
 */

export interface Backoff {
  readonly firstMs: number;
  readonly maxMs: number;
}

/** The pause before attempt `attempt + 1` (attempt counts from 1): first, doubled each time, capped. */
export function backoffMs(attempt: number, { firstMs, maxMs }: Backoff): number {
  // The exponent is capped so a long outage never overflows to Infinity before the cap applies.
  return Math.min(maxMs, firstMs * 2 ** Math.min(Math.max(attempt, 1) - 1, 30));
}

/**
 * The same pause with half of it drawn at random, so thousands of callers refused together do not
 * come back together. `random` is Math.random unless a test fixes it.
 */
export function jitteredBackoffMs(attempt: number, backoff: Backoff, random: () => number = Math.random): number {
  const ceiling = backoffMs(attempt, backoff);
  return Math.round(ceiling / 2 + random() * (ceiling / 2));
}
