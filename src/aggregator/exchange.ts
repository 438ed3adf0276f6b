/**
 * One HTTP exchange with the aggregation service, the plumbing every endpoint of client.ts shares:
 * the request (its own timeout, the caller's abort), the answer read into ready | pending | challenge,
 * and every failure mapped to its AggregatorError (network, abort, service refusal, unusable answer).
 * Apart from the endpoints so that each endpoint file says only which call it makes and how it reads.
 */
import type { KyInstance } from 'ky';
import type { z } from 'zod';
import { AuthorizeResponse, ErrorResponse, PendingResponse, isPlainObject, readServiceCode, type PendingCode, type SecurityChallenge } from './schemas.js';
import { parseOrRefuse } from '../validation/parse-or-refuse.js';
import { AggregatorAbortedError, AggregatorNetworkError, AggregatorResponseError, AggregatorServiceError, UnexpectedResponseError } from './errors.js';
import { readAnswer, type DataReader, type DataWarning } from './data-reader.js';
import { serviceCodeInfo } from './failure-table.js';
import { withHttpSpan, type HttpSpanRecorder, type Server } from './http-span.js';
import { retryAfterOf } from './retry-after.js';

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

export interface Exchange<T> {
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

/** Sends one exchange and reads its answer; what the endpoints are given. */
export type Send = <T>(call: Exchange<T>) => Promise<Ready<T> | Pending | Challenge>;

/** The tenant's paths (what is sent) and routes (what a trace shows) the endpoints append to. */
export interface TenantPaths {
  readonly tenant: string;
  readonly banking: string;
  readonly tenantRoute: string;
  readonly bankingRoute: string;
}

export function tenantPathsOf(customerId: string): TenantPaths {
  const tenant = `v3/${encodeURIComponent(customerId)}`;
  const tenantRoute = '/v3/{customerId}';
  return { tenant, banking: `${tenant}/BankingServices`, tenantRoute, bankingRoute: `${tenantRoute}/BankingServices` };
}

interface Transport {
  readonly http: KyInstance;
  /** The service's host as a trace names it. */
  readonly server: Server | undefined;
  /** The timeout of a call that names none of its own. */
  readonly timeoutMs: number;
}

interface Answer {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
}

export function createSend(transport: Transport): Send {
  return (call) =>
    withHttpSpan({ operation: call.operation, method: call.method, route: call.route, server: transport.server }, async (record) =>
      readAnswerOf(call, await request(transport, call, record), record),
    );
}

/** The request, with its timer and the caller's abort; an answer of any status, or the failure to get one. */
async function request<T>(transport: Transport, call: Exchange<T>, record: HttpSpanRecorder): Promise<Answer> {
  const timeoutMs = call.options?.timeoutMs ?? call.defaultTimeoutMs ?? transport.timeoutMs;
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
  try {
    const response = await transport.http(call.path, {
      method: call.method,
      signal: controller.signal,
      ...(call.body === undefined ? {} : { json: call.body }),
      ...(call.options?.headers ? { headers: call.options.headers } : {}),
    });
    const status = response.status;
    const headers = response.headers;
    record.status(status);
    const text = await response.text();
    return { status, headers, text };
  } catch (error) {
    if (callerSignal?.aborted) throw new AggregatorAbortedError(call.operation, error);
    if (timedOut) throw new AggregatorNetworkError(call.operation, `no answer within ${timeoutMs} ms`, undefined, error, timeoutMs);
    const socketError = socketErrorOf(error);
    throw new AggregatorNetworkError(call.operation, describeNetworkFailure(error, socketError), socketError?.code, error);
  } finally {
    clearTimeout(timer);
    callerSignal?.removeEventListener('abort', forwardAbort);
  }
}

/** The answer as the product reads it: a refusal thrown, a 202 pending, a 203 challenge, a 200 read by the call's reader. */
function readAnswerOf<T>(call: Exchange<T>, { status, headers, text }: Answer, record: HttpSpanRecorder): Ready<T> | Pending | Challenge {
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
  return parseOrRefuse(schema, body, (problem, cause) => new UnexpectedResponseError(operation, status, problem, text, cause));
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
