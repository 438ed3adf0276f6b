/**
 * Turns aggregation-client errors into Temporal ApplicationFailures. The failure type is the
 * connection failure the condition becomes (INVALID_PASSWORD → InvalidCredentials), read from the
 * one table in aggregator/failure-table.ts, so the workflow passes it on without translating; the details
 * carry the service code, the remedy, whether the service may have acted on the request, and the
 * wait the service asked for (`retryAfterMs`, from Retry-After), which also sets the next retry's delay.
 */
import { ApplicationFailure } from '@temporalio/common';
import {
  AggregatorAbortedError,
  AggregatorError,
  AggregatorNetworkError,
  AggregatorRequestError,
  AggregatorResponseError,
  UnexpectedResponseError,
} from '../aggregator/errors.js';
import { CONDITION_FAILURES, isServiceCode, serviceCodeInfo, type ConnectionFailureType, type ServiceFailureDetails } from '../aggregator/failure-table.js';
import type { FailedCall } from '../metrics/service-metrics.js';

/**
 * Reads of an answer whose bytes were not JSON, at most: a body garbled on the way is read again,
 * but a service that keeps sending one fails the step by name instead of for the rest of the deadline.
 */
export const MAX_GARBLED_READS = 3;

export interface FailureContext {
  /** This call's attempt, when its attempts are reads of the same answer (not pollByRetry's polls). */
  readonly attempt?: number | undefined;
}

export function toActivityFailure(error: unknown, { attempt }: FailureContext = {}): unknown {
  if (!(error instanceof AggregatorError) || error instanceof AggregatorAbortedError) return error;
  const details: ServiceFailureDetails = {
    operation: error.operation,
    httpStatus: error.httpStatus,
    serviceCode: error.serviceCode,
    requestId: error.requestId,
    remedy: error.remedy,
    delivery: error.delivery,
    ...(error.retryAfterMs === undefined ? {} : { retryAfterMs: error.retryAfterMs }),
    ...(error instanceof AggregatorNetworkError && error.timedOutAfterMs !== undefined ? { timedOutAfterMs: error.timedOutAfterMs } : {}),
    ...(error instanceof UnexpectedResponseError && error.replyExcerpt !== undefined ? { replyExcerpt: error.replyExcerpt } : {}),
  };
  const garbledTooOften = error instanceof AggregatorResponseError && attempt !== undefined && attempt >= MAX_GARBLED_READS;
  // "poll" remedies (e.g. SESSION_LOADING) are waited out by the workflow on a durable timer,
  // not retried inside the activity.
  const nonRetryable = !error.retryable || error.remedy === 'poll' || garbledTooOften;
  return ApplicationFailure.create({
    type: failureTypeOf(error),
    message: garbledTooOften ? `${error.message} (${attempt} reads of it in a row; not read again)` : error.message,
    nonRetryable,
    details: [details],
    // The service named its wait (Retry-After): Temporal's next attempt comes after it instead of the
    // retry policy's backoff (not capped by its maximumInterval; still bounded by its attempts and the
    // activity's schedule-to-close timeout).
    ...(!nonRetryable && error.retryAfterMs ? { nextRetryDelay: error.retryAfterMs } : {}),
    cause: error,
  });
}

/**
 * A failed call as aggregation_service_call_failures counts it: the failure type toActivityFailure
 * gives it and the service's code (`other` outside the failure table, so the label stays bounded;
 * `none` without one). Undefined for what is not a failed call: a call its caller cancelled, or not
 * an error of the aggregation client.
 */
export function failedCallOf(error: unknown): FailedCall | undefined {
  if (!(error instanceof AggregatorError) || error instanceof AggregatorAbortedError) return undefined;
  const code = error.serviceCode;
  return { failureType: failureTypeOf(error), serviceCode: code === undefined ? 'none' : isServiceCode(code) ? code : 'other' };
}

function failureTypeOf(error: AggregatorError): ConnectionFailureType {
  if (error instanceof AggregatorNetworkError) return CONDITION_FAILURES.unreachable;
  if (error instanceof AggregatorResponseError) return CONDITION_FAILURES.malformedAnswer;
  if (error instanceof AggregatorRequestError) return CONDITION_FAILURES.invalidRequest;
  return serviceCodeInfo(error.serviceCode, error.httpStatus ?? 500).failure;
}

/**
 * The worker shut down while the call was at the service: retryable, and the service may have acted
 * on it (delivery unknown), so a non-idempotent Authorize is recovered rather than resent.
 */
export function workerShutdownFailure(error: AggregatorAbortedError): ApplicationFailure {
  const details: ServiceFailureDetails = { operation: error.operation, remedy: 'retry', delivery: 'unknown' };
  return ApplicationFailure.create({
    type: CONDITION_FAILURES.unreachable,
    message: `${error.operation} was interrupted: the worker shut down while the call was at the service`,
    nonRetryable: false,
    details: [details],
    cause: error,
  });
}

/**
 * The tenant is paused (the service said TOO_MANY_REQUESTS to one of its calls): this call was not
 * sent. It reads as the service's own refusal, with the rest of the pause as its Retry-After, so a
 * data request is retried after it and an Authorize is resent after it without counting as a send.
 */
export function tenantPausedFailure(customerId: string, pause: { readonly until: number; readonly reason: string }, now: number): ApplicationFailure {
  const retryAfterMs = Math.max(1, pause.until - now);
  const details: ServiceFailureDetails = {
    serviceCode: 'TOO_MANY_REQUESTS',
    remedy: 'retry',
    delivery: 'refused',
    retryAfterMs,
    operation: 'held back while the tenant is paused',
  };
  return ApplicationFailure.create({
    type: serviceCodeInfo('TOO_MANY_REQUESTS', 429).failure,
    message: `tenant ${customerId} is paused until ${new Date(pause.until).toISOString()} (${pause.reason}): not sent`,
    nonRetryable: false,
    details: [details],
    nextRetryDelay: retryAfterMs,
  });
}
