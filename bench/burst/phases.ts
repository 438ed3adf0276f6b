/**
 * What a burst run does on its stack: saved logins, scheduled refreshes started at planned times,
 * live connections driven by the operator script (each challenge answered as soon as it appears,
 * each answer timed), waiting for a phase's connections to end (Temporal visibility), and what
 * became of each (its execution status, start and close time).
 */
import { setTimeout as delay } from 'node:timers/promises';
import { performance } from 'node:perf_hooks';
import proto from '@temporalio/proto';
import { connectionKey, type ConnectionInputArgs } from '../../src/client/index.js';
import { CONNECTION_WORKFLOW_TYPE } from '../../src/contract/connection/connection-definitions.js';
import { TENANT_THROTTLE_WORKFLOW_TYPE } from '../../src/contract/throttle/tenant-throttle-definitions.js';
import { CustomerIdKey } from '../../src/contract/search-attributes.js';
import { answerFor, type ListedScenario } from '../../scripts/chaos/flows.js';
import { median } from '../bench-processes.js';
import { eventTimeMs } from '../sandbox-fixtures.js';
import type { Stack } from './stack.js';

/** Every connection polls once a second while its data is pending; nothing times out within a run. */
const TIMING = { pollIntervalMs: 1_000, pollTimeoutMs: 2 * 60 * 60_000, answerTimeoutMs: 2 * 60 * 60_000 } as const;
const START_ATTEMPTS = 5;
/** Start calls in flight at once (a start is one short gRPC call; this only bounds a stall). */
const START_CONCURRENCY = 64;
/** The operator gives up on a connection that keeps presenting challenges (it never should). */
const MAX_ANSWERS = 10;
/** The live end user's scenario: a token code, then a security question (two answers each). */
export const LIVE_USERNAME = 'token_code';

export type Phase = 'idle' | 'alone' | 'burst' | 'night';
export type Group = 'a' | 'b' | 'live';

export interface Planned {
  readonly workflowId: string;
  readonly tenant: string;
  readonly group: Group;
  readonly phase: Phase;
  /** Why its start (or, live, its first step) could not be made: it counts as lost unless Temporal knows it. */
  problem?: string;
}

/** One timed step of a live connection: how long it took, which connection, when it began (epoch ms). */
export interface LiveSpan {
  readonly ms: number;
  readonly workflowId: string;
  readonly atMs: number;
}

export interface LiveTimes {
  /** Per answer: submission → the update's outcome (through the Authorize). */
  readonly answers: LiveSpan[];
  /** Per connection: start → its first challenge (update-with-start). */
  readonly firstChallenges: LiveSpan[];
  /** What the operator could not do (a challenge with no listed answer, an update that failed). */
  readonly problems: string[];
}

export function newLiveTimes(): LiveTimes {
  return { answers: [], firstChallenges: [], problems: [] };
}

/** The spans' times (ms), for their spread. */
export function durationsOf(spans: readonly LiveSpan[]): number[] {
  return spans.map((span) => span.ms);
}

export interface Observed {
  /** Temporal's execution status; undefined: no such workflow. */
  readonly status: string | undefined;
  readonly startMs?: number | undefined;
  readonly closeMs?: number | undefined;
}

function describeError(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

async function sleepUntil(at: number): Promise<void> {
  const wait = at - Date.now();
  if (wait > 0) await delay(wait);
}

/** Runs `fn` over items with at most `limit` at once. */
export async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const index = next++;
        results[index] = await fn(items[index] as T, index);
      }
    }),
  );
  return results;
}

/** A small semaphore: `run` waits for a free slot. */
function limiter(slots: number) {
  let free = slots;
  const waiting: (() => void)[] = [];
  return async <T>(fn: () => Promise<T>): Promise<T> => {
    if (free === 0) await new Promise<void>((resolve) => waiting.push(resolve));
    else free -= 1;
    try {
      return await fn();
    } finally {
      const wake = waiting.shift();
      if (wake) wake();
      else free += 1;
    }
  };
}

/**
 * Starts one unattended cached refresh per saved login at `origin + offsets[i]` (as a schedule
 * starts it: the scheduled class, the tenant as fairness key), without waiting for any to end.
 */
export async function startScheduled(
  stack: Stack,
  tenant: string,
  group: Group,
  phase: Phase,
  loginIds: readonly string[],
  offsets: readonly number[],
  origin: number,
): Promise<Planned[]> {
  const run = limiter(START_CONCURRENCY);
  const starts: Promise<Planned>[] = [];
  for (let index = 0; index < loginIds.length; index += 1) {
    await sleepUntil(origin + (offsets[index] ?? 0));
    const key = connectionKey(tenant, `${phase}-${group}-${index}`);
    const input: ConnectionInputArgs = {
      customerId: tenant,
      session: { kind: 'cached', loginId: loginIds[index] as string },
      products: { accountsDetail: {} },
      timing: TIMING,
      unattended: true,
    };
    starts.push(
      run(async () => {
        const planned: Planned = { workflowId: key, tenant, group, phase };
        for (let attempt = 1; attempt <= START_ATTEMPTS; attempt += 1) {
          try {
            await stack.connections.start(key, input);
            delete planned.problem;
            return planned;
          } catch (error) {
            planned.problem = `start attempt ${attempt}: ${describeError(error)}`;
            await delay(1_000);
          }
        }
        return planned;
      }),
    );
  }
  return Promise.all(starts);
}

/**
 * The operator script for live connections: each started at `origin + offsets[i]` with
 * update-with-start, its challenges answered as soon as they appear (the next set comes back with
 * the answer's outcome), every answer timed from submission to outcome.
 */
export async function operateLive(
  stack: Stack,
  tenant: string,
  phase: Phase,
  scenario: ListedScenario,
  offsets: readonly number[],
  origin: number,
  times: LiveTimes,
): Promise<Planned[]> {
  const runs: Promise<Planned>[] = [];
  for (let index = 0; index < offsets.length; index += 1) {
    await sleepUntil(origin + (offsets[index] ?? 0));
    runs.push(operateOne(stack, tenant, phase, scenario, index, times));
  }
  return Promise.all(runs);
}

async function operateOne(stack: Stack, tenant: string, phase: Phase, scenario: ListedScenario, index: number, times: LiveTimes): Promise<Planned> {
  const key = connectionKey(tenant, `${phase}-live-${index}`);
  const planned: Planned = { workflowId: key, tenant, group: 'live', phase };
  const input: ConnectionInputArgs = {
    customerId: tenant,
    session: { kind: 'live', institution: scenario.institution, username: scenario.username, password: scenario.password, save: false },
    products: { accountsDetail: {} },
    timing: TIMING,
  };
  try {
    const startedAt = performance.now();
    const startedAtEpoch = Date.now();
    const first = await stack.connections.startAndAwaitFirstStep(key, input);
    times.firstChallenges.push({ ms: performance.now() - startedAt, workflowId: key, atMs: startedAtEpoch });
    let set = first.step === 'challenge' ? first.challengeSet : undefined;
    for (let answered = 0; set && answered < MAX_ANSWERS; answered += 1) {
      const responses = answerFor(scenario, set.challenges, 'correct', 1);
      if (!responses) {
        times.problems.push(`${key}: no listed answer for challenges ${set.challenges.map((challenge) => challenge.Prompt).join(' / ')}`);
        break;
      }
      const submittedAt = performance.now();
      const submittedAtEpoch = Date.now();
      const outcome = await stack.connections.answer(key, { challengeSetId: set.id, responses }, { checkLocally: false });
      times.answers.push({ ms: performance.now() - submittedAt, workflowId: key, atMs: submittedAtEpoch });
      if (outcome.outcome === 'rejected') times.problems.push(`${key}: answer rejected: ${outcome.message}`);
      set = outcome.outcome === 'ended' ? undefined : outcome.nextChallengeSet;
    }
  } catch (error) {
    planned.problem = `operator: ${describeError(error)}`;
    times.problems.push(`${key}: ${planned.problem}`);
  }
  return planned;
}

function phaseQuery(tenant: string, sinceIso: string, extra = ''): string {
  return `WorkflowType = "${CONNECTION_WORKFLOW_TYPE}" AND ${CustomerIdKey.name} = "${tenant}" AND StartTime >= "${sinceIso}"${extra}`;
}

/** Connections of the tenant started since the phase began that have ended (Temporal visibility). */
export async function endedCount(stack: Stack, tenant: string, sinceIso: string): Promise<number> {
  return (await stack.client.workflow.count(phaseQuery(tenant, sinceIso, ' AND ExecutionStatus != "Running"'))).count;
}

/**
 * Waits until every tenant's expected connections ended, or the deadline; `tick` sees the ended
 * counts every 2 s (the midway change of A's limit hangs on it). Resolves with the last counts.
 */
export async function awaitEnds(
  stack: Stack,
  sinceIso: string,
  expected: ReadonlyMap<string, number>,
  deadlineAt: () => number,
  tick: (ended: ReadonlyMap<string, number>) => Promise<void> | void,
): Promise<ReadonlyMap<string, number>> {
  let ended = new Map<string, number>();
  for (;;) {
    try {
      ended = new Map(await Promise.all([...expected.keys()].map(async (tenant) => [tenant, await endedCount(stack, tenant, sinceIso)] as const)));
    } catch {
      // Visibility refused one count (busy): ask again at the next tick.
    }
    await tick(ended);
    if ([...expected].every(([tenant, count]) => (ended.get(tenant) ?? 0) >= count)) return ended;
    if (Date.now() > deadlineAt()) return ended;
    await delay(2_000);
  }
}

/** What became of each planned connection: from visibility's listing, else from describing it. */
export async function observe(stack: Stack, sinceIso: string, planned: readonly Planned[]): Promise<Map<string, Observed>> {
  const wanted = new Set(planned.map((entry) => entry.workflowId));
  const found = new Map<string, Observed>();
  for await (const info of stack.client.workflow.list({
    query: `WorkflowType = "${CONNECTION_WORKFLOW_TYPE}" AND StartTime >= "${sinceIso}"`,
    pageSize: 1_000,
  })) {
    if (!wanted.has(info.workflowId)) continue;
    found.set(info.workflowId, { status: info.status.name, startMs: info.startTime.getTime(), closeMs: info.closeTime?.getTime() });
  }
  const missing = planned.filter((entry) => !found.has(entry.workflowId) || found.get(entry.workflowId)?.status === 'RUNNING');
  await mapLimit(missing, 16, async (entry) => {
    try {
      const description = await stack.client.workflow.getHandle(entry.workflowId).describe();
      found.set(entry.workflowId, { status: description.status.name, startMs: description.startTime.getTime(), closeMs: description.closeTime?.getTime() });
    } catch {
      found.set(entry.workflowId, { status: undefined });
    }
  });
  return found;
}

const EVENT_TYPES = proto.temporal.api.enums.v1.EventType;

/** An event type's name without its prefix, e.g. ACTIVITY_TASK_STARTED. */
function eventName(type: number | null | undefined): string {
  return (EVENT_TYPES[type ?? 0] ?? String(type)).replace(/^EVENT_TYPE_/, '');
}

/**
 * Where a connection's time went: the `shown` longest of its history's waits longer than `minGapMs`
 * between one event and the next, e.g. "ACTIVITY_TASK_STARTED 48.2 s after ACTIVITY_TASK_SCHEDULED
 * (pollAccountsDetail, attempt 1)", and how many more there were.
 */
export async function longWaits(stack: Stack, workflowId: string, minGapMs: number, shown = 4): Promise<string[]> {
  const history = await stack.client.workflow.getHandle(workflowId).fetchHistory();
  const events = history.events ?? [];
  const scheduled = new Map<string, string>();
  const waits: { gap: number; text: string }[] = [];
  for (let index = 1; index < events.length; index += 1) {
    const event = events[index];
    const before = events[index - 1];
    if (!event || !before) continue;
    const activity = event.activityTaskScheduledEventAttributes?.activityType?.name;
    if (activity) scheduled.set(String(event.eventId), activity);
    const gap = eventTimeMs(event.eventTime) - eventTimeMs(before.eventTime);
    if (!(gap > minGapMs)) continue;
    const started = event.activityTaskStartedEventAttributes;
    const detail = started
      ? ` (${scheduled.get(String(started.scheduledEventId)) ?? '?'}, attempt ${started.attempt ?? '?'}${started.lastFailure?.message ? `, last failure: ${started.lastFailure.message.slice(0, 120)}` : ''})`
      : '';
    waits.push({
      gap,
      text: `${eventName(event.eventType)} ${gap < 1_000 ? `${Math.round(gap)} ms` : `${(gap / 1000).toFixed(1)} s`} after ${eventName(before.eventType)}${detail}`,
    });
  }
  const longest = [...waits].sort((x, y) => y.gap - x.gap).slice(0, shown);
  const rest = waits.length - longest.length;
  return [
    ...longest.map((wait) => wait.text),
    ...(rest > 0
      ? [`${rest} more, ${(waits.filter((wait) => !longest.includes(wait)).reduce((sum, wait) => sum + wait.gap, 0) / 1000).toFixed(1)} s in all`]
      : []),
  ];
}

/** A connection's history in time order: an activity's start event is written when it completes, stamped when it started. */
async function eventsInTimeOrder(stack: Stack, workflowId: string) {
  const events = (await stack.client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
  return [...events].sort((x, y) => eventTimeMs(x.eventTime) - eventTimeMs(y.eventTime));
}

/** The kinds of time a connection's history shows between one event and the next. */
const FIRST_TASK_QUEUED = 'first workflow task queued';
const WAIT_KINDS: Readonly<Record<string, string>> = {
  WORKFLOW_TASK_STARTED: 'later workflow tasks queued',
  WORKFLOW_TASK_COMPLETED: 'workflow task on a worker',
  ACTIVITY_TASK_STARTED: 'activity queued (and its retries)',
  ACTIVITY_TASK_COMPLETED: 'activity on a worker',
  TIMER_FIRED: 'timers',
};

/**
 * Where connections spent their time, from their histories: per kind of wait (a workflow task or
 * activity queued, on a worker, a timer), the median over the connections of its sum in each.
 */
export async function timeProfile(stack: Stack, workflowIds: readonly string[], sample = 50): Promise<string> {
  const step = Math.max(1, Math.floor(workflowIds.length / sample));
  const chosen = workflowIds.filter((_, index) => index % step === 0).slice(0, sample);
  const sums: Map<string, number>[] = [];
  await mapLimit(chosen, 8, async (workflowId) => {
    const events = await eventsInTimeOrder(stack, workflowId);
    const sum = new Map<string, number>();
    for (let index = 1; index < events.length; index += 1) {
      const event = events[index];
      const before = events[index - 1];
      if (!event || !before) continue;
      const type = eventName(event.eventType);
      // The first task waits on the shared queue (fair); later ones first on a worker's own (sticky) queue.
      const kind =
        index === 2 && type === 'WORKFLOW_TASK_STARTED'
          ? FIRST_TASK_QUEUED
          : (WAIT_KINDS[type] ?? `other: ${type.toLowerCase()} after ${eventName(before.eventType).toLowerCase()}`);
      sum.set(kind, (sum.get(kind) ?? 0) + eventTimeMs(event.eventTime) - eventTimeMs(before.eventTime));
    }
    sums.push(sum);
  });
  const medianMs = new Map(
    [...new Set([FIRST_TASK_QUEUED, ...Object.values(WAIT_KINDS), ...sums.flatMap((sum) => [...sum.keys()])])].map((kind) => [
      kind,
      median(sums.map((sum) => sum.get(kind) ?? 0)),
    ]),
  );
  // The named kinds, then any other gap whose median is at least 10 ms.
  const named = new Set([FIRST_TASK_QUEUED, ...Object.values(WAIT_KINDS)]);
  const shown = [...medianMs].filter(([kind, ms]) => named.has(kind) || ms >= 10);
  return shown.map(([kind, ms]) => `${kind} ${(ms / 1000).toFixed(2)} s`).join(', ') + ` (medians of ${sums.length} connections)`;
}

/**
 * Where one span of a connection's life went (an answer's or its first challenge's time, `within`,
 * clocks of one machine), from its history: each gap between two events, clipped to the span, by the
 * kind of wait it ends (as timeProfile); what no gap covers is the client's side (sending, and hearing
 * the outcome). Kinds of at least 1 ms, largest first.
 */
export async function spanProfile(stack: Stack, workflowId: string, within: { readonly fromMs: number; readonly toMs: number }): Promise<string> {
  const events = await eventsInTimeOrder(stack, workflowId);
  const sum = new Map<string, number>();
  let covered = 0;
  for (let index = 1; index < events.length; index += 1) {
    const event = events[index];
    const before = events[index - 1];
    if (!event || !before) continue;
    const from = Math.max(within.fromMs, eventTimeMs(before.eventTime));
    const to = Math.min(within.toMs, eventTimeMs(event.eventTime));
    if (!(to > from)) continue;
    const type = eventName(event.eventType);
    const kind =
      index === 2 && type === 'WORKFLOW_TASK_STARTED'
        ? FIRST_TASK_QUEUED
        : (WAIT_KINDS[type] ?? `${type.toLowerCase()} after ${eventName(before.eventType).toLowerCase()}`);
    sum.set(kind, (sum.get(kind) ?? 0) + to - from);
    covered += to - from;
  }
  sum.set("the client's side", within.toMs - within.fromMs - covered);
  return [...sum]
    .filter(([, ms]) => ms >= 1)
    .sort((a, b) => b[1] - a[1])
    .map(([kind, ms]) => `${kind} ${Math.round(ms)} ms`)
    .join(', ');
}

/** The tenant throttle's runs (one per pause episode), per tenant. */
export async function throttleRuns(stack: Stack): Promise<string> {
  const runs = new Map<string, number>();
  try {
    for await (const info of stack.client.workflow.list({ query: `WorkflowType = "${TENANT_THROTTLE_WORKFLOW_TYPE}"` }))
      runs.set(info.workflowId, (runs.get(info.workflowId) ?? 0) + 1);
  } catch (error) {
    return `not listed (${error instanceof Error ? error.message : String(error)})`;
  }
  return runs.size === 0 ? 'never started (no tenant was refused)' : [...runs].map(([id, count]) => `${id} ${count} run(s)`).join(', ');
}
