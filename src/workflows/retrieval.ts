/**
 * Retrieving the connection's products once its session is open: accounts detail, investments and
 * attributes, each polled on durable timers while the service answers 202. Data calls are read-only,
 * so their transient failures are retried (by Temporal, within the pending operation's deadline);
 * how each call is made (an activity under the fleet's budget) is service-calls.ts's decision.
 */
import type { ConnectionActivities, DataOutcome } from '../activities/connection-activities.js';
import type { PollRequest } from '../activities/poll-activities.js';
import type { AccountsDetailOptions } from '../aggregator/schemas.js';
import type { ConnectionInput } from '../contract/connection-input.js';
import { authorize } from './authorize.js';
import type { ConnectionResult, ProductName } from './definitions.js';
import { connectionFailure } from './failures.js';
import { pollUntilReady, type PollObserver } from './polling.js';
import { dataCalls, type ServiceCallShape } from './service-calls.js';
import type { SessionOpen } from './session.js';
import type { StateRecorder } from './state-recorder.js';

export async function retrieveProducts(
  { customerId, session, products, timing }: ConnectionInput,
  open: SessionOpen,
  recorder: StateRecorder,
  shape: ServiceCallShape,
): Promise<ConnectionResult> {
  const calls = (summary: string, deadline: number) => dataCalls(shape, summary, deadline);
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
      ({ deadline }) => calls('request accounts detail', deadline).requestAccountsDetail({ customerId, requestId, options }),
      ({ pollNumber, deadline }) => calls(`poll accounts detail #${pollNumber}`, deadline).pollAccountsDetail({ customerId, requestId }),
      (pendingRequestId) => ({ kind: 'accountsDetail', input: { customerId, requestId: pendingRequestId } }),
      timing,
      observer(operation),
    );
  }

  /** Investments and attributes: the same request, repeated while it answers 202. */
  function retrieveByRepeating<T>(operation: string, request: (activities: ConnectionActivities) => Promise<DataOutcome<T>>, pollRequest: () => PollRequest) {
    return pollUntilReady(
      operation,
      ({ deadline }) => request(calls(`request ${operation}`, deadline)),
      ({ pollNumber, deadline }) => request(calls(`poll ${operation} #${pollNumber}`, deadline)),
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
        waitOutRateLimits: shape === 'activities',
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
