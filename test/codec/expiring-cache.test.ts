import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ExpiringCache } from '../../src/codec/expiring-cache.js';

describe('the cache of unwrapped data keys', () => {
  it('forgets an entry once its lifetime has passed', () => {
    let now = 1_000;
    const cache = new ExpiringCache<string, number>(10, 500, () => now);
    cache.set('a', 1);
    now += 499;
    assert.equal(cache.get('a'), 1);
    now += 1;
    assert.equal(cache.get('a'), undefined);
    assert.equal(cache.size, 0, 'an expired entry met is dropped');
  });

  it('holds at most its bound, dropping the least recently used first', () => {
    const cache = new ExpiringCache<string, number>(2, 60_000);
    cache.set('a', 1);
    cache.set('b', 2);
    assert.equal(cache.get('a'), 1, 'a is now the most recently used');
    cache.set('c', 3);
    assert.equal(cache.size, 2);
    assert.equal(cache.get('b'), undefined);
    assert.deepEqual([cache.get('a'), cache.get('c')], [1, 3]);
  });

  it('lets every expired entry go at its expiry, not when it is next asked for or pushed out', async () => {
    let now = 1_000;
    const cache = new ExpiringCache<string, number>(10, 500, () => now);
    cache.set('a', 1);
    cache.set('b', 2);
    now += 100;
    cache.set('c', 3);
    assert.equal(cache.get('a'), 1, 'a used again: its lifetime still runs from its set');
    now += 400;
    cache.sweep();
    assert.equal(cache.size, 1, 'a and b left at their expiry, though nobody asked for them');
    assert.equal(cache.get('c'), 3);
    // The timer does it without a call: a real clock, a short lifetime.
    const timed = new ExpiringCache<string, number>(10, 30);
    timed.set('k', 1);
    await new Promise((resolve) => setTimeout(resolve, 120));
    assert.equal(timed.size, 0, 'gone by its own timer');
  });

  it('removes the entries a predicate names (a revoked key version)', () => {
    const cache = new ExpiringCache<string, number>(10, 60_000);
    for (const key of ['k\n1\na', 'k\n2\nb', 'other\n1\nc']) cache.set(key, 1);
    assert.equal(
      cache.deleteWhere((key) => key.startsWith('k\n1\n')),
      1,
    );
    assert.equal(cache.size, 2);
    assert.equal(cache.get('k\n1\na'), undefined);
  });

  it('refuses a bound or a lifetime it cannot keep', () => {
    assert.throws(() => new ExpiringCache(0, 1), /maxEntries must be a whole number from 1, got 0/);
    assert.throws(() => new ExpiringCache(1, 0), /lifetimeMs must be above 0, got 0/);
  });
});
