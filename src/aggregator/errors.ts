/**
 * Errors of the aggregation client. What each service code means, whether calling again can help and
 * whether the service acted on the request come from the one table in failure-table.ts.
 */
import { serviceCodeInfo, type Delivery, type Remedy, type ServiceFailureDetails } from './failure-table.js';


/** What an activity failure carries (`operation` is e.g. "Authorize" or "GetAccountsDetailAsync"), and more. */
export interface AggregatorErrorContext extends ServiceFailureDetails {
  readonly retryable: boolean;
  readonly cause?: unknown;
}

/** Base of every error the aggregation client throws. */
export class AggregatorError extends Error {
  override readonly name: string = 'AggregatorError';
  readonly operation: string;
  readonly httpStatus: number | undefined;
  readonly serviceCode: string | undefined;
  readonly requestId: string | undefined;
  readonly retryable: boolean;
  readonly remedy: Remedy;
  /** Whether the service may have acted on the request: decides if a non-idempotent call may be resent. */
  readonly delivery: Delivery;
  /** The wait the service asked for (`Retry-After`, ms, capped at an hour); undefined when it named none. */
  readonly retryAfterMs: number | undefined;

  constructor(message: string, context: AggregatorErrorContext) {
    super(message, context.cause === undefined ? undefined : { cause: context.cause });
    this.operation = context.operation;
    this.httpStatus = context.httpStatus;
    this.serviceCode = context.serviceCode;
    this.requestId = context.requestId;
    this.retryable = context.retryable;
    this.remedy = context.remedy;
    this.delivery = context.delivery;
    this.retryAfterMs = context.retryAfterMs;
  }
}

/** The service answered with an error status and (usually) a service code, and maybe a `Retry-After`. */
export class AggregatorServiceError extends AggregatorError {
  override readonly name = 'AggregatorServiceError';

  constructor(
    operation: string,
    httpStatus: number,
    serviceCode: string | undefined,
    serviceMessage: string | undefined,
    requestId: string | undefined,
    retryAfterMs?: number,
  ) {
    const info = serviceCodeInfo(serviceCode, httpStatus);
    super(`${operation} failed with HTTP ${httpStatus}${serviceCode ? ` ${serviceCode}` : ''}: ${serviceMessage || info.meaning}`, {
      operation,
      httpStatus,
      serviceCode,
      requestId,
      retryable: info.retryable,
      remedy: info.remedy,
      delivery: info.delivery,
      retryAfterMs,
    });
  }
}

/**
 * The answer did not match the contract (malformed JSON or a schema violation). Transient: proxies and
 * overloaded hosts garble bodies. The service answered, so it may have acted: the outcome is unknown.
 */
export class AggregatorResponseError extends AggregatorError {
  override readonly name = 'AggregatorResponseError';
  readonly problem: string;

  constructor(operation: string, httpStatus: number, problem: string, cause?: unknown) {
    super(`${operation} answered HTTP ${httpStatus} with a body that breaks the contract: ${problem}`, {
      operation,
      httpStatus,
      retryable: true,
      remedy: 'retry',
      delivery: 'unknown',
      cause,
    });
    this.problem = problem;
  }
}

/** Socket errors raised before a request could be sent: the service cannot have seen it. */
const NOT_SENT_CODES: ReadonlySet<string> = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

/**
 * The request never got an answer: connection refused or reset, DNS, or our own timeout. Only a
 * failure to connect proves the service never saw it; a reset or timeout may come after it acted.
 */
export class AggregatorNetworkError extends AggregatorError {
  override readonly name = 'AggregatorNetworkError';

  constructor(operation: string, reason: string, socketErrorCode: string | undefined, cause?: unknown) {
    const delivery = socketErrorCode && NOT_SENT_CODES.has(socketErrorCode) ? 'refused' : 'unknown';
    super(`${operation} got no answer: ${reason}`, { operation, retryable: true, remedy: 'retry', delivery, cause });
  }
}

/** The caller's input was refused before anything was sent. */
export class AggregatorRequestError extends AggregatorError {
  override readonly name = 'AggregatorRequestError';
  readonly problem: string;

  constructor(operation: string, problem: string) {
    super(`${operation} request is invalid: ${problem}`, { operation, retryable: false, remedy: 'fix-request', delivery: 'refused' });
    this.problem = problem;
  }
}

/** The caller cancelled (AbortSignal); not an upstream condition. */
export class AggregatorAbortedError extends AggregatorError {
  override readonly name = 'AggregatorAbortedError';

  constructor(operation: string, cause?: unknown) {
    super(`${operation} was cancelled by the caller`, { operation, retryable: false, remedy: 'give-up', delivery: 'unknown', cause });
  }
}
