/**
 * Poll-until-ready with durable timers and a deadline. The wait between polls is a Temporal timer,
 * so a pending operation survives worker and server restarts; the deadline bounds both the polls
 * and any retries of transient errors made on the way.
 */
import { ApplicationFailure, sleep } from '@temporalio/workflow';
import type { DataOutcome } from '../activities/connection-activities.js';
import { serviceDetailsOf } from './failures.js';

export interface PollTiming {
  readonly pollIntervalMs: number;
  readonly pollTimeoutMs: number;
}

/** What the loop reports so the workflow's state (and query) can show progress. */
export interface PollObserver {
  pending(progress: { code: string; pollCount: number; since: number; deadline: number; nextPollAt: number }): void;
  polled(): void;
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
  timing: PollTiming,
  observer: PollObserver,
): Promise<T> {
  const since = Date.now();
  const deadline = since + timing.pollTimeoutMs;
  let pollCount = 0;
  let outcome = await waitOutLoading(operation, () => first({ pollNumber: 0, deadline }), timing, deadline);

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
    observer.pending({ code: outcome.code, pollCount, since, deadline, nextPollAt: Date.now() + wait });
    await sleep(wait, { summary: `wait before ${operation} poll #${pollCount + 1}` });
    pollCount += 1;
    observer.polled();
    const pollNumber = pollCount;
    outcome = await waitOutLoading(operation, () => poll({ pollNumber, deadline }), timing, deadline);
  }
  return outcome.data;
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
