/**
 * A bounded map whose entries expire: unwrapped data keys are kept for a lifetime and at most so
 * many of them, the least recently used going first. An entry leaves at its expiry (a timer that
 * keeps no process alive), not when it is next asked for or pushed out: a key past its lifetime is
 * not kept in memory. The clock is given, so tests can move it.
 */
export class ExpiringCache<K, V> {
  // A Map iterates in insertion order: re-inserting on a hit keeps the least recently used first.
  private readonly entries = new Map<K, { readonly value: V; readonly expiresAt: number }>();
  /** The same keys in the order they expire (every entry lives lifetimeMs from its set). */
  private readonly expiries = new Map<K, number>();
  private sweepTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly maxEntries: number,
    private readonly lifetimeMs: number,
    private readonly now: () => number = Date.now,
  ) {
    if (!Number.isInteger(maxEntries) || maxEntries < 1) throw new RangeError(`ExpiringCache: maxEntries must be a whole number from 1, got ${maxEntries}`);
    if (!(lifetimeMs > 0)) throw new RangeError(`ExpiringCache: lifetimeMs must be above 0, got ${lifetimeMs}`);
  }

  get size(): number {
    return this.entries.size;
  }

  get(key: K): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    this.entries.delete(key);
    if (entry.expiresAt <= this.now()) {
      this.expiries.delete(key);
      return undefined;
    }
    this.entries.set(key, entry);
    return entry.value;
  }

  set(key: K, value: V): void {
    this.delete(key);
    const expiresAt = this.now() + this.lifetimeMs;
    this.entries.set(key, { value, expiresAt });
    this.expiries.set(key, expiresAt);
    for (const oldest of this.entries.keys()) {
      if (this.entries.size <= this.maxEntries) break;
      this.delete(oldest);
    }
    this.scheduleSweep();
  }

  delete(key: K): void {
    this.entries.delete(key);
    this.expiries.delete(key);
  }

  /** Removes every entry whose key matches (a revoked key version's data keys). */
  deleteWhere(matches: (key: K) => boolean): number {
    let deleted = 0;
    for (const key of [...this.entries.keys()]) {
      if (!matches(key)) continue;
      this.delete(key);
      deleted += 1;
    }
    return deleted;
  }

  /** Removes the expired entries now. */
  sweep(): void {
    const now = this.now();
    for (const [key, expiresAt] of this.expiries) {
      if (expiresAt > now) break;
      this.delete(key);
    }
  }

  private scheduleSweep(): void {
    if (this.sweepTimer !== undefined) return;
    const first = this.expiries.values().next();
    if (first.done) return;
    const waitMs = Math.min(2 ** 31 - 1, Math.max(0, first.value - this.now()));
    this.sweepTimer = setTimeout(() => {
      this.sweepTimer = undefined;
      this.sweep();
      this.scheduleSweep();
    }, waitMs);
    this.sweepTimer.unref();
  }
}
