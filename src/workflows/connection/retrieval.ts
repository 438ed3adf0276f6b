/**
 * Retrieving the connection's products once its session is open: accounts detail, investments and
 * attributes, each polled on durable timers while the service answers 202. Data calls are read-only,
 * so their transient failures are retried (by Temporal, within the pending operation's deadline);
 * how each call is made (an activity under the fleet's budget) is service-calls.ts's decision.
 */
import type { ConnectionActivities } from '../../activities/connection-activities.js';
import type { DataOutcome } from '../../activities/connection-activity-types.js';
import type { PollRequest } from '../../activities/poll-activities.js';
import type { AccountsDetailOptions } from '../../aggregator/schemas.js';
import type { ConnectionInput } from '../../contract/connection/connection-input.js';
import { authorize } from './authorize.js';
import type { ConnectionResult, ProductName } from '../../contract/connection/connection-definitions.js';
import { connectionFailure, serviceDetailsOf } from './failures.js';
import { pollUntilReady, type PollObserver, type Retrieved } from './polling.js';
import type { DataWarning } from '../../aggregator/data-reader.js';
import { dataCalls } from './service-calls.js';
import type { SessionOpen } from './session.js';
import type { StateRecorder } from './state-recorder.js';
import { countSessionRestart } from './session-metrics.js';

/** Reopens of an expired session in one connection, at most (each a cached Authorize). */
const MAX_SESSION_REOPENS = 3;

/** What a product's polls need besides their calls: the tenant, the timing, and where the pending state is recorded. */
interface PollContext {
  readonly customerId: string;
  readonly timing: ConnectionInput['timing'];
  readonly recorder: StateRecorder;
}

/** A cached Authorize of the saved login (it only reads saved data): the new session's RequestId. */
async function openCachedSession(label: string, customerId: string, loginId: string): Promise<string> {
  const cached = await authorize(label, (activities) => activities.openSession({ customerId, session: { kind: 'cached', loginId } }), {
    idempotent: true,
  });
  if (cached.kind !== 'session-open') throw connectionFailure('UnexpectedServiceAnswer', `cached Authorize answered ${cached.kind}`);
  return cached.requestId;
}

/** Records a product's pending answer (202) and counts its polls. */
function pollObserver(recorder: StateRecorder, operation: string): PollObserver {
  return {
    pending: ({ code, pollCount, since, deadline, nextPollAt, strategy }) =>
      recorder.patch({
        pending: {
          operation,
          code,
          pollCount,
          since: new Date(since).toISOString(),
          deadline: new Date(deadline).toISOString(),
          nextPollAt: new Date(nextPollAt).toISOString(),
          ...(strategy === 'timer' ? {} : { strategy }),
        },
      }),
    polled: (count) => recorder.countPolls(count),
  };
}

function retrieveAccountsDetail({ customerId, timing, recorder }: PollContext, requestId: string, options: AccountsDetailOptions) {
  const operation = 'accounts detail';
  return pollUntilReady(
    operation,
    ({ deadline }) => dataCalls('request accounts detail', deadline).requestAccountsDetail({ customerId, requestId, options }),
    ({ pollNumber, deadline }) => dataCalls(`poll accounts detail #${pollNumber}`, deadline).pollAccountsDetail({ customerId, requestId }),
    (pendingRequestId) => ({ kind: 'accountsDetail', input: { customerId, requestId: pendingRequestId } }),
    timing,
    pollObserver(recorder, operation),
  );
}

/**
 * Investments and attributes: the same request, repeated while it answers 202; a repeat carries its
 * poll number, so the activity counts it as a poll (the worker's metrics are the activities').
 */
function retrieveByRepeating<T>(
  { timing, recorder }: PollContext,
  operation: string,
  request: (activities: ConnectionActivities, pollNumber?: number) => Promise<DataOutcome<T>>,
  pollRequest: () => PollRequest,
) {
  return pollUntilReady(
    operation,
    ({ deadline }) => request(dataCalls(`request ${operation}`, deadline)),
    ({ pollNumber, deadline }) => request(dataCalls(`poll ${operation} #${pollNumber}`, deadline), pollNumber),
    pollRequest,
    timing,
    pollObserver(recorder, operation),
  );
}

export async function retrieveProducts(
  { customerId, session, products, timing }: ConnectionInput,
  open: SessionOpen,
  recorder: StateRecorder,
): Promise<ConnectionResult> {
  const loginId = open.login.Id;
  let result: ConnectionResult = { customerId, loginId, requestId: open.requestId, institution: recorder.state.institution, totalPolls: 0 };
  /** The session's RequestId: a new one when an expired session is reopened. */
  let sessionRequestId = open.requestId;
  // A saved login's session can be reopened by a cached Authorize (it only reads saved data).
  const canReopen = session.kind !== 'live' || session.save;
  const context: PollContext = { customerId, timing, recorder };

  /**
   * Runs one product's retrieval in the open session; when the session expired meanwhile (its calls
   * waited for the fleet's request budget or a paused tenant past the service's idle limit), reopens
   * it and starts the product again, at most MAX_SESSION_REOPENS times. Waiting never fails a connection.
   */
  async function inOpenSession<T>(operation: string, run: (requestId: string) => Promise<T>): Promise<T> {
    for (let reopened = 0; ; reopened += 1) {
      try {
        return await run(sessionRequestId);
      } catch (error) {
        if (!canReopen || reopened >= MAX_SESSION_REOPENS || serviceDetailsOf(error)?.remedy !== 'reauthorize') throw error;
        const reason = `the session expired during ${operation} (${serviceDetailsOf(error)?.serviceCode ?? 'expired'}); reopened with a cached Authorize`;
        sessionRequestId = await openCachedSession(`authorize (cached: ${reason})`, customerId, loginId);
        countSessionRestart('session_expired');
        recorder.patch({
          requestId: sessionRequestId,
          pending: undefined,
          sessionRestarts: recorder.state.sessionRestarts + 1,
          lastRestart: { reason, at: new Date().toISOString() },
        });
      }
    }
  }

  /** What of the products' data their views could not read (kept as sent): on the result, for the lender. */
  const warnings: DataWarning[] = [];

  function markRetrieved<T>(product: ProductName, retrieved: Retrieved<T>): T {
    recorder.patch({ pending: undefined, retrieved: [...recorder.state.retrieved, product] });
    if (retrieved.warnings?.length) warnings.push(...retrieved.warnings);
    return retrieved.data;
  }

  /** The RequestId accounts detail was retrieved in (attributes need it retrieved in theirs). */
  let accountsRequestId: string | undefined;
  if (products.accountsDetail) {
    const options = products.accountsDetail;
    const retrieved = await inOpenSession('accounts detail', (requestId) => retrieveAccountsDetail(context, requestId, options));
    accountsRequestId = sessionRequestId;
    result = { ...result, requestId: sessionRequestId, accountsDetail: markRetrieved('accountsDetail', retrieved) };
  }
  if (products.investments) {
    const retrieved = await inOpenSession('investments', (requestId) => {
      const input = { customerId, loginId, requestId };
      return retrieveByRepeating(
        context,
        'investments',
        (activities, pollNumber) => activities.requestInvestments({ ...input, pollNumber }),
        () => ({ kind: 'investments', input }),
      );
    });
    result = { ...result, requestId: sessionRequestId, investments: markRetrieved('investments', retrieved) };
  }
  if (products.attributes) {
    const product = products.attributes;
    // Spec: attributes need a RequestId from a cached Authorize, and accounts detail retrieved for it.
    let requestId = sessionRequestId;
    if (session.kind !== 'cached') {
      requestId = await openCachedSession('authorize (cached, for attributes)', customerId, loginId);
      recorder.patch({ requestId });
    }
    if (!(products.accountsDetail && requestId === accountsRequestId)) await retrieveAccountsDetail(context, requestId, products.accountsDetail ?? {});
    const label = 'package' in product ? `attributes ${product.package}` : 'custom attributes';
    const input = { customerId, loginId, requestId, product };
    const retrieved = await retrieveByRepeating(
      context,
      label,
      (activities, pollNumber) => activities.requestAttributes({ ...input, pollNumber }),
      () => ({ kind: 'attributes', input }),
    );
    result = { ...result, requestId, attributes: markRetrieved('attributes', retrieved) };
  }
  return { ...result, totalPolls: recorder.state.totalPolls, ...(warnings.length > 0 ? { warnings } : {}) };
}
