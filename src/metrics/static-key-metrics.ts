/**
 * A configured (static) key's uses on the worker's metrics endpoint and in its log (docs/metrics.md):
 * AES-GCM with random nonces is safe for 2^32 payloads under one key, and every process of a fleet
 * seals with the same configured key, so the fleet's count is the metric summed over its processes
 * and the key's life; each process warns in its log once it alone has sealed a quarter of the bound.
 */
import type { MetricMeter } from '@temporalio/common';
import { STATIC_KEY_SEAL_BOUND, type SealCounting } from '../codec/key-source.js';

export const STATIC_KEY_SEALS_METRIC = 'aggregation_static_key_seals';
/** A process alone at this many seals warns: several processes share the key, so well before the bound. */
export const STATIC_KEY_WARN_SEALS = STATIC_KEY_SEAL_BOUND / 4;

/** Counts `source`'s seals on `meter` by key (a tenant's keys too) and warns through `warn` once a key passes STATIC_KEY_WARN_SEALS; returns the unsubscribe. */
export function recordStaticKeyUse(meter: MetricMeter, source: SealCounting, warn: (message: string) => void, warnAt = STATIC_KEY_WARN_SEALS): () => void {
  const seals = meter.createCounter(
    STATIC_KEY_SEALS_METRIC,
    '',
    `Payloads sealed with the configured key (PAYLOAD_KEY_PROVIDER=static) by this process; AES-GCM with random nonces is safe for ${STATIC_KEY_SEAL_BOUND} under one key, summed over every process and the key's life.`,
  );
  const warned = new Set<string>();
  return source.onSeal((keyId, uses, sealedByThisProcess) => {
    seals.add(uses, { key_id: keyId });
    if (warned.has(keyId) || sealedByThisProcess < warnAt) return;
    warned.add(keyId);
    warn(
      `static key "${keyId}": this process alone has sealed ${sealedByThisProcess} payloads with it, and AES-GCM with random nonces is safe for ${STATIC_KEY_SEAL_BOUND} under one key across every process; rotate it (docs/operations.md, "When to rotate the static key") or move to a KMS, whose data keys are bounded`,
    );
  });
}
