/**
 * Completion callbacks' attempts (`aggregation_callback_deliveries{outcome}`), counted by the delivery
 * activity where each attempt's outcome is known: `delivered` (the receiver answered 2xx), `retrying`
 * (it did not, and the delivery tries again later), `given_up` (the last attempt of the day failed, or
 * a failure no retry can fix). Labels stay few: no tenant, no URL (docs/metrics.md).
 */
import type { MetricMeter } from '@temporalio/common';
import { addOne } from './add-one.js';

export type CallbackAttemptLabel = 'delivered' | 'retrying' | 'given_up';

export interface CallbackMetrics {
  attempted(outcome: CallbackAttemptLabel): void;
}

const CALLBACK_METRIC_NAME = 'aggregation_callback_deliveries';

export const NO_CALLBACK_METRICS: CallbackMetrics = Object.freeze({ attempted: () => undefined });

export function callbackMetrics(meter: MetricMeter): CallbackMetrics {
  const deliveries = meter.createCounter(
    CALLBACK_METRIC_NAME,
    '',
    'Completion callback attempts, by outcome: delivered (2xx), retrying (tried again later) or given_up.',
  );
  return { attempted: (outcome) => addOne(deliveries, { outcome }) };
}
