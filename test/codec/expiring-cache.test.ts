/**
 * The cache of unwrapped data keys (src/codec/envelope-keys.ts's unwrappedKeyCache, lru-cache
 * configured for it): a lifetime from the set, a bound with the least recently used going first,
 * and an expired key gone by its own timer, not only when next asked for.
 */
import assert from 'node:assert/strict';
import { createSecretKey, type KeyObject } from 'node:crypto';
import { describe, it } from 'node:test';
import { unwrappedKeyCache } from '../../src/codec/envelope-keys.js';

const key = (byte: number): KeyObject => createSecretKey(Buffer.alloc(32, byte));

describe('the cache of unwrapped data keys', () => {
  it('forgets an entry once its lifetime has passed', () => {
    let now = 1_000;
    const cache = unwrappedKeyCache(10, 500, () => now);
    const a = key(1);
    cache.set('a', a);
    now += 500;
    assert.equal(cache.get('a'), a, 'at its lifetime, still kept');
    now += 1;
    assert.equal(cache.get('a'), undefined, 'past it, gone');
    assert.equal(cache.size, 0, 'an expired entry met is dropped');
  });

  it('holds at most its bound, dropping the least recently used first', () => {
    const cache = unwrappedKeyCache(2, 60_000);
    const [a, b, c] = [key(1), key(2), key(3)];
    cache.set('a', a);
    cache.set('b', b);
    assert.equal(cache.get('a'), a, 'a is now the most recently used');
    cache.set('c', c);
    assert.equal(cache.size, 2);
    assert.equal(cache.get('b'), undefined);
    assert.deepEqual([cache.get('a'), cache.get('c')], [a, c]);
  });

  it('counts a lifetime from the set, and lets an expired key go by its own timer', async () => {
    let now = 1_000;
    const cache = unwrappedKeyCache(10, 500, () => now);
    cache.set('a', key(1));
    now += 400;
    assert.ok(cache.get('a'), 'read within its lifetime');
    now += 101;
    assert.equal(cache.get('a'), undefined, 'the read did not lengthen it');
    // The timer does it without a call: a real clock, a short lifetime.
    const timed = unwrappedKeyCache(10, 30);
    timed.set('k', key(2));
    await new Promise((resolve) => setTimeout(resolve, 120));
    assert.equal(timed.size, 0, 'gone by its own timer');
  });
});
