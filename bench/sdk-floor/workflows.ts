/**
 * The shapes of the product's two latency paths with nothing of the product in them: no-op
 * activities, default data converter, no interceptors. What they cost on a machine is the floor that
 * Temporal's server and SDK set there (bench/sdk-floor.ts).
 */
import { condition, defineUpdate, proxyActivities, proxyLocalActivities, setHandler, sleep, upsertSearchAttributes } from '@temporalio/workflow';
import type { FloorActivities } from './activities.js';

const local = proxyLocalActivities<FloorActivities>({ startToCloseTimeout: '10s' });
/** As the product calls the service: through the task queue (its rate limits), never eagerly. */
const queued = proxyActivities<FloorActivities>({ startToCloseTimeout: '10s', allowEagerDispatch: false });

/** A cached accounts connection's calls in order; `call` says how its calls to the service run. */
async function connectionCalls(call: (value: string) => Promise<string>): Promise<string> {
  await local.echo('validate');
  upsertSearchAttributes({ ConnectionStatus: ['Authorizing'] });
  await call('authorize');
  await call('accounts detail');
  await local.echo('retention notice');
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
