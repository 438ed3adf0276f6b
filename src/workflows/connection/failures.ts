/**
 * Reading activity failures inside the workflow, and turning whatever ended a connection into its
 * one typed failure. A regular activity's failure arrives as an ActivityFailure wrapping the
 * ApplicationFailure; a local activity's may arrive unwrapped. Both shapes are read here, once.
 * Activity failures are already typed by the connection failure they become (aggregator/failure-table.ts).
 */
import { TimeoutType } from '@temporalio/common';
import { ActivityFailure, ApplicationFailure, TimeoutFailure } from '@temporalio/workflow';
import { isConnectionFailureType, type ConnectionFailureType, type Delivery, type ServiceFailureDetails } from '../../aggregator/failure-table.js';

export function applicationFailureOf(error: unknown): ApplicationFailure | undefined {
  const failure = error instanceof ActivityFailure ? error.cause : error;
  return failure instanceof ApplicationFailure ? failure : undefined;
}

export function timeoutFailureOf(error: unknown): TimeoutFailure | undefined {
  const failure = error instanceof ActivityFailure ? error.cause : error;
  return failure instanceof TimeoutFailure ? failure : undefined;
}

export function serviceDetailsOf(error: unknown): ServiceFailureDetails | undefined {
  const details = applicationFailureOf(error)?.details?.[0] as Partial<ServiceFailureDetails> | undefined;
  return details && typeof details.remedy === 'string' ? (details as ServiceFailureDetails) : undefined;
}

/** Whether the service may have acted on the failed call. A timed-out call (a worker that died mid-call) may have. */
export function deliveryOf(error: unknown): Delivery {
  return serviceDetailsOf(error)?.delivery ?? 'unknown';
}

/** Whether the same call can succeed later: a retryable service condition, or a call that timed out. */
export function isTransient(error: unknown): boolean {
  if (timeoutFailureOf(error)) return true;
  const failure = applicationFailureOf(error);
  return failure !== undefined && !failure.nonRetryable && serviceDetailsOf(error) !== undefined;
}

export function connectionFailure(type: ConnectionFailureType, message: string, details?: ServiceFailureDetails): ApplicationFailure {
  return ApplicationFailure.create({ type, message, nonRetryable: true, details: details ? [details] : [] });
}

/** Every way the connection can end badly becomes one typed, non-retryable failure. */
export function toConnectionFailure(error: unknown): ApplicationFailure {
  if (error instanceof ApplicationFailure && isConnectionFailureType(error.type)) return error;
  const timeout = timeoutFailureOf(error);
  if (timeout) {
    // Local activities of a pending operation are bounded by its deadline (schedule-to-close).
    return timeout.timeoutType === TimeoutType.SCHEDULE_TO_CLOSE
      ? connectionFailure('PollingTimedOut', `an upstream call did not succeed before the pending operation's deadline: ${timeout.message}`)
      : connectionFailure('ServiceUnavailable', `an upstream call did not finish: ${timeout.message}`);
  }
  const failure = applicationFailureOf(error);
  if (failure) {
    const type = isConnectionFailureType(failure.type) ? failure.type : 'ServiceRejected';
    return connectionFailure(type, failure.message, serviceDetailsOf(error));
  }
  return connectionFailure('ServiceRejected', error instanceof Error ? error.message : String(error));
}
