/**
 * What a Temporal error becomes in the pipeline client, written once for every client of it
 * (connections, books, schedules, logins): its own typed errors pass through, each client's known
 * case (a workflow or schedule not found, a failed workflow) becomes its typed error, a call
 * Temporal refused becomes TemporalUnavailableError (or TemporalAccessDeniedError); and how a
 * workflow ended, read from its failure.
 */
import { ApplicationFailure, CancelledFailure, ServiceError, TerminatedFailure, TimeoutFailure } from '@temporalio/client';
import { ConnectionClientError, TemporalUnavailableError } from './errors.js';

/** How Temporal ended a workflow that did not end with an ApplicationFailure of its own. */
export type EndedByTemporal = 'Cancelled' | 'Terminated' | 'TimedOut';

/**
 * How a workflow ended, from its failure's cause: the ApplicationFailure's type, or how Temporal
 * ended it; 'Unknown' for an untyped failure or anything else.
 */
export function endedHow(cause: unknown): string {
  if (cause instanceof ApplicationFailure) return cause.type ?? 'Unknown';
  return endedByTemporal(cause) ?? 'Unknown';
}

function endedByTemporal(cause: unknown): EndedByTemporal | undefined {
  if (cause instanceof CancelledFailure) return 'Cancelled';
  if (cause instanceof TerminatedFailure) return 'Terminated';
  if (cause instanceof TimeoutFailure) return 'TimedOut';
  return undefined;
}

/**
 * A Temporal call's error as the client's. `known` maps the caller's own cases (not found, a failed
 * workflow) and returns undefined for the rest.
 */
export function clientErrorOf(error: unknown, address: string | undefined, known?: (error: unknown) => Error | undefined): Error {
  if (error instanceof ConnectionClientError) return error;
  const mapped = known?.(error);
  if (mapped) return mapped;
  if (error instanceof ServiceError) return TemporalUnavailableError.refused(address, error);
  return error instanceof Error ? error : new Error(String(error));
}
