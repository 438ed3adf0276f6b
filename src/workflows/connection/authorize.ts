/**
 * Authorize calls and when they may be sent again. An Authorize with credentials or answers is not
 * idempotent: sent twice, it can send the end user a second code, count toward a lockout, or answer
 * a challenge the service has already moved past. So Temporal never retries it; this loop resends
 * only what provably did not reach the service (connection refused, rate limited, 503, the
 * institution unreachable), and reports any other transient failure as an unknown outcome for the
 * caller to recover from. A cached Authorize only reads saved data and is resent freely.
 */
import { sleep, type ActivityOptions } from '@temporalio/workflow';
import type { ConnectionActivities } from '../../activities/connection-activities.js';
import type { AuthorizeOutcome } from '../../activities/connection-activity-types.js';
import { applicationFailureOf, connectionFailure, deliveryOf, isTransient, serviceDetailsOf, timeoutFailureOf } from './failures.js';
import { CALL_HEARTBEAT_TIMEOUT_MS } from './polling.js';
import { serviceActivities } from './service-queue.js';

const AUTHORIZE_OPTIONS: ActivityOptions = {
  // The service may take minutes to reach an institution (a sync call runs ~210 s before it is dispatched).
  startToCloseTimeout: '5m',
  // The activity heartbeats while its request is at the service: a worker that dies mid-call is
  // noticed in seconds, not at the start-to-close timeout.
  heartbeatTimeout: CALL_HEARTBEAT_TIMEOUT_MS,
  // Never resent by Temporal: whether a resend is safe depends on what the failure proves (below).
  retry: { maximumAttempts: 1 },
  // Through the task queue, never handed back eagerly: the fleet's request budget and the
  // connection's priority govern every call to the service (src/budget/fleet-budget.ts).
  allowEagerDispatch: false,
};

/** Sends of one Authorize at most (the first and the resends), with backoff between them. */
export const MAX_AUTHORIZE_SENDS = 5;
/**
 * A send the service refused as rate-limited (TOO_MANY_REQUESTS) does not count toward the sends:
 * waiting for budget never fails a connection. This bounds that waiting (the spec's 30-minute limit).
 */
export const MAX_RATE_LIMITED_WAIT_MS = 30 * 60_000;
const BACKOFF_MS = { initial: 1_000, coefficient: 2, maximum: 30_000 } as const;

/** The call may have reached the service and nobody knows what it did: it must not be sent again. */
export class AuthorizeOutcomeUnknownError extends Error {
  override readonly name = 'AuthorizeOutcomeUnknownError';
  constructor(
    readonly reason: string,
    override readonly cause: unknown,
  ) {
    super(reason);
  }
}

export type AuthorizeCall = (activities: ConnectionActivities) => Promise<AuthorizeOutcome>;

/**
 * Runs one Authorize; `idempotent` calls are resent after any transient failure, others only after a
 * refusal. A rate-limited refusal is resent after the wait the service asked for (Retry-After) and
 * is not counted as a send, within MAX_RATE_LIMITED_WAIT_MS.
 */
export async function authorize(summary: string, call: AuthorizeCall, { idempotent }: { idempotent: boolean }): Promise<AuthorizeOutcome> {
  let rateLimitedSince: number | undefined;
  let rateLimited = 0;
  for (let send = 1, attempt = 1; ; attempt += 1) {
    try {
      return await call(serviceActivities<ConnectionActivities>({ ...AUTHORIZE_OPTIONS, summary: attempt === 1 ? summary : `${summary} (send ${attempt})` }));
    } catch (error) {
      const next = afterFailedAuthorize(error, idempotent);
      if (next === 'fail') throw error;
      if (next === 'fail-unsent') throw neverResentOver(error, summary);
      if (next === 'new-session') throw new AuthorizeOutcomeUnknownError(unknownOutcomeReason(error), error);
      const details = serviceDetailsOf(error);
      if (details?.serviceCode === 'TOO_MANY_REQUESTS' && details.delivery === 'refused') {
        rateLimitedSince ??= Date.now();
        rateLimited += 1;
        if (Date.now() - rateLimitedSince < MAX_RATE_LIMITED_WAIT_MS) {
          const wait = Math.max(details.retryAfterMs ?? 0, backoffMs(rateLimited));
          await sleep(wait, { summary: `wait for the service's rate limit (${rateLimited}x): ${summary}` });
          continue;
        }
      }
      if (send >= MAX_AUTHORIZE_SENDS) throw error;
      await sleep(backoffMs(send), { summary: `wait before resending: ${summary}` });
      send += 1;
    }
  }
}

/**
 * What follows a failed Authorize, decided from what the failure proves:
 * - `fail`: not transient (the service's verdict, or a reply the product cannot act on): the failure ends it;
 * - `resend`: it provably did not reach the service (or only reads saved data): sent again after a backoff;
 * - `fail-unsent`: credentials or answers whose reply came but could not be read, or that the service did
 *   not answer within the client's wait: the connection ends, and nothing is sent again (a new session
 *   would send them for nothing: the same garbled reply, or twice to a service still working on it);
 * - `new-session`: its outcome is unknown (the reply lost, the worker died mid-call): the caller opens a
 *   new session, a bounded number of times (session.ts).
 */
export type AfterFailedAuthorize = 'fail' | 'resend' | 'fail-unsent' | 'new-session';

export function afterFailedAuthorize(error: unknown, idempotent: boolean): AfterFailedAuthorize {
  if (!isTransient(error)) return 'fail';
  if (idempotent) return 'resend';
  if (applicationFailureOf(error)?.type === 'UnexpectedResponse' || serviceDetailsOf(error)?.timedOutAfterMs !== undefined) return 'fail-unsent';
  return deliveryOf(error) === 'refused' ? 'resend' : 'new-session';
}

/** The failure of a `fail-unsent`, saying why nothing was sent again. */
function neverResentOver(error: unknown, summary: string) {
  const details = serviceDetailsOf(error);
  if (applicationFailureOf(error)?.type === 'UnexpectedResponse') {
    return connectionFailure(
      'UnexpectedResponse',
      `${summary}: the service's reply (HTTP ${details?.httpStatus ?? '?'}) could not be read; the credentials and answers were not sent again`,
      details,
    );
  }
  if (details?.timedOutAfterMs !== undefined) {
    return connectionFailure(
      'ServiceUnavailable',
      `${summary}: the service did not answer within ${Math.round(details.timedOutAfterMs / 1000)} s; whether it acted is unknown, so the credentials and answers were not sent again`,
      details,
    );
  }
  return connectionFailure('ServiceUnavailable', `${summary}: not sent again`, details);
}

/** The wait before the n-th resend (n from 1): 1 s, doubling, at most 30 s. */
function backoffMs(n: number): number {
  return Math.min(BACKOFF_MS.maximum, BACKOFF_MS.initial * BACKOFF_MS.coefficient ** Math.min(n - 1, 5));
}

/** Says what happened without quoting the service's words (they may echo what was sent). */
function unknownOutcomeReason(error: unknown): string {
  if (timeoutFailureOf(error)) return 'the worker stopped while the Authorize was at the service (no reply recorded)';
  const details = serviceDetailsOf(error);
  if (details?.serviceCode) return `the service answered ${details.serviceCode} (HTTP ${details.httpStatus}) after it may have acted`;
  if (details?.httpStatus) return `the reply (HTTP ${details.httpStatus}) was lost or unreadable after the service may have acted`;
  return 'the connection to the service broke after the request was sent';
}
