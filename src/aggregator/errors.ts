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
 * The answer's bytes are not JSON (a body cut short or garbled on the way: proxies and overloaded
 * hosts do this). What the service said is unknown, so a read may be made again (a few times: see
 * activities/failures.ts); an Authorize with credentials or answers is never resent over it.
 */
export class AggregatorResponseError extends AggregatorError {
  override readonly name: string = 'AggregatorResponseError';
  readonly problem: string;

  constructor(operation: string, httpStatus: number, problem: string, cause?: unknown) {
    super(`${operation} answered HTTP ${httpStatus} with a body that cannot be read: ${problem}`, {
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

/** How much of an unusable answer is kept for diagnosis (in the failure's details, sealed by the codec). */
export const REPLY_EXCERPT_CHARS = 4_096;

/**
 * The service answered with JSON the product cannot act on: a field it drives the connection by
 * (status, RequestId, LoginId, a challenge's prompt, the pending code) is missing or malformed, or
 * the endpoint answered something it never answers (a challenge from a data endpoint). The service
 * gave its answer, and the same call gets the same one: not retried, not resent, failed at once as
 * `UnexpectedResponse` with the operation, the status and the fields named. The body's start is
 * kept (`replyExcerpt`) for whoever diagnoses it; it never goes into the message.
 */
export class UnexpectedResponseError extends AggregatorResponseError {
  override readonly name = 'UnexpectedResponseError';
  override readonly retryable = false;
  override readonly remedy = 'give-up';
  override readonly delivery = 'answered';
  readonly replyExcerpt: string | undefined;

  constructor(operation: string, httpStatus: number, problem: string, replyText?: string, cause?: unknown) {
    super(operation, httpStatus, problem, cause);
    this.message = `${operation} answered HTTP ${httpStatus} with a body the product cannot act on: ${problem}`;
    this.replyExcerpt = replyText === undefined ? undefined : replyText.slice(0, REPLY_EXCERPT_CHARS);
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
  /** Set when our own timeout passed (ms): the request was sent and the service may still act on it. */
  readonly timedOutAfterMs: number | undefined;

  constructor(operation: string, reason: string, socketErrorCode: string | undefined, cause?: unknown, timedOutAfterMs?: number) {
    const delivery = socketErrorCode && NOT_SENT_CODES.has(socketErrorCode) ? 'refused' : 'unknown';
    super(`${operation} got no answer: ${reason}`, { operation, retryable: true, remedy: 'retry', delivery, cause });
    this.timedOutAfterMs = timedOutAfterMs;
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
