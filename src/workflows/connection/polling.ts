/**
 * Poll-until-ready with a deadline. By default the wait between polls is a durable Temporal timer,
 * so a pending operation survives worker and server restarts; the deadline bounds both the polls
 * and any retries of transient errors made on the way. The other strategies hand the polls to an
 * activity once the first request answered "pending" (activities/poll-activities.ts).
 */
import { ApplicationFailure, sleep } from '@temporalio/workflow';
import type { ConnectionActivities } from '../../activities/connection-activities.js';
import type { DataOutcome } from '../../activities/connection-activity-types.js';
import type { PolledData, PollRequest } from '../../activities/poll-activities.js';
import type { PollStrategy } from '../../contract/connection/connection-input.js';
import type { DataWarning } from '../../aggregator/data-reader.js';
import { serviceDetailsOf } from './failures.js';
import { serviceActivities } from './service-queue.js';
import { SERVICE_CALL_RETRY } from '../../retry/activity-retry.js';

export interface PollTiming {
  readonly pollIntervalMs: number;
  readonly pollTimeoutMs: number;
  readonly pollStrategy?: PollStrategy | undefined;
}

/** What the loop reports so the workflow's state (and query) can show progress. */
export interface PollObserver {
  pending(progress: { code: string; pollCount: number; since: number; deadline: number; nextPollAt: number; strategy: PollStrategy }): void;
  /** `count` polls were made (more than one when an activity made them). */
  polled(count?: number): void;
}

/** A product's data once ready, and what of it its view could not read (kept as sent). */
export interface Retrieved<T> {
  readonly data: T;
  readonly warnings?: readonly DataWarning[] | undefined;
}

/** Calls upstream once; `deadline` bounds the call's own retries of transient errors. */
export type PollCall<T> = (attempt: { pollNumber: number; deadline: number }) => Promise<DataOutcome<T>>;

/**
 * Makes the first request, then polls while the answer is pending (202), `pollIntervalMs` after
 * each answer, until ready. The last poll is made at the deadline (`pollTimeoutMs` after the first
 * request); if that one is still pending, fails with `PollingTimedOut`. With the spec's defaults
 * that is 180 polls and a failure at 30 minutes.
 */
export async function pollUntilReady<T>(
  operation: string,
  first: PollCall<T>,
  poll: PollCall<T>,
  pollRequest: (requestId: string) => PollRequest,
  timing: PollTiming,
  observer: PollObserver,
): Promise<Retrieved<T>> {
  const since = Date.now();
  const deadline = since + timing.pollTimeoutMs;
  let pollCount = 0;
  let outcome = await waitOutLoading(operation, () => first({ pollNumber: 0, deadline }), timing, deadline);
  const strategy = timing.pollStrategy ?? 'timer';
  if (outcome.kind === 'pending' && strategy !== 'timer') {
    const polled = await pollInActivity<T>(operation, strategy, pollRequest(outcome.requestId), outcome.code, timing, { since, deadline }, observer);
    return { data: polled.data, warnings: polled.warnings };
  }

  while (outcome.kind === 'pending') {
    const remaining = deadline - Date.now();
    if (remaining <= 0) {
      throw ApplicationFailure.create({
        type: 'PollingTimedOut',
        message: `${operation} still pending (${outcome.code}) after ${pollCount} polls over ${Math.round((Date.now() - since) / 1000)} s; gave up at the ${Math.round(timing.pollTimeoutMs / 1000)} s limit`,
        nonRetryable: true,
        details: [{ operation, pollCount, code: outcome.code }],
      });
    }
    // The last wait is cut short so the final poll happens at the deadline, not after it.
    const wait = Math.min(timing.pollIntervalMs, remaining);
    observer.pending({ code: outcome.code, pollCount, since, deadline, nextPollAt: Date.now() + wait, strategy });
    await sleep(wait, { summary: `wait before ${operation} poll #${pollCount + 1}` });
    pollCount += 1;
    observer.polled();
    const pollNumber = pollCount;
    outcome = await waitOutLoading(operation, () => poll({ pollNumber, deadline }), timing, deadline);
  }
  return { data: outcome.data, warnings: outcome.warnings };
}

/** Answers whose remedy is "poll" (e.g. the session still loading) are waited out on a durable timer, within the same deadline. */
async function waitOutLoading<T>(operation: string, call: () => Promise<DataOutcome<T>>, timing: PollTiming, deadline: number): Promise<DataOutcome<T>> {
  for (;;) {
    try {
      return await call();
    } catch (error) {
      if (serviceDetailsOf(error)?.remedy !== 'poll' || Date.now() + timing.pollIntervalMs > deadline) throw error;
      await sleep(timing.pollIntervalMs, { summary: `wait for the session to load before ${operation}` });
    }
  }
}

/**
 * The polls, made by an activity: the workflow sleeps through them and wakes once, with the data.
 * With `activity-retry` one timer first (so the first attempt is poll #1, an interval after the
 * request), then each retry is a poll the server schedules; with `heartbeat` the activity sleeps
 * itself, and its heartbeat timeout notices a worker that died.
 */
async function pollInActivity<T>(
  operation: string,
  strategy: Exclude<PollStrategy, 'timer'>,
  request: PollRequest,
  code: string,
  timing: PollTiming,
  { since, deadline }: { since: number; deadline: number },
  observer: PollObserver,
): Promise<PolledData<T>> {
  const intervalMs = timing.pollIntervalMs;
  const firstWait = Math.max(0, Math.min(intervalMs, deadline - Date.now()));
  observer.pending({ code, pollCount: 0, since, deadline, nextPollAt: Date.now() + firstWait, strategy });
  const input = { operation, request, intervalMs, deadline };
  // Room past the deadline for the last poll and its typed PollingTimedOut; a timeout here means no worker made it.
  const bound = () => Math.max(1_000, deadline - Date.now() + intervalMs + CALL_TIMEOUT_MS);
  // A PollingTimedOut from the activity ends the connection with that type; so does reaching the bound.
  let polled: PolledData<unknown>;
  if (strategy === 'activity-retry') {
    if (firstWait > 0) await sleep(firstWait, { summary: `wait before ${operation} poll #1` });
    polled = await serviceActivities<ConnectionActivities>({
      startToCloseTimeout: CALL_TIMEOUT_MS,
      heartbeatTimeout: CALL_HEARTBEAT_TIMEOUT_MS,
      scheduleToCloseTimeout: bound(),
      // The activity sets each retry's delay itself (the interval, or less to land on the deadline).
      retry: { initialInterval: intervalMs, backoffCoefficient: 1, maximumInterval: intervalMs },
      summary: `poll ${operation} (a retry every ${intervalMs / 1000} s)`,
    }).pollByRetry(input);
  } else {
    polled = await serviceActivities<ConnectionActivities>({
      startToCloseTimeout: bound(),
      scheduleToCloseTimeout: bound(),
      heartbeatTimeout: Math.max(HEARTBEAT_TIMEOUT_FLOOR_MS, 3 * intervalMs),
      retry: SERVICE_CALL_RETRY,
      summary: `poll ${operation} every ${intervalMs / 1000} s (heartbeating)`,
    }).pollHeartbeating(input);
  }
  observer.polled(polled.pollCount);
  return polled as PolledData<T>;
}

/** One upstream call's bound, for the local activities of retrieval.ts and the polling activities alike. */
export const CALL_TIMEOUT_MS = 90_000;
/**
 * A call's activity heartbeats while its request is in flight (activities/in-flight-heartbeat.ts):
 * an attempt the server started that no worker runs (a worker killed mid-call, a task lost between
 * an overloaded server and its poller) is retried after this, not after CALL_TIMEOUT_MS.
 */
export const CALL_HEARTBEAT_TIMEOUT_MS = 15_000;
/** A heartbeating poller is declared dead after three silent intervals, and never sooner than this. */
const HEARTBEAT_TIMEOUT_FLOOR_MS = 10_000;
