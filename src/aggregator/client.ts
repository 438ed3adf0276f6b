/**
 * Typed HTTP client of the aggregation service, one function per endpoint, over ky.
 *
 * Every call answers a discriminated result (ready | pending | challenge) or throws an
 * AggregatorError subclass. A data answer is read by data-reader.ts: what the product acts on
 * strictly (else UnexpectedResponseError, at once), the records it passes on tolerantly (a record the
 * view cannot read is kept as sent, with a DataWarning on the result). It never retries: Temporal's retry policy is the one retry layer,
 * and the table in errors.ts says what is worth retrying. A refusal that names a wait (`Retry-After`
 * on a 429, a 503, a TOO_MANY_REQUESTS or a RETRY_LATER) carries it as the error's `retryAfterMs`.
 */
import ky, { type KyInstance } from 'ky';
import type { z } from 'zod';
import {
  AccountsDetailRequest,
  AccountsDetailResponse,
  AccountsSummaryResponse,
  AttributePackageOperation,
  AttributesRequest,
  type AttributesResponse,
  AuthorizeRequest,
  AuthorizeResponse,
  DeleteCardResponse,
  ErrorResponse,
  InvestmentsResponse,
  PendingResponse,
  StatementsRequest,
  StatementsResponse,
  Uuid,
  describeIssues,
  isPlainObject,
  readServiceCode,
  type AccountsDetailOptions,
  type NumberOfStatements,
  type PendingCode,
  type SecurityChallenge,
  type SecurityResponses,
} from './schemas.js';
import {
  AggregatorAbortedError,
  AggregatorNetworkError,
  AggregatorRequestError,
  AggregatorResponseError,
  AggregatorServiceError,
  UnexpectedResponseError,
} from './errors.js';
import {
  AccountsEnvelope,
  attributesReader,
  DeleteCardEnvelope,
  InvestmentsEnvelope,
  readAnswer,
  StatementsEnvelope,
  type DataReader,
  type DataWarning,
} from './data-reader.js';
import { serviceCodeInfo } from './failure-table.js';
import { serverOf, withHttpSpan, type HttpSpanRecorder } from './http-span.js';
import { retryAfterOf } from './retry-after.js';

export interface AggregatorClientOptions {
  /** Service base address, e.g. `https://sandbox.example.com` (the `/v3/...` paths are appended). */
  readonly baseUrl: string;
  /** The tenant path segment of every call. */
  readonly customerId: string;
  /** The calling application's credential, sent as one header (name and value configurable). */
  readonly auth?: { readonly header: string; readonly value: string } | undefined;
  /** Per-request timeout of the data calls; default 60 s. */
  readonly timeoutMs?: number | undefined;
  /**
   * Per-request timeout of an Authorize; default 240 s. An Authorize with credentials or answers is
   * never resent, so the client waits for the service's own outcome: the service runs a sync call
   * ~210 s before it dispatches it (FACTS.md), and an institution may take over a minute to accept an answer.
   */
  readonly authorizeTimeoutMs?: number | undefined;
  /** For tests that need to observe or alter the transport. */
  readonly fetch?: typeof fetch | undefined;
}

export interface CallOptions {
  readonly signal?: AbortSignal | undefined;
  readonly timeoutMs?: number | undefined;
  /** Extra headers for this call (the sandbox reads `x-sandbox-fault`). */
  readonly headers?: Record<string, string> | undefined;
}

export interface Ready<T> {
  readonly kind: 'ready';
  readonly requestId: string;
  readonly data: T;
  /** Fields of passed-through data the view could not read (their records kept as sent); empty mostly. */
  readonly warnings: readonly DataWarning[];
}
export interface Pending {
  readonly kind: 'pending';
  readonly requestId: string;
  readonly code: PendingCode;
  readonly message: string;
}
export interface Challenge {
  readonly kind: 'challenge';
  readonly requestId: string;
  readonly challenges: SecurityChallenge[];
}

export type DataResult<T> = Ready<T> | Pending;
export type AuthorizeResult = Ready<AuthorizeResponse> | Challenge | Pending;

export interface LiveAuthorize {
  readonly institution: string;
  readonly username: string;
  readonly password: string;
  readonly save?: boolean | undefined;
}

export type AccountsDetail = z.infer<typeof AccountsDetailResponse>;
export type AccountsSummary = z.infer<typeof AccountsSummaryResponse>;
export type Investments = z.infer<typeof InvestmentsResponse>;
export type Attributes = z.infer<typeof AttributesResponse>;
export type Statements = z.infer<typeof StatementsResponse>;
export type DeleteCard = z.infer<typeof DeleteCardResponse>;

export type AggregatorClient = ReturnType<typeof createAggregatorClient>;

const DEFAULT_TIMEOUT_MS = 60_000;
export const DEFAULT_AUTHORIZE_TIMEOUT_MS = 240_000;

/** An Authorize's answer is all acted on (the session, the challenges): its envelope is the whole schema. */
const AUTHORIZE_READER: DataReader<AuthorizeResponse> = { envelope: AuthorizeResponse, view: AuthorizeResponse };
const ACCOUNTS_DETAIL_READER: DataReader<AccountsDetail> = { envelope: AccountsEnvelope, view: AccountsDetailResponse };
const ACCOUNTS_SUMMARY_READER: DataReader<AccountsSummary> = { envelope: AccountsEnvelope, view: AccountsSummaryResponse };
const INVESTMENTS_READER: DataReader<Investments> = { envelope: InvestmentsEnvelope, view: InvestmentsResponse };
const STATEMENTS_READER: DataReader<Statements> = { envelope: StatementsEnvelope, view: StatementsResponse };
const ATTRIBUTES_READER: DataReader<Attributes> = attributesReader();
const DELETE_CARD_READER: DataReader<DeleteCard> = { envelope: DeleteCardEnvelope, view: DeleteCardResponse };

interface Exchange<T> {
  readonly operation: string;
  readonly method: 'get' | 'post' | 'delete';
  readonly path: string;
  /** The path with its variables as `{name}`: what a trace may show. */
  readonly route: string;
  readonly body?: unknown;
  readonly ready: DataReader<T>;
  readonly options: CallOptions | undefined;
  /** The call's own default timeout (Authorize waits longer than a data call). */
  readonly defaultTimeoutMs?: number | undefined;
}

export function createAggregatorClient(options: AggregatorClientOptions) {
  const http: KyInstance = ky.create({
    prefix: options.baseUrl.replace(/\/+$/, ''),
    retry: 0,
    throwHttpErrors: false,
    timeout: false, // our own timer, so the error can say which limit passed
    headers: options.auth ? { [options.auth.header]: options.auth.value } : {},
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  const tenant = `v3/${encodeURIComponent(options.customerId)}`;
  const banking = `${tenant}/BankingServices`;
  const tenantRoute = '/v3/{customerId}';
  const bankingRoute = `${tenantRoute}/BankingServices`;
  const server = serverOf(options.baseUrl);

  function exchange<T>(call: Exchange<T>): Promise<Ready<T> | Pending | Challenge> {
    return withHttpSpan({ operation: call.operation, method: call.method, route: call.route, server }, (record) => exchangeIn(call, record));
  }

  async function exchangeIn<T>(call: Exchange<T>, record: HttpSpanRecorder): Promise<Ready<T> | Pending | Challenge> {
    const timeoutMs = call.options?.timeoutMs ?? call.defaultTimeoutMs ?? options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    // One controller per request, its timer cleared as soon as the answer is read: cheaper than
    // AbortSignal.timeout + AbortSignal.any, which keep a timer alive for the whole timeout.
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, timeoutMs);
    const callerSignal = call.options?.signal;
    const forwardAbort = () => controller.abort(callerSignal?.reason);
    if (callerSignal?.aborted) forwardAbort();
    else callerSignal?.addEventListener('abort', forwardAbort, { once: true });
    let status: number;
    let text: string;
    let headers: Headers;
    try {
      const response = await http(call.path, {
        method: call.method,
        signal: controller.signal,
        ...(call.body === undefined ? {} : { json: call.body }),
        ...(call.options?.headers ? { headers: call.options.headers } : {}),
      });
      status = response.status;
      headers = response.headers;
      record.status(status);
      text = await response.text();
    } catch (error) {
      if (callerSignal?.aborted) throw new AggregatorAbortedError(call.operation, error);
      if (timedOut) throw new AggregatorNetworkError(call.operation, `no answer within ${timeoutMs} ms`, undefined, error, timeoutMs);
      const socketError = socketErrorOf(error);
      throw new AggregatorNetworkError(call.operation, describeNetworkFailure(error, socketError), socketError?.code, error);
    } finally {
      clearTimeout(timer);
      callerSignal?.removeEventListener('abort', forwardAbort);
    }

    let body: unknown;
    try {
      body = text === '' ? undefined : JSON.parse(text);
    } catch (error) {
      if (status >= 400)
        throw new AggregatorServiceError(
          call.operation,
          status,
          undefined,
          `non-JSON body: ${text.slice(0, 120)}`,
          undefined,
          waitAskedFor(status, undefined, headers),
        );
      throw new AggregatorResponseError(call.operation, status, `malformed JSON (${text.length} bytes)`, error);
    }

    if (status >= 400 || (status !== 200 && status !== 202 && status !== 203)) {
      const parsed = ErrorResponse.safeParse(body);
      const code = readServiceCode(body);
      const message = parsed.success ? (parsed.data.Message ?? undefined) : undefined;
      const requestId = parsed.success ? (parsed.data.RequestId ?? undefined) : undefined;
      throw new AggregatorServiceError(call.operation, status, code, message, requestId, waitAskedFor(status, code, headers));
    }
    if (status === 202) {
      const pending = parseOrThrow(PendingResponse, body, call.operation, status, text);
      record.pending(pending.ServiceCode);
      return { kind: 'pending', requestId: pending.RequestId, code: pending.ServiceCode, message: pending.Message ?? '' };
    }
    if (status === 203) {
      const challenge = parseOrThrow(AuthorizeResponse, body, call.operation, status, text);
      return { kind: 'challenge', requestId: challenge.RequestId, challenges: challenge.SecurityChallenges ?? [] };
    }
    if (!isPlainObject(body))
      throw new UnexpectedResponseError(call.operation, status, body === undefined ? 'an empty body' : 'the body is not a JSON object', text);
    const reading = readAnswer(call.ready, body, call.operation);
    if (!reading.usable) throw new UnexpectedResponseError(call.operation, status, reading.problems, text);
    return { kind: 'ready', requestId: requestIdOf(reading.data), data: reading.data, warnings: reading.warnings };
  }

  /** Data endpoints never challenge; a 203 there breaks the contract. */
  async function data<T>(call: Exchange<T>): Promise<DataResult<T>> {
    const result = await exchange(call);
    if (result.kind === 'challenge') throw new UnexpectedResponseError(call.operation, 203, 'a data endpoint answered with a challenge');
    return result;
  }

  function validated<T>(schema: z.ZodType<T>, value: unknown, operation: string): T {
    const parsed = schema.safeParse(value);
    if (!parsed.success) throw new AggregatorRequestError(operation, describeIssues(parsed.error));
    return parsed.data;
  }

  function id(value: string, field: string, operation: string): string {
    return encodeURIComponent(validated(Uuid, value, `${operation} ${field}`));
  }

  return {
    /** POST /v3/{customerId}/BankingServices/Authorize, any of its four modes. */
    async authorize(request: AuthorizeRequest, call?: CallOptions): Promise<AuthorizeResult> {
      const body = validated(AuthorizeRequest, request, 'Authorize');
      return exchange({
        operation: 'Authorize',
        method: 'post',
        path: `${banking}/Authorize`,
        route: `${bankingRoute}/Authorize`,
        body,
        ready: AUTHORIZE_READER,
        options: call,
        defaultTimeoutMs: options.authorizeTimeoutMs ?? DEFAULT_AUTHORIZE_TIMEOUT_MS,
      });
    },

    /** Live mode: the end user's credentials; may answer with challenges. */
    authorizeLive(login: LiveAuthorize, call?: CallOptions): Promise<AuthorizeResult> {
      return this.authorize(
        { Institution: login.institution, Username: login.username, Password: login.password, MostRecentCached: false, Save: login.save ?? false },
        call,
      );
    },

    /** Cached mode: a saved LoginId, already processed data. */
    authorizeCached(loginId: string, call?: CallOptions): Promise<AuthorizeResult> {
      return this.authorize({ LoginId: loginId, MostRecentCached: true }, call);
    },

    /** Live refresh of a saved login (trusted-device flow); may answer with challenges. */
    authorizeRefresh(loginId: string, call?: CallOptions): Promise<AuthorizeResult> {
      return this.authorize({ LoginId: loginId, MostRecentCached: false, Save: true }, call);
    },

    /** Answers the pending challenge(s) of a session; every prompt at once. */
    answerChallenge(requestId: string, responses: SecurityResponses, call?: CallOptions): Promise<AuthorizeResult> {
      return this.authorize({ RequestId: requestId, SecurityResponses: responses }, call);
    },

    /** POST .../GetAccountsDetail; usually 202 first, then poll getAccountsDetailAsync. */
    async getAccountsDetail(requestId: string, detailOptions: AccountsDetailOptions = {}, call?: CallOptions): Promise<DataResult<AccountsDetail>> {
      const body = validated(AccountsDetailRequest, { ...detailOptions, RequestId: requestId }, 'GetAccountsDetail');
      return data({
        operation: 'GetAccountsDetail',
        method: 'post',
        path: `${banking}/GetAccountsDetail`,
        route: `${bankingRoute}/GetAccountsDetail`,
        body,
        ready: ACCOUNTS_DETAIL_READER,
        options: call,
      });
    },

    /** GET .../GetAccountsDetailAsync/{requestId}: the poll of a pending accounts detail. */
    async getAccountsDetailAsync(requestId: string, call?: CallOptions): Promise<DataResult<AccountsDetail>> {
      const path = `${banking}/GetAccountsDetailAsync/${id(requestId, 'RequestId', 'GetAccountsDetailAsync')}`;
      return data({
        operation: 'GetAccountsDetailAsync',
        method: 'get',
        path,
        route: `${bankingRoute}/GetAccountsDetailAsync/{requestId}`,
        ready: ACCOUNTS_DETAIL_READER,
        options: call,
      });
    },

    async getAccountsSummary(requestId: string, call?: CallOptions): Promise<DataResult<AccountsSummary>> {
      const body = { RequestId: validated(Uuid, requestId, 'GetAccountsSummary RequestId') };
      return data({
        operation: 'GetAccountsSummary',
        method: 'post',
        path: `${banking}/GetAccountsSummary`,
        route: `${bankingRoute}/GetAccountsSummary`,
        body,
        ready: ACCOUNTS_SUMMARY_READER,
        options: call,
      });
    },

    async getAccountsSummaryAsync(requestId: string, call?: CallOptions): Promise<DataResult<AccountsSummary>> {
      const path = `${banking}/GetAccountsSummaryAsync/${id(requestId, 'RequestId', 'GetAccountsSummaryAsync')}`;
      return data({
        operation: 'GetAccountsSummaryAsync',
        method: 'get',
        path,
        route: `${bankingRoute}/GetAccountsSummaryAsync/{requestId}`,
        ready: ACCOUNTS_SUMMARY_READER,
        options: call,
      });
    },

    async getStatements(requestId: string, numberOfStatements?: NumberOfStatements, call?: CallOptions): Promise<DataResult<Statements>> {
      const body = validated(
        StatementsRequest,
        { RequestId: requestId, ...(numberOfStatements ? { NumberOfStatements: numberOfStatements } : {}) },
        'GetStatements',
      );
      return data({
        operation: 'GetStatements',
        method: 'post',
        path: `${banking}/GetStatements`,
        route: `${bankingRoute}/GetStatements`,
        body,
        ready: STATEMENTS_READER,
        options: call,
      });
    },

    /** POST /v3/{customerId}/Investments; repeat the same request while it answers 202. */
    async getInvestments(loginId: string, requestId: string, call?: CallOptions): Promise<DataResult<Investments>> {
      const body = {
        LoginId: validated(Uuid, loginId, 'Investments LoginId'),
        RequestId: validated(Uuid, requestId, 'Investments RequestId'),
        MostRecentCached: true,
      };
      return data({
        operation: 'Investments',
        method: 'post',
        path: `${tenant}/Investments`,
        route: `${tenantRoute}/Investments`,
        body,
        ready: INVESTMENTS_READER,
        options: call,
      });
    },

    /** GET .../insight/login/{loginId}/attributes/{requestId}/{operation}: a fixed package of attributes. */
    async getPackageAttributes(loginId: string, requestId: string, operation: AttributePackageOperation, call?: CallOptions): Promise<DataResult<Attributes>> {
      const op = validated(AttributePackageOperation, operation, 'attributes operation');
      const path = `${tenant}/insight/login/${id(loginId, 'LoginId', op)}/attributes/${id(requestId, 'RequestId', op)}/${op}`;
      return data({
        operation: op,
        method: 'get',
        path,
        route: `${tenantRoute}/insight/login/{loginId}/attributes/{requestId}/${op}`,
        ready: ATTRIBUTES_READER,
        options: call,
      });
    },

    /** POST .../insight/login/{loginId}/attributes/{requestId}: a custom attribute set. */
    async getCustomAttributes(loginId: string, requestId: string, request: AttributesRequest, call?: CallOptions): Promise<DataResult<Attributes>> {
      const operation = 'CustomAttributes';
      const body = validated(AttributesRequest, request, operation);
      const path = `${tenant}/insight/login/${id(loginId, 'LoginId', operation)}/attributes/${id(requestId, 'RequestId', operation)}`;
      return data({
        operation,
        method: 'post',
        path,
        route: `${tenantRoute}/insight/login/{loginId}/attributes/{requestId}`,
        body,
        ready: ATTRIBUTES_READER,
        options: call,
      });
    },

    /** DELETE .../DeleteCard/{loginId}: forget the saved login and its data. */
    async deleteCard(loginId: string, call?: CallOptions): Promise<DeleteCard> {
      const path = `${banking}/DeleteCard/${id(loginId, 'LoginId', 'DeleteCard')}`;
      const result = await data({
        operation: 'DeleteCard',
        method: 'delete',
        path,
        route: `${bankingRoute}/DeleteCard/{loginId}`,
        ready: DELETE_CARD_READER,
        options: call,
      });
      if (result.kind === 'pending') throw new UnexpectedResponseError('DeleteCard', 202, 'DeleteCard answered pending');
      return result.data;
    },
  };
}

/**
 * `Retry-After` where it means "come back later": on a 429 or a 503, and on any code the table says
 * was refused and is worth retrying (TOO_MANY_REQUESTS under the 401/403 FACTS.md also allows, RETRY_LATER).
 */
function waitAskedFor(status: number, code: string | undefined, headers: Headers): number | undefined {
  const info = serviceCodeInfo(code, status);
  return status === 429 || status === 503 || (info.delivery === 'refused' && info.retryable) ? retryAfterOf(headers) : undefined;
}

/** An answer whose every field is acted on (a 202, a 203): it holds, or the service answered what the product cannot use. */
function parseOrThrow<T>(schema: z.ZodType<T>, body: unknown, operation: string, status: number, text: string): T {
  const parsed = schema.safeParse(body);
  if (!parsed.success) throw new UnexpectedResponseError(operation, status, describeIssues(parsed.error), text, parsed.error);
  return parsed.data;
}

function requestIdOf(data: unknown): string {
  const requestId = (data as { RequestId?: unknown }).RequestId;
  return typeof requestId === 'string' ? requestId : '';
}

/** fetch wraps the socket's error (ECONNREFUSED, ECONNRESET, ...) as its `cause`. */
function socketErrorOf(error: unknown): { code?: string; message?: string } | undefined {
  return (error as { cause?: { code?: string; message?: string } }).cause;
}

function describeNetworkFailure(error: unknown, socketError: { code?: string; message?: string } | undefined): string {
  if (socketError?.code) return `${socketError.code}${socketError.message ? ` (${socketError.message})` : ''}`;
  return error instanceof Error ? error.message : String(error);
}
