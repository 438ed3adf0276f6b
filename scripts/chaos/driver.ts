/**
 * Drives one connection the way the pipeline would, through the chaos: start it with the pipeline
 * client, answer whatever challenge set is current (by update or by signal), and wait for its end.
 * Temporal being briefly unreachable (the server restart) or slow (no worker for a moment) is the
 * chaos itself, not the connection's fault: those calls are retried and counted, never judged.
 */
import { isGrpcServiceError, ServiceError, WorkflowNotFoundError, WorkflowUpdateRPCTimeoutOrCancelledError } from '@temporalio/client';
import type { Client, Connection } from '@temporalio/client';
import { setTimeout as delay } from 'node:timers/promises';
import {
  AnswerRejectedError,
  ConnectionAlreadyEndedError,
  ConnectionFailedError,
  ConnectionNotFoundError,
  TemporalUnavailableError,
} from '../../src/client/index.js';
import type { ChallengeSet, ConnectionEndType, ConnectionResult, ConnectionsClient, ConnectionState } from '../../src/client/index.js';
import { answerChallengeSignal } from '../../src/contract/connection/connection-definitions.js';
import { diagnoseStuck, type StuckDiagnosis } from './diagnosis.js';
import { countCode, failureCodeOf } from './grpc-codes.js';
import { answerFor, connectionInput, scenarioFor, type ConnectionPlan, type ListedScenario, type RunTiming } from './flows.js';

/** How often the driver reads the state of a connection that may present challenges. */
const STATE_POLL_MS = 250;
/** A single query or signal; a query waits for a worker, and there may be none for a moment. */
const CALL_TIMEOUT_MS = 10_000;
/** After the deadline, how long the driver keeps trying to learn where a connection stands. */
const FINAL_PROBE_MS = 20_000;
const RETRY_MIN_MS = 200;
const RETRY_MAX_MS = 2_000;

export class DriverError extends Error {
  override readonly name = 'DriverError';
}

export interface DriverContext {
  readonly connections: ConnectionsClient;
  /** The same Temporal client, for the signal (the pipeline client answers by update only). */
  readonly client: Client;
  readonly connection: Connection;
  readonly listing: ReadonlyMap<string, ListedScenario>;
  /** The sandbox itself (not the proxy): saved logins are made through its admin API. */
  readonly sandboxUrl: string;
  readonly timing: RunTiming;
  /** Epoch ms: a connection not ended by then is stuck. */
  readonly deadline: number;
  /** Epoch ms the start schedule counts from. */
  readonly origin: number;
  /**
   * Besides the driver's own reads, every running connection's state is queried this often, as
   * operators' consoles and dashboards watching everything would (`--query-every-ms`); 0 or absent: not.
   */
  readonly queryEveryMs?: number;
  /** Challenges are answered only once this resolves (keys-check: after the key rotation); absent: at once. */
  readonly answersHeldUntil?: Promise<void>;
}

export type ConnectionEnd =
  | { readonly kind: 'completed'; readonly result: ConnectionResult }
  | { readonly kind: 'failed'; readonly type: ConnectionEndType; readonly serviceCode?: string | undefined; readonly message: string }
  /** Still running at the deadline, with what the server says of it then (or why it could not be read). */
  | {
      readonly kind: 'running';
      readonly state?: ConnectionState | undefined;
      readonly stateError?: string | undefined;
      readonly diagnosis?: StuckDiagnosis | undefined;
      readonly diagnosisError?: string | undefined;
    }
  /** Temporal says it does not exist although it was started: lost. */
  | { readonly kind: 'not-found'; readonly message: string }
  /** The driver never learned: Temporal unreachable to it, or the start never went through. */
  | { readonly kind: 'unknown'; readonly message: string };

export interface AnswerRecord {
  readonly challengeSetId: string;
  readonly channel: 'update' | 'signal';
  /** accepted / rejected / ended / another outcome the workflow gave; signalled; refused: why; error: why. */
  readonly result: string;
  readonly atMs: number;
}

export interface DriveRecord {
  readonly plan: ConnectionPlan;
  readonly workflowId: string;
  startedAtMs?: number;
  endedAtMs?: number;
  end: ConnectionEnd;
  readonly answers: AnswerRecord[];
  /** Calls retried because Temporal was unreachable or timed out, by kind. */
  readonly transient: Map<string, number>;
  /** State queries that failed, by gRPC code name (grpc-codes.ts): FAILED_PRECONDITION means its workflow task is failing. */
  readonly failedQueries: Map<string, number>;
  /** Anything else that went wrong in the driver, each distinct message with how often, for the report. */
  readonly notes: Map<string, number>;
  /** The state watcher's queries (`queryEveryMs`); undefined when there was none. */
  watch?: WatchRecord;
}

/** What one connection's state watcher did, from its start until its end (or the deadline). */
export interface WatchRecord {
  /** Queries sent. */
  sent: number;
  /** How long each answered one took, in ms. */
  readonly latenciesMs: number[];
  /** Failed ones by gRPC code name (also counted in the record's failedQueries). */
  readonly failed: Map<string, number>;
  /** Ticks that came while the previous query was still out: not sent (one query in flight per connection). */
  skippedTicks: number;
}

const TRANSIENT_GRPC_CODES = new Set([
  1 /* CANCELLED */, 2 /* UNKNOWN */, 4 /* DEADLINE_EXCEEDED */, 8 /* RESOURCE_EXHAUSTED */, 10 /* ABORTED */, 13 /* INTERNAL */, 14 /* UNAVAILABLE */,
]);
const GRPC_NAMES: Record<number, string> = {
  1: 'CANCELLED',
  2: 'UNKNOWN',
  4: 'DEADLINE_EXCEEDED',
  8: 'RESOURCE_EXHAUSTED',
  10: 'ABORTED',
  13: 'INTERNAL',
  14: 'UNAVAILABLE',
};

/**
 * "Temporal could not answer this call now" (server down or restarting, deadline passed, no worker
 * to answer a query in time), by name; undefined for anything else.
 */
export function transientKind(error: unknown): string | undefined {
  for (let current: unknown = error, depth = 0; current instanceof Error && depth < 5; current = current.cause, depth++) {
    if (isGrpcServiceError(current)) return TRANSIENT_GRPC_CODES.has(current.code) ? (GRPC_NAMES[current.code] ?? `gRPC ${current.code}`) : undefined;
    if (current instanceof WorkflowUpdateRPCTimeoutOrCancelledError) return 'update call timed out';
  }
  if (error instanceof TemporalUnavailableError || error instanceof ServiceError) return 'Temporal unavailable';
  return undefined;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

function note(record: DriveRecord, text: string): void {
  const seen = record.notes.get(text);
  if (seen !== undefined || record.notes.size < 8) record.notes.set(text, (seen ?? 0) + 1);
}

function countTransient(record: DriveRecord, kind: string): void {
  record.transient.set(kind, (record.transient.get(kind) ?? 0) + 1);
}

/**
 * The pipeline client's result() rides out DEADLINE_EXCEEDED for up to 10 minutes; past a deadline
 * set with withDeadline every attempt fails at once, so without this a connection still running at
 * the deadline held the run 10 minutes (beyond the test's limit: no report, no diagnosis).
 */
function untilDeadline(deadline: number): { signal: AbortSignal } {
  return { signal: AbortSignal.timeout(Math.max(1, deadline - Date.now())) };
}

/** Backoff between retries of one call, so a restarting server is not hammered. */
function backoff(attempt: number): number {
  return Math.min(RETRY_MAX_MS, RETRY_MIN_MS * 2 ** Math.min(attempt, 4));
}

async function createSavedLogin(sandboxUrl: string, customerId: string, username: string): Promise<string> {
  const response = await fetch(`${sandboxUrl}/sandbox/${encodeURIComponent(customerId)}/logins`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username }),
  });
  if (!response.ok)
    throw new DriverError(`the sandbox refused a saved login for ${username} (tenant ${customerId}): HTTP ${response.status} ${await response.text()}`);
  return ((await response.json()) as { LoginId: string }).LoginId;
}

export async function driveConnection(context: DriverContext, plan: ConnectionPlan): Promise<DriveRecord> {
  const record: DriveRecord = {
    plan,
    workflowId: plan.key,
    end: { kind: 'unknown', message: 'not started' },
    answers: [],
    transient: new Map(),
    failedQueries: new Map(),
    notes: new Map(),
  };
  const wait = context.origin + plan.startAtMs - Date.now();
  if (wait > 0) await delay(wait);

  const scenario = scenarioFor(context.listing, plan.flow.username);
  const loginId = plan.flow.session === 'live' ? undefined : await createSavedLogin(context.sandboxUrl, plan.customerId, plan.flow.username);
  const input = connectionInput(plan, scenario, context.timing, loginId);

  if (!(await startConnection(context, record, input))) return record;
  record.startedAtMs = Date.now() - context.origin;

  let ended = false;
  const endPromise = awaitEnd(context, record).finally(() => {
    ended = true;
  });
  const stopWatching = new AbortController();
  const watching = (context.queryEveryMs ?? 0) > 0 ? watchState(context, record, stopWatching.signal) : undefined;
  try {
    if (plan.flow.answers !== 'never') await answerUntilEnded(context, record, scenario, () => ended, endPromise);
    record.end = await endPromise;
    if (record.end.kind === 'completed' || record.end.kind === 'failed') record.endedAtMs = Date.now() - context.origin;
  } finally {
    // Its last query may still be out (at most CALL_TIMEOUT_MS): counted, not cut short.
    stopWatching.abort();
    await watching;
  }
  return record;
}

/** Starts it (idempotent by business key, so a start whose fate is unknown is simply sent again). */
async function startConnection(context: DriverContext, record: DriveRecord, input: ReturnType<typeof connectionInput>): Promise<boolean> {
  for (let attempt = 0; ; attempt++) {
    try {
      await context.connection.withDeadline(Date.now() + CALL_TIMEOUT_MS, () => context.connections.start(record.plan.key, input, { rerun: 'never' }));
      return true;
    } catch (error) {
      // An earlier attempt did start it and it already ended: it is started.
      if (error instanceof ConnectionAlreadyEndedError) return true;
      const kind = transientKind(error);
      if (kind === undefined) {
        record.end = { kind: 'unknown', message: `could not start: ${messageOf(error)}` };
        return false;
      }
      countTransient(record, `start: ${kind}`);
      if (Date.now() >= context.deadline) {
        record.end = { kind: 'unknown', message: `could not start before the deadline: Temporal kept answering ${kind}` };
        return false;
      }
      await delay(backoff(attempt));
    }
  }
}

/** Waits for the result (a long poll on the server), retrying through restarts, until the deadline. */
async function awaitEnd(context: DriverContext, record: DriveRecord): Promise<ConnectionEnd> {
  for (let attempt = 0; Date.now() < context.deadline; attempt++) {
    try {
      const result = await context.connection.withDeadline(context.deadline, () =>
        context.connections.result(record.workflowId, untilDeadline(context.deadline)),
      );
      return { kind: 'completed', result };
    } catch (error) {
      if (error instanceof ConnectionFailedError) return { kind: 'failed', type: error.type, serviceCode: error.serviceCode, message: error.reason };
      // Aborted at the deadline: the probe below says where it stands.
      if (Date.now() >= context.deadline) break;
      const kind = transientKind(error);
      if (kind !== undefined) countTransient(record, `result: ${kind}`);
      else note(record, `waiting for the result: ${messageOf(error)}`);
      await delay(backoff(attempt));
    }
  }
  return probeAtDeadline(context, record);
}

/** At the deadline: is it still running (stuck), gone (lost), or can the driver not tell? */
async function probeAtDeadline(context: DriverContext, record: DriveRecord): Promise<ConnectionEnd> {
  const until = Date.now() + FINAL_PROBE_MS;
  let last = 'no answer in time';
  for (let attempt = 0; Date.now() < until; attempt++) {
    try {
      const summary = await context.connection.withDeadline(Date.now() + CALL_TIMEOUT_MS, () => context.connections.describe(record.workflowId));
      if (summary.executionStatus !== 'RUNNING') {
        // It ended just now: read how.
        try {
          const result = await context.connection.withDeadline(Date.now() + CALL_TIMEOUT_MS, () =>
            context.connections.result(record.workflowId, untilDeadline(Date.now() + CALL_TIMEOUT_MS)),
          );
          return { kind: 'completed', result };
        } catch (error) {
          if (error instanceof ConnectionFailedError) return { kind: 'failed', type: error.type, serviceCode: error.serviceCode, message: error.reason };
          throw error;
        }
      }
      let stateRead: { state: ConnectionState } | { stateError: string };
      try {
        stateRead = { state: await context.connection.withDeadline(Date.now() + CALL_TIMEOUT_MS, () => context.connections.getState(record.workflowId)) };
      } catch (error) {
        countCode(record.failedQueries, failureCodeOf(error));
        stateRead = { stateError: messageOf(error) };
      }
      // Stuck: read why while the server still has it as it is (the run's report and kept files show it).
      try {
        return { kind: 'running', ...stateRead, diagnosis: await diagnoseStuck(context.client, record.workflowId) };
      } catch (error) {
        return { kind: 'running', ...stateRead, diagnosisError: messageOf(error) };
      }
    } catch (error) {
      if (error instanceof ConnectionNotFoundError) return { kind: 'not-found', message: messageOf(error) };
      last = messageOf(error);
      await delay(backoff(attempt));
    }
  }
  return { kind: 'unknown', message: `at the deadline the driver could not learn where it stands: ${last}` };
}

/** Resolves after `ms`, or at once when `signal` aborts (never rejects). */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return delay(ms, undefined, { signal }).catch(() => undefined);
}

/**
 * The state watcher of one running connection: its state query every `queryEveryMs` from its start
 * until its end is known or the deadline, at most one in flight (a tick that comes while the last
 * query is still out is skipped and counted, as a console waits for its last refresh). Each failure
 * is counted by gRPC code name, in the record's failedQueries with the driver's own.
 */
async function watchState(context: DriverContext, record: DriveRecord, stop: AbortSignal): Promise<void> {
  const every = context.queryEveryMs ?? 0;
  const watch: WatchRecord = { sent: 0, latenciesMs: [], failed: new Map(), skippedTicks: 0 };
  record.watch = watch;
  let next = Date.now() + every;
  while (!stop.aborted) {
    await sleep(next - Date.now(), stop);
    if (stop.aborted || Date.now() >= context.deadline) break;
    const sentAt = Date.now();
    watch.sent += 1;
    try {
      await context.connection.withDeadline(sentAt + CALL_TIMEOUT_MS, () => context.connections.getState(record.workflowId));
      watch.latenciesMs.push(Date.now() - sentAt);
    } catch (error) {
      const code = failureCodeOf(error);
      countCode(watch.failed, code);
      countCode(record.failedQueries, code);
    }
    next += every;
    const now = Date.now();
    if (next <= now) {
      const missed = Math.floor((now - next) / every) + 1;
      watch.skippedTicks += missed;
      next += missed * every;
    }
  }
}

/**
 * Answers every challenge set the connection presents, once each: a set counts as answered when the
 * update returned, the signal was delivered, or the workflow said an answer is already in flight.
 * A call that failed because Temporal was unreachable leaves the set unanswered: the state read next
 * decides (if the answer did arrive, the set is no longer awaiting one; the workflow refuses a second).
 */
async function answerUntilEnded(
  context: DriverContext,
  record: DriveRecord,
  scenario: ListedScenario,
  hasEnded: () => boolean,
  endPromise: Promise<unknown>,
): Promise<void> {
  const answered = new Set<string>();
  let hint: ChallengeSet | undefined;
  let attempt = 0;
  let failures = 0;
  const { plan } = record;
  const pause = (ms: number) => Promise.race([endPromise, delay(ms)]);
  let held = context.answersHeldUntil;

  while (!hasEnded() && Date.now() < context.deadline) {
    let set: ChallengeSet | undefined;
    if (hint !== undefined && !answered.has(hint.id)) set = hint;
    hint = undefined;
    if (set === undefined) {
      try {
        const state = await context.connection.withDeadline(Date.now() + CALL_TIMEOUT_MS, () => context.connections.getState(record.workflowId));
        failures = 0;
        if (state.status === 'AwaitingAnswer' && state.challengeSet && !answered.has(state.challengeSet.id)) set = state.challengeSet;
      } catch (error) {
        countCode(record.failedQueries, failureCodeOf(error));
        const kind = transientKind(error);
        if (kind !== undefined) countTransient(record, `state: ${kind}`);
        else if (!(error instanceof ConnectionNotFoundError)) note(record, `reading the state: ${messageOf(error)}`);
        await pause(backoff(failures++));
        continue;
      }
    }
    if (set === undefined) {
      await pause(STATE_POLL_MS);
      continue;
    }
    if (held) {
      // Held: the set may change meanwhile (a restart re-presents it), so it is read again after.
      await Promise.race([endPromise, held]);
      held = undefined;
      continue;
    }

    attempt += 1;
    const responses = answerFor(scenario, set.challenges, plan.flow.answers, attempt);
    const atMs = Date.now() - context.origin;
    if (responses === undefined) {
      answered.add(set.id);
      const prompts = set.challenges.map((challenge) => `${challenge.Type} "${challenge.Prompt}"`).join(', ');
      note(record, `no step of ${scenario.username} in the sandbox's listing matches challenge set ${set.id}: ${prompts}`);
      record.answers.push({ challengeSetId: set.id, channel: plan.channel, result: 'no listed answer', atMs });
      continue;
    }
    const challengeSetId = set.id;

    if (plan.channel === 'update') {
      try {
        const outcome = await context.connection.withDeadline(context.deadline, () =>
          context.connections.answer(record.workflowId, { challengeSetId, responses }),
        );
        answered.add(challengeSetId);
        record.answers.push({ challengeSetId, channel: 'update', result: outcome.outcome, atMs });
        // The verdict may carry the next set (the next round, or the same challenges after a refusal).
        if ('nextChallengeSet' in outcome && outcome.nextChallengeSet) hint = outcome.nextChallengeSet;
      } catch (error) {
        if (error instanceof AnswerRejectedError) {
          // The set changed under us (stale) or an answer is already in flight: read the state again.
          if (/already being processed/.test(error.problem)) answered.add(challengeSetId);
          record.answers.push({ challengeSetId, channel: 'update', result: `refused: ${error.problem}`, atMs });
        } else {
          const kind = transientKind(error);
          if (kind !== undefined) countTransient(record, `answer: ${kind}`);
          else note(record, `answering set ${challengeSetId}: ${messageOf(error)}`);
          record.answers.push({ challengeSetId, channel: 'update', result: `error: ${kind ?? messageOf(error)}`, atMs });
          await pause(backoff(failures++));
        }
      }
    } else {
      try {
        await context.connection.withDeadline(Date.now() + CALL_TIMEOUT_MS, () =>
          context.client.workflow.getHandle(record.workflowId).signal(answerChallengeSignal, { challengeSetId, responses }),
        );
        answered.add(challengeSetId);
        record.answers.push({ challengeSetId, channel: 'signal', result: 'signalled', atMs });
      } catch (error) {
        const kind = transientKind(error);
        if (kind !== undefined) countTransient(record, `signal: ${kind}`);
        else if (!(error instanceof WorkflowNotFoundError)) note(record, `signalling set ${challengeSetId}: ${messageOf(error)}`);
        record.answers.push({ challengeSetId, channel: 'signal', result: `error: ${kind ?? messageOf(error)}`, atMs });
        await pause(backoff(failures++));
      }
    }
  }
}
