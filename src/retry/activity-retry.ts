/**
 * The workflows' activity retry policies, one per kind of call, so a schedule is chosen by what the
 * call does rather than copied beside it. Plain objects: the workflow bundle imports them.
 */
import type { RetryPolicy } from '@temporalio/common';

/**
 * A call to the aggregation service. Only what the failure table calls transient is retried (rate
 * limits, 5xx, resets); a `Retry-After` the service sent overrides the backoff (activities/failures.ts).
 */
export const SERVICE_CALL_RETRY = { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s' } as const satisfies RetryPolicy;

/** A local activity that only calls Temporal (visibility, describe, a start or a signal): quick, retried until the server answers. */
export const TEMPORAL_CALL_RETRY = { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s' } as const satisfies RetryPolicy;

/**
 * A step whose loss loses something (a window's slot, a callback never sent, a login forgotten early):
 * retried until it lands, with a longer ceiling because it waits out an outage rather than a blip.
 */
export const UNTIL_IT_LANDS_RETRY = { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '1m' } as const satisfies RetryPolicy;
