/**
 * The failure vocabulary in one table: every service code of FACTS.md with what it means, what a
 * caller should do, whether the same call can succeed later, whether the service provably did not
 * act on the request, and the connection failure it becomes. The aggregation client (retryable,
 * remedy), the activities (failure type, details), polling (remedy "poll") and the workflow (failure
 * type, resend or recover) all read it; nothing else spells these strings.
 *
 * Import-free plain data, so the workflow bundle can carry it.
 */

/** ApplicationFailure types a connection ends with (PascalCase nouns); also the types of activity failures. */
export const CONNECTION_FAILURE_TYPES = [
  'InvalidConnectionInput',
  'InvalidCredentials',
  'InvalidSecurityResponse',
  'ChallengeAbandoned',
  'EndUserActionRequired',
  'InstitutionUnavailable',
  'ServiceUnavailable',
  'SessionExpired',
  'PollingTimedOut',
  'ServiceRejected',
  'UnexpectedServiceAnswer',
  'UnexpectedResponse',
  'ResultTooLarge',
] as const;
export type ConnectionFailureType = (typeof CONNECTION_FAILURE_TYPES)[number];

const FAILURE_TYPES: ReadonlySet<string> = new Set(CONNECTION_FAILURE_TYPES);
export function isConnectionFailureType(type: unknown): type is ConnectionFailureType {
  return typeof type === 'string' && FAILURE_TYPES.has(type);
}

/** What a caller should do about a service code. */
export type Remedy =
  | 'poll' // still processing: ask again after the poll interval
  | 'retry' // transient: retry with backoff
  | 'reauthorize' // the session is gone: open a new one, then retry
  | 'end-user' // only the end user can fix it (credentials, MFA answer, account state)
  | 'fix-request' // our request is wrong: a bug, not a condition
  | 'give-up'; // the service refuses, nothing to do

/**
 * Whether a request reached the service and was acted on. It decides whether a non-idempotent call
 * (an Authorize with credentials or answers) may be sent again:
 * - "refused": provably not acted on (connection refused, rate limited, 503 before processing);
 * - "answered": the service gave its verdict (any service code other than the refusals);
 * - "unknown": it may have been acted on (reset or timeout after sending, 5xx, a garbled reply).
 */
export type Delivery = 'refused' | 'answered' | 'unknown';

export interface ServiceCodeInfo {
  readonly httpStatus: readonly number[];
  readonly meaning: string;
  readonly remedy: Remedy;
  /** Whether the same call, made again later, can succeed. */
  readonly retryable: boolean;
  readonly delivery: Delivery;
  /** The connection failure this code becomes when nothing more can be done. */
  readonly failure: ConnectionFailureType;
}

/** FACTS.md, "Codes". */
export const SERVICE_CODES = {
  OPERATION_PENDING: { httpStatus: [202], meaning: 'still processing', remedy: 'poll', retryable: true, delivery: 'answered', failure: 'PollingTimedOut' },
  OPERATION_DISPATCHED: {
    httpStatus: [202],
    meaning: 'a sync call ran long and moved to the background',
    remedy: 'poll',
    retryable: true,
    delivery: 'answered',
    failure: 'PollingTimedOut',
  },
  // The spec says a data request made while the session is loading "may return an error" without
  // naming it; our sandbox answers 400 SESSION_LOADING and the workflow waits it out on a timer.
  SESSION_LOADING: {
    httpStatus: [400],
    meaning: 'data requested while the session is still loading',
    remedy: 'poll',
    retryable: true,
    delivery: 'answered',
    failure: 'PollingTimedOut',
  },
  SESSION_NONEXISTENT: {
    httpStatus: [400],
    meaning: 'RequestId unknown or expired',
    remedy: 'reauthorize',
    retryable: false,
    delivery: 'answered',
    failure: 'SessionExpired',
  },
  SESSION_EXPIRED: {
    httpStatus: [400],
    meaning: 'idle or processing limit passed',
    remedy: 'reauthorize',
    retryable: false,
    delivery: 'answered',
    failure: 'SessionExpired',
  },
  CARD_IN_USE: { httpStatus: [400], meaning: 'card still processing', remedy: 'retry', retryable: true, delivery: 'answered', failure: 'ServiceUnavailable' },
  INVALID_LOGIN: {
    httpStatus: [400, 401],
    meaning: 'bad LoginId, LoginId of another customer, or bad credentials',
    remedy: 'give-up',
    retryable: false,
    delivery: 'answered',
    failure: 'InvalidCredentials',
  },
  INVALID_REQUEST: {
    httpStatus: [400, 401],
    meaning: 'missing or invalid fields, malformed JSON',
    remedy: 'fix-request',
    retryable: false,
    delivery: 'answered',
    failure: 'ServiceRejected',
  },
  ACCESS_DENIED: {
    httpStatus: [401],
    meaning: 'calling application not authenticated',
    remedy: 'give-up',
    retryable: false,
    delivery: 'answered',
    failure: 'ServiceRejected',
  },
  INVALID_USERNAME: {
    httpStatus: [401],
    meaning: 'institution rejected the username',
    remedy: 'end-user',
    retryable: false,
    delivery: 'answered',
    failure: 'InvalidCredentials',
  },
  INVALID_PASSWORD: {
    httpStatus: [401],
    meaning: 'institution rejected the password',
    remedy: 'end-user',
    retryable: false,
    delivery: 'answered',
    failure: 'InvalidCredentials',
  },
  INVALID_SECURITY_RESPONSE: {
    httpStatus: [401],
    meaning: 'wrong or incomplete MFA answer',
    remedy: 'end-user',
    retryable: false,
    delivery: 'answered',
    failure: 'InvalidSecurityResponse',
  },
  SECURITYRESPONSES_INCOMPLETE: {
    httpStatus: [401],
    meaning: 'not every prompt answered',
    remedy: 'fix-request',
    retryable: false,
    delivery: 'answered',
    failure: 'ServiceRejected',
  },
  QUESTION_NOT_FOUND: {
    httpStatus: [401],
    meaning: 'no stored answer for a prompt',
    remedy: 'end-user',
    retryable: false,
    delivery: 'answered',
    failure: 'EndUserActionRequired',
  },
  UNKNOWN_CHALLENGE_KEY: {
    httpStatus: [401],
    meaning: 'answer keyed by a prompt that was not asked',
    remedy: 'fix-request',
    retryable: false,
    delivery: 'answered',
    failure: 'ServiceRejected',
  },
  ALREADY_AUTHORIZED: {
    httpStatus: [401],
    meaning: 'session already open for this login',
    remedy: 'give-up',
    retryable: false,
    delivery: 'answered',
    failure: 'ServiceRejected',
  },
  CONCURRENT_SESSION: {
    httpStatus: [401],
    meaning: 'session already open for this login',
    remedy: 'give-up',
    retryable: false,
    delivery: 'answered',
    failure: 'ServiceRejected',
  },
  // The service could not reach the institution: nothing happened there, so sending again is safe.
  RETRY_LATER: {
    httpStatus: [401],
    meaning: 'could not reach the institution',
    remedy: 'retry',
    retryable: true,
    delivery: 'refused',
    failure: 'InstitutionUnavailable',
  },
  TOO_MANY_REQUESTS: {
    httpStatus: [401, 403, 429],
    meaning: 'rate limited',
    remedy: 'retry',
    retryable: true,
    delivery: 'refused',
    failure: 'ServiceUnavailable',
  },
  UNAUTHORIZED: {
    httpStatus: [401],
    meaning: 'institution refused; end user must act',
    remedy: 'end-user',
    retryable: false,
    delivery: 'answered',
    failure: 'EndUserActionRequired',
  },
  NEW_ACCOUNT: {
    httpStatus: [401],
    meaning: 'institution refused a new account; end user must act',
    remedy: 'end-user',
    retryable: false,
    delivery: 'answered',
    failure: 'EndUserActionRequired',
  },
  DISABLED_LOGIN: {
    httpStatus: [401],
    meaning: 'login disabled at the institution; end user must act',
    remedy: 'end-user',
    retryable: false,
    delivery: 'answered',
    failure: 'EndUserActionRequired',
  },
  DISABLED_INSTITUTION: {
    httpStatus: [405],
    meaning: 'institution unavailable',
    remedy: 'give-up',
    retryable: false,
    delivery: 'answered',
    failure: 'InstitutionUnavailable',
  },
  // An unexpected provider error may come after the provider acted: the outcome is unknown.
  AGGREGATION_ERROR: {
    httpStatus: [500],
    meaning: 'unexpected provider error',
    remedy: 'retry',
    retryable: true,
    delivery: 'unknown',
    failure: 'ServiceUnavailable',
  },
} as const satisfies Record<string, ServiceCodeInfo>;

export type ServiceCode = keyof typeof SERVICE_CODES;

export function isServiceCode(code: unknown): code is ServiceCode {
  return typeof code === 'string' && Object.hasOwn(SERVICE_CODES, code);
}

/** Statuses that mean "refused before processing" when no service code says otherwise. */
const REFUSED_STATUSES: ReadonlySet<number> = new Set([429, 503]);

/** A code's row; unknown codes: 429 and 503 were refused, other 5xx and 408 are transient with an unknown outcome. */
export function serviceCodeInfo(code: string | undefined, httpStatus: number): ServiceCodeInfo {
  if (isServiceCode(code)) return SERVICE_CODES[code];
  const refused = REFUSED_STATUSES.has(httpStatus);
  const transient = refused || httpStatus >= 500 || httpStatus === 408;
  return {
    httpStatus: [httpStatus],
    meaning: code ? `unrecognised service code ${code}` : `HTTP ${httpStatus} without a service code`,
    remedy: transient ? 'retry' : 'give-up',
    retryable: transient,
    delivery: refused ? 'refused' : transient ? 'unknown' : 'answered',
    failure: transient ? 'ServiceUnavailable' : 'ServiceRejected',
  };
}

/** Conditions without a service code, and the connection failure each becomes. */
export const CONDITION_FAILURES = {
  /** No answer: connection refused or reset, DNS, our own timeout. */
  unreachable: 'ServiceUnavailable',
  /** An answer the product cannot use: garbled JSON, or a field it acts on missing or malformed. */
  malformedAnswer: 'UnexpectedResponse',
  /** Our request was refused before it was sent (a bug or bad input). */
  invalidRequest: 'ServiceRejected',
} as const satisfies Record<string, ConnectionFailureType>;

/** Carried as an activity failure's first detail; plain data so it survives serialization. */
export interface ServiceFailureDetails {
  readonly operation: string;
  readonly httpStatus?: number | undefined;
  readonly serviceCode?: string | undefined;
  readonly requestId?: string | undefined;
  readonly remedy: Remedy;
  readonly delivery: Delivery;
  /**
   * How long the service asked to wait before calling again (its `Retry-After`, in ms, capped at an
   * hour) on a 429, a 503, or a code this table says was refused and is worth retrying
   * (TOO_MANY_REQUESTS, RETRY_LATER); absent when it named no (valid) wait.
   */
  readonly retryAfterMs?: number | undefined;
  /** The client's own timeout passed with no answer (ms): the request was sent, its outcome unknown. */
  readonly timedOutAfterMs?: number | undefined;
  /** The start of an answer the product could not use (UnexpectedResponse), for diagnosis; sealed with the failure's details. */
  readonly replyExcerpt?: string | undefined;
}
