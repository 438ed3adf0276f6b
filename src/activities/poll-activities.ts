/**
 * The two polling strategies that keep a pending operation's polls out of the workflow (the default
 * polls on durable workflow timers, see workflows/polling.ts):
 * - `pollByRetry`: one poll per attempt; "still pending" is a retryable failure, so Temporal's server
 *   makes the next poll after the retry interval. No workflow task and no history event per poll.
 * - `pollHeartbeating`: one long activity that sleeps and polls in a loop, heartbeating its poll
 *   count; a retry after a worker crash resumes from the last heartbeat.
 * Both are given the first request's pending answer by the workflow and make polls #1, #2, ...
 */
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { ServiceFailureDetails } from '../aggregator/failure-table.js';
import type { AccountsDetailResponse, AttributesResponse, InvestmentsResponse } from '../aggregator/schemas.js';
import type { AttributesInput, DataOutcome, LoginDataInput, SessionDataInput } from './connection-activity-types.js';
import { whileHeartbeating } from './in-flight-heartbeat.js';
import type { DataWarning } from '../aggregator/data-reader.js';

/** Which call a poll repeats: accounts detail polls its async endpoint; investments and attributes repeat their request. */
export type PollRequest =
  | { readonly kind: 'accountsDetail'; readonly input: SessionDataInput }
  | { readonly kind: 'investments'; readonly input: LoginDataInput }
  | { readonly kind: 'attributes'; readonly input: AttributesInput };

export interface PollInActivityInput {
  /** For messages: "accounts detail", "investments", ... */
  readonly operation: string;
  readonly request: PollRequest;
  readonly intervalMs: number;
  /** Epoch ms: the last poll is made here; still pending then is PollingTimedOut. */
  readonly deadline: number;
}

export interface PolledData<T> {
  readonly requestId: string;
  readonly data: T;
  /** What the view could not read of the data (kept as sent); absent when none. */
  readonly warnings?: readonly DataWarning[] | undefined;
  /** Polls this activity made (all attempts), the first request not counted. */
  readonly pollCount: number;
}

/** The calls a poll may repeat, as connection-activities.ts makes them (they count each poll: aggregation_polls). */
export interface PollCalls {
  pollAccountsDetail(input: SessionDataInput): Promise<DataOutcome<AccountsDetailResponse>>;
  requestInvestments(input: LoginDataInput): Promise<DataOutcome<InvestmentsResponse>>;
  requestAttributes(input: AttributesInput): Promise<DataOutcome<AttributesResponse>>;
}

type AnyData = AccountsDetailResponse | InvestmentsResponse | AttributesResponse;

/** What a heartbeat carries; read back, after a crash, as untrusted input. */
interface PollProgress {
  readonly pollCount: number;
  readonly code: string;
}

function progressOf(details: unknown): PollProgress | undefined {
  if (typeof details !== 'object' || details === null) return undefined;
  const { pollCount, code } = details as Partial<PollProgress>;
  return typeof pollCount === 'number' && Number.isInteger(pollCount) && pollCount >= 0 && typeof code === 'string' ? { pollCount, code } : undefined;
}

function pollingTimedOut(operation: string, pollCount: number, code: string): ApplicationFailure {
  return ApplicationFailure.create({
    type: 'PollingTimedOut',
    message: `${operation} still pending (${code}) after ${pollCount} polls; gave up at the deadline`,
    nonRetryable: true,
    details: [{ operation, pollCount, code }],
  });
}

export function createPollActivities(calls: PollCalls) {
  /** Poll #pollNumber. An answer whose remedy is "poll" (SESSION_LOADING) counts as pending, as the timer strategy waits it out. */
  async function pollOnce({ request }: PollInActivityInput, pollNumber: number): Promise<DataOutcome<AnyData>> {
    try {
      switch (request.kind) {
        case 'accountsDetail':
          return await calls.pollAccountsDetail(request.input);
        case 'investments':
          return await calls.requestInvestments({ ...request.input, pollNumber });
        case 'attributes':
          return await calls.requestAttributes({ ...request.input, pollNumber });
      }
    } catch (error) {
      const details = error instanceof ApplicationFailure ? (error.details?.[0] as Partial<ServiceFailureDetails> | undefined) : undefined;
      if (details?.remedy === 'poll')
        return {
          kind: 'pending',
          requestId: details.requestId ?? request.input.requestId,
          code: details.serviceCode ?? 'SESSION_LOADING',
          message: (error as Error).message,
        };
      throw error;
    }
  }

  return {
    /** Attempt N is poll #N. Still pending: a retryable failure whose next retry lands on the interval, or on the deadline if sooner. */
    async pollByRetry(input: PollInActivityInput): Promise<PolledData<AnyData>> {
      const pollCount = Context.current().info.attempt;
      const outcome = await whileHeartbeating(() => pollOnce(input, pollCount));
      if (outcome.kind === 'ready') return polledData(outcome, pollCount);
      const remaining = input.deadline - Date.now();
      if (remaining <= 0) throw pollingTimedOut(input.operation, pollCount, outcome.code);
      throw ApplicationFailure.create({
        type: 'OperationStillPending',
        message: `${input.operation} still pending (${outcome.code}) at poll #${pollCount}`,
        details: [{ operation: input.operation, pollCount, code: outcome.code }],
        nextRetryDelay: Math.min(input.intervalMs, remaining),
      });
    },

    /** Sleeps, polls, heartbeats its progress; a retry (worker crash, transient error) resumes the count. */
    async pollHeartbeating(input: PollInActivityInput): Promise<PolledData<AnyData>> {
      const context = Context.current();
      const resumed = progressOf(context.info.heartbeatDetails);
      let pollCount = resumed?.pollCount ?? 0;
      let code = resumed?.code ?? 'pending';
      for (;;) {
        const progress: PollProgress = { pollCount, code };
        context.heartbeat(progress);
        const wait = Math.min(input.intervalMs, input.deadline - Date.now());
        if (wait > 0) await context.sleep(wait);
        pollCount += 1;
        // Heartbeats in flight repeat the progress so far: a retry resumes from it, not from nothing.
        const outcome = await whileHeartbeating(
          () => pollOnce(input, pollCount),
          () => progress,
        );
        if (outcome.kind === 'ready') return polledData(outcome, pollCount);
        code = outcome.code;
        if (Date.now() >= input.deadline) throw pollingTimedOut(input.operation, pollCount, code);
      }
    },
  };
}

export type PollActivities = ReturnType<typeof createPollActivities>;

function polledData(outcome: Extract<DataOutcome<AnyData>, { kind: 'ready' }>, pollCount: number): PolledData<AnyData> {
  return { requestId: outcome.requestId, data: outcome.data, pollCount, ...(outcome.warnings ? { warnings: outcome.warnings } : {}) };
}
