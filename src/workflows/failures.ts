/**
 * Reading activity failures inside the workflow. A regular activity's failure arrives as an
 * ActivityFailure wrapping the ApplicationFailure; a local activity's may arrive unwrapped. Both
 * shapes are read here, once.
 */
import { ActivityFailure, ApplicationFailure, TimeoutFailure } from '@temporalio/workflow';
import type { ServiceFailureDetails } from '../activities/failures.js';

export function applicationFailureOf(error: unknown): ApplicationFailure | undefined {
  const failure = error instanceof ActivityFailure ? error.cause : error;
  return failure instanceof ApplicationFailure ? failure : undefined;
}

export function timeoutFailureOf(error: unknown): TimeoutFailure | undefined {
  const failure = error instanceof ActivityFailure ? error.cause : error;
  return failure instanceof TimeoutFailure ? failure : undefined;
}

/** The activity failure's type (e.g. "SessionLoading", "InvalidSecurityResponse"). */
export function activityFailureType(error: unknown): string | undefined {
  return applicationFailureOf(error)?.type ?? undefined;
}

export function serviceDetailsOf(error: unknown): ServiceFailureDetails | undefined {
  return applicationFailureOf(error)?.details?.[0] as ServiceFailureDetails | undefined;
}
