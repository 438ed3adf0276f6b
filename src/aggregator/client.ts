/**
 * Typed HTTP client of the aggregation service, one function per endpoint, over ky: the session's
 * (session-endpoints.ts) and the data's (data-endpoints.ts), each sending through exchange.ts.
 *
 * Every call answers a discriminated result (ready | pending | challenge) or throws an
 * AggregatorError subclass. A data answer is read by data-reader.ts: what the product acts on
 * strictly (else UnexpectedResponseError, at once), the records it passes on tolerantly (a record the
 * view cannot read is kept as sent, with a DataWarning on the result). It never retries: Temporal's retry policy is the one retry layer,
 * and the table in errors.ts says what is worth retrying. A refusal that names a wait (`Retry-After`
 * on a 429, a 503, a TOO_MANY_REQUESTS or a RETRY_LATER) carries it as the error's `retryAfterMs`.
 */
import ky, { type KyInstance } from 'ky';
import { serverOf } from './http-span.js';
import { createSend, tenantPathsOf } from './exchange.js';
import { sessionEndpoints } from './session-endpoints.js';
import { bankingDataEndpoints, loginDataEndpoints } from './data-endpoints.js';

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

export type AggregatorClient = ReturnType<typeof createAggregatorClient>;

const DEFAULT_TIMEOUT_MS = 60_000;
export const DEFAULT_AUTHORIZE_TIMEOUT_MS = 240_000;

export function createAggregatorClient(options: AggregatorClientOptions) {
  const http: KyInstance = ky.create({
    prefix: options.baseUrl.replace(/\/+$/, ''),
    retry: 0,
    throwHttpErrors: false,
    timeout: false, // our own timer, so the error can say which limit passed
    headers: options.auth ? { [options.auth.header]: options.auth.value } : {},
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  const send = createSend({ http, server: serverOf(options.baseUrl), timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS });
  const paths = tenantPathsOf(options.customerId);
  return {
    ...sessionEndpoints(send, paths, options.authorizeTimeoutMs ?? DEFAULT_AUTHORIZE_TIMEOUT_MS),
    ...bankingDataEndpoints(send, paths),
    ...loginDataEndpoints(send, paths),
  };
}
