/**
 * Retrieving the connection's products once its session is open: accounts detail, investments and
 * attributes, each polled on durable timers while the service answers 202. Data calls are read-only,
 * so their transient failures are retried (by Temporal, within the pending operation's deadline).
 */
import { proxyLocalActivities, type LocalActivityOptions } from '@temporalio/workflow';
import type { ConnectionActivities, DataOutcome } from '../activities/connection-activities.js';
import type { PollRequest } from '../activities/poll-activities.js';
import type { AccountsDetailOptions } from '../aggregator/schemas.js';
import type { ConnectionInput } from '../contract/connection-input.js';
import { authorize } from './authorize.js';
import type { ConnectionResult, ProductName } from './definitions.js';
import { connectionFailure } from './failures.js';
import { CALL_TIMEOUT_MS, pollUntilReady, TRANSIENT_RETRY, type PollObserver } from './polling.js';
import type { SessionOpen } from './session.js';
import type { StateRecorder } from './state-recorder.js';

/**
 * Data requests and polls are local activities: a poll is one short HTTP call, and recording it as a
 * marker keeps a poll to ~6 history events instead of ~11. Their retries are bounded by the
 * pending operation's deadline.
 *
 * Every retry backs off on a durable timer (`localRetryThreshold: 0`): the SDK records the failed
 * attempt as a marker that carries its attempt number, backoff and first schedule time, completes
 * the workflow task, sleeps on a timer, and then schedules the next attempt with the next number
 * and the same first schedule time (so the schedule-to-close deadline still counts from the first
 * attempt). With the default threshold (1 min) every backoff of TRANSIENT_RETRY (1 s to 30 s) would
 * happen in the worker's memory, inside one workflow task kept open by heartbeats for as long as
 * the failures last: queries wait for those heartbeats, and a worker killed meanwhile loses the
 * backoff, leaves the task to time out and the call starts again at attempt 1 elsewhere (issue 22).
 * Histories recorded either way replay under both settings: the threshold only decides, when an
 * attempt fails live, whether the SDK records it (marker and timer) or retries it in memory.
 * The cost: no attempt starts after the deadline, but a call still failing near it is reported as
 * timed out when its last backoff timer fires, up to one backoff (30 s at most) after the deadline.
 */
function localActivities(summary: string, deadline: number): ConnectionActivities {
  const options: LocalActivityOptions = {
    startToCloseTimeout: CALL_TIMEOUT_MS,
    scheduleToCloseTimeout: Math.max(1_000, deadline - Date.now()),
    retry: TRANSIENT_RETRY,
    localRetryThreshold: 0,
    summary,
  };
  return proxyLocalActivities<ConnectionActivities>(options);
}

export async function retrieveProducts({ customerId, session, products, timing }: ConnectionInput, open: SessionOpen, recorder: StateRecorder): Promise<ConnectionResult> {
  const loginId = open.login.Id;
  let result: ConnectionResult = { customerId, loginId, requestId: open.requestId, institution: recorder.state.institution, totalPolls: 0 };

  function observer(operation: string): PollObserver {
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

  function markRetrieved(product: ProductName): void {
    recorder.patch({ pending: undefined, retrieved: [...recorder.state.retrieved, product] });
  }

  function retrieveAccountsDetail(requestId: string, options: AccountsDetailOptions) {
    const operation = 'accounts detail';
    return pollUntilReady(
      operation,
      ({ deadline }) => localActivities('request accounts detail', deadline).requestAccountsDetail({ customerId, requestId, options }),
      ({ pollNumber, deadline }) => localActivities(`poll accounts detail #${pollNumber}`, deadline).pollAccountsDetail({ customerId, requestId }),
      (pendingRequestId) => ({ kind: 'accountsDetail', input: { customerId, requestId: pendingRequestId } }),
      timing,
      observer(operation),
    );
  }

  /** Investments and attributes: the same request, repeated while it answers 202. */
  function retrieveByRepeating<T>(operation: string, request: (activities: ConnectionActivities) => Promise<DataOutcome<T>>, pollRequest: () => PollRequest) {
    return pollUntilReady(
      operation,
      ({ deadline }) => request(localActivities(`request ${operation}`, deadline)),
      ({ pollNumber, deadline }) => request(localActivities(`poll ${operation} #${pollNumber}`, deadline)),
      pollRequest,
      timing,
      observer(operation),
    );
  }

  if (products.accountsDetail) {
    result = { ...result, accountsDetail: await retrieveAccountsDetail(open.requestId, products.accountsDetail) };
    markRetrieved('accountsDetail');
  }
  if (products.investments) {
    const input = { customerId, loginId, requestId: open.requestId };
    const investments = await retrieveByRepeating('investments', (activities) => activities.requestInvestments(input), () => ({ kind: 'investments', input }));
    result = { ...result, investments };
    markRetrieved('investments');
  }
  if (products.attributes) {
    const product = products.attributes;
    // Spec: attributes need a RequestId from a cached Authorize, and accounts detail retrieved for it.
    let requestId = open.requestId;
    if (session.kind !== 'cached') {
      const cached = await authorize('authorize (cached, for attributes)', (activities) => activities.openSession({ customerId, session: { kind: 'cached', loginId } }), {
        idempotent: true,
      });
      if (cached.kind !== 'session-open') throw connectionFailure('UnexpectedServiceAnswer', `cached Authorize answered ${cached.kind}`);
      requestId = cached.requestId;
      recorder.patch({ requestId });
    }
    if (!(products.accountsDetail && requestId === open.requestId)) await retrieveAccountsDetail(requestId, products.accountsDetail ?? {});
    const label = 'package' in product ? `attributes ${product.package}` : 'custom attributes';
    const input = { customerId, loginId, requestId, product };
    const attributes = await retrieveByRepeating(label, (activities) => activities.requestAttributes(input), () => ({ kind: 'attributes', input }));
    result = { ...result, requestId, attributes };
    markRetrieved('attributes');
  }
  return { ...result, totalPolls: recorder.state.totalPolls };
}
