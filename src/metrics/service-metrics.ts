/**
 * The product's own counters of its calls to the aggregation service, recorded by the activities,
 * where each call's outcome is known, on the SDK runtime's meter: the core's Prometheus exporter
 * serves them on the worker's endpoint (WORKER_METRICS_PORT) beside the SDK's temporal_* metrics,
 * and the meter does nothing when that is off. The counters are created once, at worker start;
 * recording one is a call into the exporter. Nothing is recorded from workflow code (docs/metrics.md).
 *
 * Labels stay few: never a login, a request or a workflow; the tenant only on throttles, where it is
 * the point. The exporter adds no `_total` suffix and no unit to a counter's name.
 */
import type { MetricMeter } from '@temporalio/common';
import { addOne } from './add-one.js';

/**
 * How the service answered an answer to a challenge set (`aggregation_answers{outcome}`):
 * - `session_open`: accepted, the session is open;
 * - `next_challenge`: accepted, another challenge set follows;
 * - `rejected`: INVALID_SECURITY_RESPONSE, the connection presents the same challenges again;
 * - `pending`: a 202, which an Authorize may not answer (the connection fails UnexpectedServiceAnswer);
 * - `failed`: any other failure (its type and code in `aggregation_service_call_failures`).
 */
export type AnswerOutcome = 'session_open' | 'next_challenge' | 'rejected' | 'pending' | 'failed';

/** The pending operation a poll asks about (`aggregation_polls{operation}`). */
export type PollOperation = 'accounts_detail' | 'investments' | 'attributes';

/** `pending`: still 202 (or the session still loading); `ready`: the data; `failed`: any other failure. */
export type PollResult = 'pending' | 'ready' | 'failed';

/** A call to the service that failed (`aggregation_service_call_failures`). */
export interface FailedCall {
  /** The ApplicationFailure type the activity gives it (src/aggregator/failure-table.ts). */
  readonly failureType: string;
  /** The service's code; `other` for a code outside the failure table, `none` when the answer had none or there was no answer. */
  readonly serviceCode: string;
}

export interface ServiceMetrics {
  answered(outcome: AnswerOutcome): void;
  polled(operation: PollOperation, result: PollResult): void;
  failed(call: FailedCall): void;
  /** The service answered TOO_MANY_REQUESTS to a call of the tenant. */
  throttled(customerId: string): void;
}

export const SERVICE_METRIC_NAMES = {
  answers: 'aggregation_answers',
  polls: 'aggregation_polls',
  failures: 'aggregation_service_call_failures',
  throttles: 'aggregation_throttles',
} as const;

/** Records nothing: activities built without a meter (tests, tools). */
export const NO_SERVICE_METRICS: ServiceMetrics = Object.freeze({
  answered: () => undefined,
  polled: () => undefined,
  failed: () => undefined,
  throttled: () => undefined,
});

/** The counters on `meter`, which carries the worker's `namespace` and `task_queue` tags. */
export function serviceMetrics(meter: MetricMeter): ServiceMetrics {
  const answers = meter.createCounter(SERVICE_METRIC_NAMES.answers, '', 'Answers to challenge sets sent to the aggregation service, by how it answered.');
  const polls = meter.createCounter(SERVICE_METRIC_NAMES.polls, '', 'Polls of pending operations sent to the aggregation service, by operation and result.');
  const failures = meter.createCounter(
    SERVICE_METRIC_NAMES.failures,
    '',
    'Calls to the aggregation service that failed, by the failure type the activity gives them and the service code (none: no code or no answer).',
  );
  const throttles = meter.createCounter(SERVICE_METRIC_NAMES.throttles, '', 'TOO_MANY_REQUESTS answers of the aggregation service, by tenant (customer id).');
  return {
    answered: (outcome) => addOne(answers, { outcome }),
    polled: (operation, result) => addOne(polls, { operation, result }),
    failed: ({ failureType, serviceCode }) => addOne(failures, { failure_type: failureType, service_code: serviceCode }),
    throttled: (customerId) => addOne(throttles, { customer_id: customerId }),
  };
}
