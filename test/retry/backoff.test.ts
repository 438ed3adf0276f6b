import { test } from 'node:test';
import assert from 'node:assert/strict';
import { backoffMs, jitteredBackoffMs } from '../../src/retry/backoff.js';
import { SERVICE_CALL_RETRY, TEMPORAL_CALL_RETRY, UNTIL_IT_LANDS_RETRY } from '../../src/retry/activity-retry.js';

const PAUSE = { firstMs: 1_000, maxMs: 30_000 };

test('the pause doubles from the first to the ceiling and stays there', () => {
  assert.deepEqual(
    [1, 2, 3, 4, 5, 6, 7].map((attempt) => backoffMs(attempt, PAUSE)),
    [1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000],
  );
});

test('a very long outage neither overflows nor passes the ceiling', () => {
  assert.equal(backoffMs(10_000, PAUSE), 30_000);
  assert.equal(backoffMs(0, PAUSE), 1_000, 'an attempt below 1 waits the first pause');
});

test('jitter draws from the upper half of the pause', () => {
  assert.equal(
    jitteredBackoffMs(3, PAUSE, () => 0),
    2_000,
  );
  assert.equal(
    jitteredBackoffMs(3, PAUSE, () => 1),
    4_000,
  );
  assert.equal(
    jitteredBackoffMs(3, PAUSE, () => 0.5),
    3_000,
  );
});

test('each kind of activity call has its own policy, all doubling from one second', () => {
  for (const policy of [SERVICE_CALL_RETRY, TEMPORAL_CALL_RETRY, UNTIL_IT_LANDS_RETRY]) {
    assert.equal(policy.initialInterval, '1s');
    assert.equal(policy.backoffCoefficient, 2);
  }
  assert.equal(UNTIL_IT_LANDS_RETRY.maximumInterval, '1m', 'a step that must land waits out an outage');
  assert.equal(SERVICE_CALL_RETRY.maximumInterval, '30s');
});
