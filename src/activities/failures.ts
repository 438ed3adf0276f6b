/**
 * Turns aggregation-client errors into Temporal ApplicationFailures: the failure type names the
 * service code (INVALID_PASSWORD → InvalidPassword), retryability comes from the one table in
 * aggregator/errors.ts, and the details carry what the workflow and operators need.
 */
import { ApplicationFailure } from '@temporalio/common';
import {
  AggregatorAbortedError,
  AggregatorError,
  AggregatorNetworkError,
  AggregatorRequestError,
  AggregatorResponseError,
  type Remedy,
} from '../aggregator/errors.js';

/** Carried as the failure's first detail; plain data so it survives serialization. */
export interface ServiceFailureDetails {
  readonly operation: string;
  readonly httpStatus?: number | undefined;
  readonly serviceCode?: string | undefined;
  readonly requestId?: string | undefined;
  readonly remedy: Remedy;
}

/** SERVICE_CODE → ServiceCode; the failure types workflows match on. */
export function failureTypeOf(serviceCode: string): string {
  return serviceCode
    .toLowerCase()
    .split('_')
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join('');
}

export function toActivityFailure(error: unknown): unknown {
  if (!(error instanceof AggregatorError) || error instanceof AggregatorAbortedError) return error;
  const details: ServiceFailureDetails = {
    operation: error.operation,
    httpStatus: error.httpStatus,
    serviceCode: error.serviceCode,
    requestId: error.requestId,
    remedy: error.remedy,
  };
  return ApplicationFailure.create({
    type: typeOf(error),
    message: error.message,
    // "poll" remedies (e.g. SESSION_LOADING) are waited out by the workflow on a durable timer,
    // not retried inside the activity.
    nonRetryable: !error.retryable || error.remedy === 'poll',
    details: [details],
    cause: error,
  });
}

function typeOf(error: AggregatorError): string {
  if (error.serviceCode) return failureTypeOf(error.serviceCode);
  if (error instanceof AggregatorNetworkError) return 'ServiceUnreachable';
  if (error instanceof AggregatorResponseError) return 'MalformedServiceAnswer';
  if (error instanceof AggregatorRequestError) return 'InvalidServiceRequest';
  return error.httpStatus ? `Http${error.httpStatus}` : 'AggregatorError';
}
