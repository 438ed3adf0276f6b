/**
 * Errors of the aggregation client, and the one table that says what each service code means and
 * whether calling again can help. Everything that decides "retry or not" reads this table.
 */

/** What a caller should do about a service code. */
export type Remedy =
  | 'poll' // still processing: ask again after the poll interval
  | 'retry' // transient: retry with backoff
  | 'reauthorize' // the session is gone: open a new one, then retry
  | 'end-user' // only the end user can fix it (credentials, MFA answer, account state)
  | 'fix-request' // our request is wrong: a bug, not a condition
  | 'give-up'; // the service refuses, nothing to do

export interface ServiceCodeInfo {
  readonly httpStatus: readonly number[];
  readonly meaning: string;
  readonly remedy: Remedy;
  /** Whether the same call, made again later, can succeed. */
  readonly retryable: boolean;
}

/** FACTS.md, "Codes". */
export const SERVICE_CODES = {
  OPERATION_PENDING: { httpStatus: [202], meaning: 'still processing', remedy: 'poll', retryable: true },
  OPERATION_DISPATCHED: { httpStatus: [202], meaning: 'a sync call ran long and moved to the background', remedy: 'poll', retryable: true },
  // The spec says a data request made while the session is loading "may return an error" without
  // naming it; our sandbox answers 400 SESSION_LOADING and the client treats it as "poll again".
  SESSION_LOADING: { httpStatus: [400], meaning: 'data requested while the session is still loading', remedy: 'poll', retryable: true },
  SESSION_NONEXISTENT: { httpStatus: [400], meaning: 'RequestId unknown or expired', remedy: 'reauthorize', retryable: false },
  SESSION_EXPIRED: { httpStatus: [400], meaning: 'idle or processing limit passed', remedy: 'reauthorize', retryable: false },
  CARD_IN_USE: { httpStatus: [400], meaning: 'card still processing', remedy: 'retry', retryable: true },
  INVALID_LOGIN: { httpStatus: [400, 401], meaning: 'bad LoginId, LoginId of another customer, or bad credentials', remedy: 'give-up', retryable: false },
  INVALID_REQUEST: { httpStatus: [400, 401], meaning: 'missing or invalid fields, malformed JSON', remedy: 'fix-request', retryable: false },
  ACCESS_DENIED: { httpStatus: [401], meaning: 'calling application not authenticated', remedy: 'give-up', retryable: false },
  INVALID_USERNAME: { httpStatus: [401], meaning: 'institution rejected the username', remedy: 'end-user', retryable: false },
  INVALID_PASSWORD: { httpStatus: [401], meaning: 'institution rejected the password', remedy: 'end-user', retryable: false },
  INVALID_SECURITY_RESPONSE: { httpStatus: [401], meaning: 'wrong or incomplete MFA answer', remedy: 'end-user', retryable: false },
  SECURITYRESPONSES_INCOMPLETE: { httpStatus: [401], meaning: 'not every prompt answered', remedy: 'fix-request', retryable: false },
  QUESTION_NOT_FOUND: { httpStatus: [401], meaning: 'no stored answer for a prompt', remedy: 'end-user', retryable: false },
  UNKNOWN_CHALLENGE_KEY: { httpStatus: [401], meaning: 'answer keyed by a prompt that was not asked', remedy: 'fix-request', retryable: false },
  ALREADY_AUTHORIZED: { httpStatus: [401], meaning: 'session already open for this login', remedy: 'give-up', retryable: false },
  CONCURRENT_SESSION: { httpStatus: [401], meaning: 'session already open for this login', remedy: 'give-up', retryable: false },
  RETRY_LATER: { httpStatus: [401], meaning: 'could not reach the institution', remedy: 'retry', retryable: true },
  TOO_MANY_REQUESTS: { httpStatus: [401, 403, 429], meaning: 'rate limited', remedy: 'retry', retryable: true },
  UNAUTHORIZED: { httpStatus: [401], meaning: 'institution refused; end user must act', remedy: 'end-user', retryable: false },
  NEW_ACCOUNT: { httpStatus: [401], meaning: 'institution refused a new account; end user must act', remedy: 'end-user', retryable: false },
  DISABLED_LOGIN: { httpStatus: [401], meaning: 'login disabled at the institution; end user must act', remedy: 'end-user', retryable: false },
  DISABLED_INSTITUTION: { httpStatus: [405], meaning: 'institution unavailable', remedy: 'give-up', retryable: false },
  AGGREGATION_ERROR: { httpStatus: [500], meaning: 'unexpected provider error', remedy: 'retry', retryable: true },
} as const satisfies Record<string, ServiceCodeInfo>;

export type ServiceCode = keyof typeof SERVICE_CODES;

export function isServiceCode(code: unknown): code is ServiceCode {
  return typeof code === 'string' && Object.hasOwn(SERVICE_CODES, code);
}

/** Unknown codes: 5xx and 429 are transient, everything else is not. */
export function serviceCodeInfo(code: string | undefined, httpStatus: number): ServiceCodeInfo {
  if (isServiceCode(code)) return SERVICE_CODES[code];
  const transient = httpStatus >= 500 || httpStatus === 429 || httpStatus === 408;
  return {
    httpStatus: [httpStatus],
    meaning: code ? `unrecognised service code ${code}` : `HTTP ${httpStatus} without a service code`,
    remedy: transient ? 'retry' : 'give-up',
    retryable: transient,
  };
}

export interface AggregatorErrorContext {
  /** The operation that failed, e.g. "Authorize" or "GetAccountsDetailAsync". */
  readonly operation: string;
  readonly httpStatus?: number | undefined;
  readonly serviceCode?: string | undefined;
  readonly requestId?: string | undefined;
  readonly retryable: boolean;
  readonly remedy: Remedy;
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

  constructor(message: string, context: AggregatorErrorContext) {
    super(message, context.cause === undefined ? undefined : { cause: context.cause });
    this.operation = context.operation;
    this.httpStatus = context.httpStatus;
    this.serviceCode = context.serviceCode;
    this.requestId = context.requestId;
    this.retryable = context.retryable;
    this.remedy = context.remedy;
  }
}

/** The service answered with an error status and (usually) a service code. */
export class AggregatorServiceError extends AggregatorError {
  override readonly name = 'AggregatorServiceError';

  constructor(operation: string, httpStatus: number, serviceCode: string | undefined, serviceMessage: string | undefined, requestId: string | undefined) {
    const info = serviceCodeInfo(serviceCode, httpStatus);
    super(`${operation} failed with HTTP ${httpStatus}${serviceCode ? ` ${serviceCode}` : ''}: ${serviceMessage || info.meaning}`, {
      operation,
      httpStatus,
      serviceCode,
      requestId,
      retryable: info.retryable,
      remedy: info.remedy,
    });
  }
}

/** The answer did not match the contract (malformed JSON or a schema violation). Transient: proxies and overloaded hosts garble bodies. */
export class AggregatorResponseError extends AggregatorError {
  override readonly name = 'AggregatorResponseError';
  readonly problem: string;

  constructor(operation: string, httpStatus: number, problem: string, cause?: unknown) {
    super(`${operation} answered HTTP ${httpStatus} with a body that breaks the contract: ${problem}`, {
      operation,
      httpStatus,
      retryable: true,
      remedy: 'retry',
      cause,
    });
    this.problem = problem;
  }
}

/** The request never got an answer: connection refused or reset, DNS, or our own timeout. */
export class AggregatorNetworkError extends AggregatorError {
  override readonly name = 'AggregatorNetworkError';

  constructor(operation: string, reason: string, cause?: unknown) {
    super(`${operation} got no answer: ${reason}`, { operation, retryable: true, remedy: 'retry', cause });
  }
}

/** The caller's input was refused before anything was sent. */
export class AggregatorRequestError extends AggregatorError {
  override readonly name = 'AggregatorRequestError';
  readonly problem: string;

  constructor(operation: string, problem: string) {
    super(`${operation} request is invalid: ${problem}`, { operation, retryable: false, remedy: 'fix-request' });
    this.problem = problem;
  }
}

/** The caller cancelled (AbortSignal); not an upstream condition. */
export class AggregatorAbortedError extends AggregatorError {
  override readonly name = 'AggregatorAbortedError';

  constructor(operation: string, cause?: unknown) {
    super(`${operation} was cancelled by the caller`, { operation, retryable: false, remedy: 'give-up', cause });
  }
}
