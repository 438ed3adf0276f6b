/**
 * The connection workflow's activities: one upstream call each, built around aggregation clients
 * (one per tenant). Results are plain, serializable outcomes; errors leave as ApplicationFailures.
 * Cancellation of an activity aborts its HTTP request. Every call heartbeats while its request is at
 * the service (in-flight-heartbeat.ts), so the workflow notices within its heartbeat timeout a worker
 * that died mid-call, or an attempt the server started that no worker received.
 * Each call that reaches the service is counted by its outcome (src/metrics/service-metrics.ts):
 * answers, polls, failures by type and code, throttles by tenant.
 */
import { Context, log } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { AggregatorClient } from '../aggregator/client.js';
import type { CallOptions, DataResult } from '../aggregator/exchange.js';
import type { AuthorizeResult } from '../aggregator/session-endpoints.js';
import { AggregatorAbortedError, AggregatorError } from '../aggregator/errors.js';
import type { AccountsDetailResponse, AttributesResponse, InvestmentsResponse, Login } from '../aggregator/schemas.js';
import type {
  AccountsDetailInput,
  AnswerChallengeInput,
  AttributesInput,
  AuthorizeOutcome,
  DataOutcome,
  LoginDataInput,
  OpenSessionInput,
  SessionDataInput,
} from './connection-activity-types.js';
import { NO_SERVICE_METRICS, type AnswerOutcome, type PollOperation, type PollResult, type ServiceMetrics } from '../metrics/service-metrics.js';
import { failedCallOf, tenantPausedFailure, toActivityFailure, workerShutdownFailure } from './failures.js';
import type { TenantPauses } from './tenant-pauses.js';
import { createPollActivities } from './poll-activities.js';
import { heartbeatingEach } from './in-flight-heartbeat.js';

/** Gives the aggregation client of a tenant; the worker caches one per customer id. */
export type ClientForTenant = (customerId: string) => AggregatorClient;

/**
 * Without a payload store every result stays in history, where the server refuses a payload over
 * 2 MiB and a workflow task over 4 MiB. A product's data is recorded twice (the local activity's
 * marker, the connection's result, which holds up to three products), so each must stay well under.
 */
export const INLINE_RESULT_LIMIT_BYTES = 600 * 1024;

export interface ActivitiesOptions {
  /** Results larger than this end the connection as ResultTooLarge; unlimited with a payload store. */
  readonly resultLimitBytes?: number | undefined;
  /**
   * The tenants the service asked to wait (tenant-pauses.ts): a paused tenant's calls are not sent
   * but rescheduled after the pause, and a TOO_MANY_REQUESTS pauses the tenant's whole fleet.
   */
  readonly pauses?: Pick<TenantPauses, 'pauseOf' | 'refused'> | undefined;
  /** The counters of the calls' outcomes (the worker's: on its Prometheus endpoint); none by default. */
  readonly metrics?: ServiceMetrics | undefined;
}

/** How a call that reached the service ended: its outcome, or what it threw. */
type Ended<T> = { readonly outcome: T } | { readonly error: unknown };

/** Sends a call and tells `record` how it ended; what it returns or throws is the call's. */
async function recorded<T>(send: () => Promise<T>, record: (ended: Ended<T>) => void): Promise<T> {
  let outcome: T;
  try {
    outcome = await send();
  } catch (error) {
    record({ error });
    throw error;
  }
  record({ outcome });
  return outcome;
}

/** An answer's outcome as aggregation_answers counts it; undefined for an answer cancelled mid-call. */
function answerOutcomeOf(ended: Ended<AuthorizeOutcome>): AnswerOutcome | undefined {
  if ('outcome' in ended) return ended.outcome.kind === 'session-open' ? 'session_open' : ended.outcome.kind === 'challenge' ? 'next_challenge' : 'pending';
  const failed = failedCallOf(ended.error);
  // The type the workflow reads as "the service refused the answer" (workflows/session.ts).
  return failed && (failed.failureType === 'InvalidSecurityResponse' ? 'rejected' : 'failed');
}

/** A poll's result as aggregation_polls counts it: a "poll" remedy (SESSION_LOADING) is waited out like a 202. */
function pollResultOf(ended: Ended<DataOutcome<unknown>>): PollResult | undefined {
  if ('outcome' in ended) return ended.outcome.kind;
  if (!failedCallOf(ended.error)) return undefined;
  return ended.error instanceof AggregatorError && ended.error.remedy === 'poll' ? 'pending' : 'failed';
}

/** A rate-limited refusal is counted and slows the tenant's fleet; failing to say so never fails the call's own handling. */
async function reportThrottle(customerId: string, error: unknown, metrics: ServiceMetrics, pauses: ActivitiesOptions['pauses']): Promise<void> {
  if (!(error instanceof AggregatorError) || error.serviceCode !== 'TOO_MANY_REQUESTS') return;
  metrics.throttled(customerId);
  if (!pauses) return;
  const wait = error.retryAfterMs === undefined ? 'no Retry-After' : `Retry-After ${Math.round(error.retryAfterMs / 1000)} s`;
  try {
    await pauses.refused(customerId, error.retryAfterMs, `TOO_MANY_REQUESTS (HTTP ${error.httpStatus ?? '?'}, ${wait}) on ${error.operation}`);
  } catch (notifyError) {
    log.warn('could not pause the tenant after TOO_MANY_REQUESTS', {
      customerId,
      error: notifyError instanceof Error ? notifyError.message : String(notifyError),
    });
  }
}

/** The outcome, if it fits in history under `resultLimitBytes` (none: no limit); else a non-retryable ResultTooLarge. */
function fittingIn<T>(resultLimitBytes: number | undefined, operation: string, outcome: DataOutcome<T>): DataOutcome<T> {
  if (resultLimitBytes === undefined || outcome.kind !== 'ready') return outcome;
  const bytes = Buffer.byteLength(JSON.stringify(outcome.data));
  if (bytes <= resultLimitBytes) return outcome;
  throw ApplicationFailure.create({
    type: 'ResultTooLarge',
    message: `${operation} is ${bytes} bytes; without a payload store (PAYLOAD_STORE) a result may be at most ${resultLimitBytes} bytes in Temporal's history`,
    nonRetryable: true,
  });
}

export function createActivities(clientFor: ClientForTenant, { resultLimitBytes, pauses, metrics = NO_SERVICE_METRICS }: ActivitiesOptions = {}) {
  /** Refuses data that cannot be kept in history: at once, typed, instead of a workflow the server terminates. */
  const fitting = <T>(operation: string, outcome: DataOutcome<T>): DataOutcome<T> => fittingIn(resultLimitBytes, operation, outcome);

  /** Runs one upstream call with the activity's cancellation wired to the HTTP request. */
  async function call<T>(customerId: string, run: (client: AggregatorClient, options: CallOptions) => Promise<T>): Promise<T> {
    const context = Context.current();
    // A tenant the service asked to wait: nothing is sent; Temporal runs the call again after the pause.
    const pause = await pauses?.pauseOf(customerId);
    if (pause) throw tenantPausedFailure(customerId, pause, Date.now());
    try {
      return await run(clientFor(customerId), { signal: context.cancellationSignal });
    } catch (error) {
      // A worker shutting down past its grace time aborts the call: not the connection's doing, so
      // another worker may make it again (an Authorize's outcome is then unknown: see authorize.ts).
      if (error instanceof AggregatorAbortedError && context.cancellationDetails?.workerShutdown) throw workerShutdownFailure(error);
      const failed = failedCallOf(error);
      if (failed) metrics.failed(failed);
      await reportThrottle(customerId, error, metrics, pauses);
      // pollByRetry's attempts are polls, not reads of one answer again.
      const { attempt, activityType } = context.info;
      throw toActivityFailure(error, activityType === 'pollByRetry' ? {} : { attempt });
    }
  }

  /** The call, counted as a poll of `operation` when it is one. */
  function poll<T>(operation: PollOperation, isPoll: boolean, send: () => Promise<DataOutcome<T>>): Promise<DataOutcome<T>> {
    if (!isPoll) return send();
    return recorded(send, (ended) => {
      const result = pollResultOf(ended);
      if (result) metrics.polled(operation, result);
    });
  }

  const calls = {
    /** Authorize: live with credentials, cached with a LoginId, or live refresh of a saved LoginId. */
    async openSession({ customerId, session }: OpenSessionInput): Promise<AuthorizeOutcome> {
      return call(customerId, async (client, options) => {
        switch (session.kind) {
          case 'live':
            return toAuthorizeOutcome(
              await client.authorizeLive(
                { institution: session.institution, username: session.username, password: session.password, save: session.save },
                options,
              ),
            );
          case 'cached':
            return toAuthorizeOutcome(await client.authorizeCached(session.loginId, options));
          case 'refresh':
            return toAuthorizeOutcome(await client.authorizeRefresh(session.loginId, options));
        }
      });
    },

    /** Authorize with the RequestId and every answer of the current challenge set. */
    async answerChallenge({ customerId, requestId, responses }: AnswerChallengeInput): Promise<AuthorizeOutcome> {
      return call(customerId, (client, options) =>
        recorded(
          async () => toAuthorizeOutcome(await client.answerChallenge(requestId, responses, options)),
          (ended) => {
            const outcome = answerOutcomeOf(ended);
            if (outcome) metrics.answered(outcome);
          },
        ),
      );
    },

    async requestAccountsDetail({ customerId, requestId, options: detail }: AccountsDetailInput): Promise<DataOutcome<AccountsDetailResponse>> {
      return fitting(
        'accounts detail',
        await call(customerId, async (client, options) => toDataOutcome(await client.getAccountsDetail(requestId, detail, options))),
      );
    },

    async pollAccountsDetail({ customerId, requestId }: SessionDataInput): Promise<DataOutcome<AccountsDetailResponse>> {
      return fitting(
        'accounts detail',
        await call(customerId, (client, options) =>
          poll('accounts_detail', true, async () => toDataOutcome(await client.getAccountsDetailAsync(requestId, options))),
        ),
      );
    },

    /** Investments: the same request is repeated while it answers 202 (a poll when `pollNumber` says so). */
    async requestInvestments({ customerId, loginId, requestId, pollNumber }: LoginDataInput): Promise<DataOutcome<InvestmentsResponse>> {
      return fitting(
        'investments',
        await call(customerId, (client, options) =>
          poll('investments', pollNumber !== undefined, async () => toDataOutcome(await client.getInvestments(loginId, requestId, options))),
        ),
      );
    },

    /** One attributes call (a package operation or the custom request); repeated while 202. */
    async requestAttributes({ customerId, loginId, requestId, product, pollNumber }: AttributesInput): Promise<DataOutcome<AttributesResponse>> {
      return fitting(
        'attributes',
        await call(customerId, (client, options) =>
          poll('attributes', pollNumber !== undefined, async () =>
            toDataOutcome(
              'package' in product
                ? await client.getPackageAttributes(loginId, requestId, product.package, options)
                : await client.getCustomAttributes(loginId, requestId, product.custom, options),
            ),
          ),
        ),
      );
    },
  };
  // Each call registered as an activity heartbeats while it runs; the polling strategies that poll
  // outside the workflow repeat the same calls and heartbeat themselves (with their progress).
  return { ...heartbeatingEach(calls), ...createPollActivities(calls) };
}

export type ConnectionActivities = ReturnType<typeof createActivities>;

function toAuthorizeOutcome(result: AuthorizeResult): AuthorizeOutcome {
  switch (result.kind) {
    case 'ready': {
      const { Login: login, Institution: institution } = result.data;
      // AuthorizeResponse's schema guarantees Login on HTTP 200.
      return {
        kind: 'session-open',
        requestId: result.requestId,
        login: login as Login,
        institution: typeof institution === 'string' ? institution : (institution?.Name ?? undefined),
      };
    }
    case 'challenge':
      return { kind: 'challenge', requestId: result.requestId, challenges: result.challenges };
    case 'pending':
      return { kind: 'pending', requestId: result.requestId, code: result.code, message: result.message };
  }
}

function toDataOutcome<T>(result: DataResult<T>): DataOutcome<T> {
  return result.kind === 'ready'
    ? { kind: 'ready', requestId: result.requestId, data: result.data, ...(result.warnings.length > 0 ? { warnings: result.warnings } : {}) }
    : { kind: 'pending', requestId: result.requestId, code: result.code, message: result.message };
}
