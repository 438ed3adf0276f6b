/**
 * A bounded map whose entries expire: unwrapped data keys are kept for a lifetime and at most so
 * many of them, the least recently used going first. The clock is given, so tests can move it.
 */
export class ExpiringCache<K, V> {
  // A Map iterates in insertion order: re-inserting on a hit keeps the least recently used first.
  private readonly entries = new Map<K, { readonly value: V; readonly expiresAt: number }>();

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
    if (entry.expiresAt <= this.now()) return undefined;
    this.entries.set(key, entry);
    return entry.value;
  }

  set(key: K, value: V): void {
    this.entries.delete(key);
    this.entries.set(key, { value, expiresAt: this.now() + this.lifetimeMs });
    for (const oldest of this.entries.keys()) {
      if (this.entries.size <= this.maxEntries) break;
      this.entries.delete(oldest);
    }
  }
}
