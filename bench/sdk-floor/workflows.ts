/**
 * The shapes of the product's two latency paths with nothing of the product in them: no-op
 * activities, default data converter, no interceptors. What they cost on a machine is the floor that
 * Temporal's server and SDK set there (bench/sdk-floor.ts). One shape makes the service's calls for
 * real, the plainest way, to tell what the calls cost from what the product adds (bench/floor-ratio.ts).
 */
import { condition, defineUpdate, proxyActivities, proxyLocalActivities, setHandler, sleep, upsertSearchAttributes } from '@temporalio/workflow';
import type { FloorActivities, FloorServiceActivities } from './activities.js';

const local = proxyLocalActivities<FloorActivities>({ startToCloseTimeout: '10s' });
/** As the product calls the service: through the task queue (its rate limits), never eagerly. */
const queued = proxyActivities<FloorActivities>({ startToCloseTimeout: '10s', allowEagerDispatch: false });
/** The calls shape's: a service that keeps refusing fails the run (its bench stops, saying why) instead of retrying forever. */
const service = proxyActivities<FloorServiceActivities>({ startToCloseTimeout: '10s', allowEagerDispatch: false, retry: { maximumAttempts: 3 } });

/**
 * A cached accounts connection's steps in order: a local activity (input validation), the status
 * upsert, its session's call, the accounts' call with that session, a local activity (retention notice).
 */
async function connectionSteps<Session, Data>(authorize: () => Promise<Session>, accountsDetail: (session: Session) => Promise<Data>): Promise<Data> {
  await local.echo('validate');
  upsertSearchAttributes({ ConnectionStatus: ['Authorizing'] });
  const data = await accountsDetail(await authorize());
  await local.echo('retention notice');
  return data;
}

/** The steps with each call a no-op `call`. */
async function connectionCalls(call: (value: string) => Promise<string>): Promise<string> {
  await connectionSteps(
    () => call('authorize'),
    () => call('accounts detail'),
  );
  return 'done';
}

/**
 * A cached accounts connection as the product runs it (bench/connection-timeline.ts shows its
 * history): a local activity (input validation), two activities through the task queue, never
 * eager (Authorize, accounts detail: the fleet's request budget governs them), a local activity
 * (retention notice).
 */
export function cachedConnectionShape(): Promise<string> {
  return connectionCalls(queued.echo);
}

/**
 * The same connection with every call a local activity, so the whole connection is one workflow
 * task: the floor of the fastest shape a cached connection could take (outside any budget).
 */
export function oneTaskConnectionShape(): Promise<string> {
  return connectionCalls(local.echo);
}

/** Where the service is and whose login the calls shape retrieves. */
export interface ServiceLogin {
  readonly baseUrl: string;
  readonly customerId: string;
  readonly loginId: string;
}

/**
 * The cached connection's shape with its two calls made for real (a cached Authorize, then
 * GetAccountsDetail of its session), the plainest way (activities.ts `serviceCall`): the floor plus
 * what the service's calls cost, nothing of the product's own. Returns the accounts, as the
 * product's connection returns its data.
 */
export function cachedConnectionCallsShape({ baseUrl, customerId, loginId }: ServiceLogin): Promise<unknown> {
  const banking = `${baseUrl}/v3/${encodeURIComponent(customerId)}/BankingServices`;
  return connectionSteps(
    async () => (await service.serviceCall({ url: `${banking}/Authorize`, body: { LoginId: loginId, MostRecentCached: true } })) as { RequestId: string },
    (session) => service.serviceCall({ url: `${banking}/GetAccountsDetail`, body: { RequestId: session.RequestId } }),
  );
}

/** Nothing at all: what any workflow costs start→result here, before it calls anything. */
export function emptyShape(): Promise<string> {
  return Promise.resolve('done');
}

export const answerUpdate = defineUpdate<string, [string]>('answer');

/** An answer: the update's handler sends it (an activity) and returns the service's reply. */
export async function answerShape(): Promise<void> {
  let answered = 0;
  setHandler(answerUpdate, async (answer) => {
    const reply = await queued.echo(answer);
    answered += 1;
    return reply;
  });
  await condition(() => answered >= 1_000_000);
}

/** A pending operation polled the product's default way: a durable timer, then the poll (an activity), `polls` times. */
export async function timerPollShape(polls: number, intervalMs: number): Promise<number> {
  for (let poll = 1; poll <= polls; poll += 1) {
    await sleep(intervalMs);
    await queued.echo(`poll ${poll}`);
  }
  return polls;
}

/** A pending operation polled by one heartbeating activity that loops (no poll of its own): the floor of the heartbeat strategy. */
export async function heartbeatPollShape(polls: number, intervalMs: number): Promise<number> {
  const { heartbeatPolls } = proxyActivities<FloorActivities>({ startToCloseTimeout: '30 minutes', heartbeatTimeout: intervalMs * 2 + 10_000 });
  return await heartbeatPolls(polls, intervalMs);
}
