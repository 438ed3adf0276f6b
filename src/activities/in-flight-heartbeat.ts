/**
 * Heartbeats while a call to the service is in flight. The server counts an activity's heartbeat
 * timeout from its start, so with a heartbeat timeout set, an attempt the server marked started but
 * no worker runs (a worker killed mid-call, or a task whose poll reply never reached a worker while
 * the server was overloaded) is retried within that timeout instead of at the start-to-close one
 * (90 s for a data call). A call that ends within the first interval sends no heartbeat at all.
 */
import { Context } from '@temporalio/activity';

/** How often a call in flight heartbeats; the SDK throttles what reaches the server itself. */
export const IN_FLIGHT_HEARTBEAT_MS = 1_000;

/**
 * Runs `send`, heartbeating each `IN_FLIGHT_HEARTBEAT_MS` until it settles. `details` gives what
 * each heartbeat carries: an activity that resumes from its heartbeat details (pollHeartbeating)
 * repeats its own, since a heartbeat replaces the details the server keeps. Local activities cannot
 * heartbeat (and have no heartbeat timeout), so they only run `send`.
 */
export async function whileHeartbeating<T>(send: () => Promise<T>, details?: () => unknown): Promise<T> {
  const context = Context.current();
  if (context.info.isLocal) return send();
  const heartbeats = setInterval(() => context.heartbeat(details?.()), IN_FLIGHT_HEARTBEAT_MS);
  try {
    return await send();
  } finally {
    clearInterval(heartbeats);
  }
}

/** Each of `activities`, heartbeating while it runs (with no details): one activity is one call. */
export function heartbeatingEach<Activities extends Record<string, (input: never) => Promise<unknown>>>(activities: Activities): Activities {
  const wrapped: Record<string, (input: never) => Promise<unknown>> = {};
  for (const [name, run] of Object.entries(activities)) wrapped[name] = (input) => whileHeartbeating(() => run(input));
  return wrapped as Activities;
}
