/**
 * The KMS's calls on the worker's metrics endpoint (docs/metrics.md): how many data keys and unwraps
 * it asked for and how each ended, and whether the provider works now. A KMS outage shows here while
 * the worker keeps running on cached keys: `aggregation_key_provider_available` 0 with calls ending
 * `unavailable`, and the health endpoint's `keyProvider.reason` says why.
 */
import type { MetricMeter } from '@temporalio/common';
import type { KeyProviderHealth } from '../codec/key-provider-health.js';

export const KEY_PROVIDER_METRIC_NAMES = {
  calls: 'aggregation_key_provider_calls',
  available: 'aggregation_key_provider_available',
} as const;

/** Records `health`'s calls on `meter` from now on; returns the unsubscribe. */
export function recordKeyProviderMetrics(meter: MetricMeter, health: KeyProviderHealth): () => void {
  const calls = meter.createCounter(
    KEY_PROVIDER_METRIC_NAMES.calls,
    '',
    'Calls to the KMS for envelope encryption (datakey: a new data key; decrypt: an unwrap), by how they ended (ok, unavailable, refused; revoked, destroyed, undecodable: a payload it can never open).',
  );
  const available = meter.createGauge(
    KEY_PROVIDER_METRIC_NAMES.available,
    'int',
    '',
    "1 while the KMS's last call succeeded (or none was made yet), 0 while it is unavailable or refuses this process.",
  );
  const tags = { key_id: health.keyId };
  available.set(health.status.state === 'ok' ? 1 : 0, tags);
  return health.onCall((call, outcome, status) => {
    calls.add(1, { ...tags, call, outcome });
    available.set(status.state === 'ok' ? 1 : 0, tags);
  });
}
