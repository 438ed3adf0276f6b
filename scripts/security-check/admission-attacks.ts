/**
 * security:check's attacks on a tenant's admission (src/workflows/admission/admission.ts), the window every
 * unattended connection outside a book waits at: a grant without the key sent to a queued connection,
 * a request without the key, a sealed request naming another tenant's connection, a flood of
 * sealed requests for runs that do not exist, queued ahead of the genuine ones, and held starts: an
 * unsealed grant to one, and one forged in visibility with an unsealed wake. Each is judged on
 * what the admission and the connections record, read after the message is in their history.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { defaultPayloadConverter, type Payload, type PayloadCodec } from '@temporalio/common';
import { WorkflowClient, type Client } from '@temporalio/client';
import { ConnectionsClient } from '../../src/client/connections.js';
import {
  ADMISSION_DISCOVER_EVERY_MS,
  ADMISSION_WINDOW_BOUNDS,
  ADMISSION_WORKFLOW_TYPE,
  admissionGrantSignal,
  admissionRequestSignal,
  admissionStateQuery,
  admissionWakeSignal,
  admissionWorkflowId,
  HELD_PRIORITY_MEMO,
  HELD_START_MEMO,
  type AdmissionState,
} from '../../src/contract/admission/admission-definitions.js';
import { ConnectionStatusKey, CustomerIdKey, STARTING_STATUS } from '../../src/contract/search-attributes.js';
import type { ConnectionInputArgs } from '../../src/contract/connection/connection-input.js';
import { optionalTsToDate } from '../../src/sdk/internals.js';
import { until, type AttackResult, type MessageTarget } from './attacks.js';
import { startForgedRow } from './forged-rows.js';

/** Genuine unattended connections started: one more than the window's first size, so one waits. */
const GENUINE = ADMISSION_WINDOW_BOUNDS.start + 1;
/** Forged requests of the flood. */
const FLOOD = 200;

export async function savedLogin(sandboxUrl: string, customerId: string, username: string): Promise<string> {
  const response = await fetch(`${sandboxUrl}/sandbox/${encodeURIComponent(customerId)}/logins`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username }),
  });
  if (!response.ok) throw new Error(`security-check: the sandbox refused a saved login: HTTP ${response.status}`);
  return ((await response.json()) as { LoginId: string }).LoginId;
}

export type HistoryEvents = NonNullable<Awaited<ReturnType<ReturnType<Client['workflow']['getHandle']>['fetchHistory']>>['events']>;

/**
 * Which grant signals are the forged one's. By default a grant sent from outside any workflow (the
 * admission's own grants to running connections come from its workflow, naming it); a held start's
 * genuine grant is a signal-with-start from a worker, so there the forger is told by its identity.
 */
type ForgedBy = { readonly identity?: string | undefined; readonly forgedFirst?: boolean | undefined };

function isGrant(event: HistoryEvents[number]): boolean {
  return event.workflowExecutionSignaledEventAttributes?.signalName === admissionGrantSignal.name;
}

function isForged(event: HistoryEvents[number], by: ForgedBy): boolean {
  const signaled = event.workflowExecutionSignaledEventAttributes;
  if (!isGrant(event) || !signaled) return false;
  return by.identity === undefined ? !signaled.externalWorkflowExecution : signaled.identity === by.identity;
}

function forgedGrantIndex(events: HistoryEvents, by: ForgedBy = {}): number | undefined {
  const index = events.findIndex((event) => isForged(event, by));
  return index < 0 ? undefined : index;
}

/** The history of `workflowId` once it holds the forged grant and a workflow task completed after it (so the state read next has judged it). */
async function judgedForged(client: Client, workflowId: string, by: ForgedBy = {}): Promise<true | undefined> {
  const events = (await client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
  const forged = forgedGrantIndex(events, by);
  return forged !== undefined && events.slice(forged).some((event) => event.workflowTaskCompletedEventAttributes) ? true : undefined;
}

/** The activity types of the local activities a history recorded (their markers' data, which the SDK's core writes as JSON). */
export function localActivityTypes(events: HistoryEvents): string[] {
  const types: string[] = [];
  for (const event of events) {
    const data = event.markerRecordedEventAttributes?.details?.data?.payloads?.[0]?.data;
    if (!data) continue;
    try {
      const parsed = JSON.parse(Buffer.from(data).toString('utf8')) as { activity_type?: string; activityType?: string };
      const type = parsed.activity_type ?? parsed.activityType;
      if (type) types.push(type);
    } catch {
      // Not a local activity's marker.
    }
  }
  return types;
}

const eventMs = (event: HistoryEvents[number] | undefined): number | undefined => optionalTsToDate(event?.eventTime)?.getTime();
/** The start time of the first workflow task after event `index` (workflow time in that task: what `admittedAt` records). */
const taskAfter = (events: HistoryEvents, index: number): number | undefined =>
  eventMs(events.find((event, at) => at > index && event.workflowTaskStartedEventAttributes));

/**
 * Who admitted a queued connection sent an unsealed grant, read from its history: the admission may
 * grant it for real meanwhile (a genuine connection ended), and that grant is the admission's own.
 * A connection admitted in the first task after the forged grant (T1), before the admission's own
 * grant was handled (T2), was let in by the forged one. Anything the history cannot tell apart (both
 * in one task, times a millisecond apart, a time missing) is undecided, counted as through (never
 * hidden).
 */
export function forgedGrantVerdict(events: HistoryEvents, admittedAt: string | undefined, by: ForgedBy = {}): { refused: boolean; detail: string } {
  if (admittedAt === undefined) return { refused: true, detail: 'still queued' };
  const admitted = Date.parse(admittedAt);
  const forged = forgedGrantIndex(events, by);
  if (forged === undefined) return { refused: false, detail: `undecided: admitted at ${admittedAt}, and the forged grant is not in the history read` };
  const t1 = taskAfter(events, forged);
  const genuine = events.findIndex(
    (event) =>
      isGrant(event) && !isForged(event, by) && (by.identity !== undefined || event.workflowExecutionSignaledEventAttributes?.externalWorkflowExecution),
  );
  const t2 = genuine < 0 ? undefined : taskAfter(events, genuine);
  if (t2 !== undefined && genuine < forged && admitted <= t2 + 1) {
    // Where the attack is meant to reach a connection not yet granted (a held start), that shows nothing.
    if (by.forgedFirst === true)
      return { refused: false, detail: `undecided: the admission's own grant (admitted at ${admittedAt}) came before the forged one` };
    return { refused: true, detail: `admitted at ${admittedAt} by the admission's own grant, before the forged one arrived` };
  }
  if (t1 === undefined || t2 === undefined) return { refused: false, detail: `admitted at ${admittedAt} with no grant of the admission's own to explain it` };
  if (t2 - t1 < 2)
    return {
      refused: false,
      detail: `undecided: the admission's own grant was handled in the forged one's task or a millisecond from it (admitted at ${admittedAt})`,
    };
  return admitted >= t2 - 1
    ? { refused: true, detail: `not admitted by it: admitted at ${admittedAt} by the admission's own grant` }
    : { refused: false, detail: `admitted at ${admittedAt}, in the forged grant's task, before the admission's own grant` };
}

export async function admissionAttacks(target: MessageTarget, sandboxUrl: string, otherTenant: string): Promise<AttackResult[]> {
  const { customerId } = target;
  const admission = target.sealed.workflow.getHandle(admissionWorkflowId(customerId));
  const stateOf = (): Promise<AdmissionState> => admission.query(admissionStateQuery);
  // Each polls a pending operation 8 times, 1 s apart: the window stays full while the attacks run.
  const genuine = await Promise.all(
    Array.from({ length: GENUINE }, async (_, index) => {
      const loginId = await savedLogin(sandboxUrl, customerId, 'pending_polls_8');
      const input: ConnectionInputArgs = {
        customerId,
        session: { kind: 'cached', loginId },
        products: { accountsDetail: {} },
        unattended: true,
        timing: { pollIntervalMs: 1_000 },
      };
      return (await target.connections.start(`connection-${customerId}:admission-${index}`, input)).workflowId;
    }),
  );
  await until(async () => ((await stateOf()).queued >= 1 ? true : undefined), 'a genuine connection queued at the admission');
  // The one still waiting once every grant sent has reached its connection.
  const queued = await until(async () => {
    const states = await Promise.all(genuine.map((workflowId) => target.connections.getState(workflowId)));
    const waiting = genuine.filter((_, index) => states[index]?.admission?.queuedAt !== undefined && states[index]?.admission?.admittedAt === undefined);
    return waiting.length === 1 ? waiting[0] : undefined;
  }, 'one genuine connection waiting for room');
  const results: AttackResult[] = [];

  // A grant without the key to the queued connection: it must not admit it.
  await target.raw.workflow.getHandle(queued).signal(admissionGrantSignal, { admissionRunId: randomUUID() });
  await until(() => judgedForged(target.sealed, queued), `${queued} judging the unsealed grant`);
  // The state first, then the history: whichever grant admitted it is in the history read after.
  const admittedAt = (await target.connections.getState(queued)).admission?.admittedAt;
  const verdict = forgedGrantVerdict((await target.sealed.workflow.getHandle(queued).fetchHistory()).events ?? [], admittedAt);
  results.push({ name: 'unsealed admission grant to a queued unattended connection', ...verdict });

  // Requests the admission must refuse: one without the key, one (sealed) naming another tenant's connection.
  const before = await stateOf();
  await target.raw.workflow
    .getHandle(admissionWorkflowId(customerId))
    .signal(admissionRequestSignal, { workflowId: `connection-${customerId}:forged`, runId: randomUUID(), priorityKey: 1 });
  await admission.signal(admissionRequestSignal, { workflowId: `connection-${otherTenant}:victim`, runId: randomUUID(), priorityKey: 1 });
  await until(async () => ((await stateOf()).refused >= before.refused + 2 ? true : undefined), 'the admission judging the two requests').catch(
    () => undefined,
  );
  const afterRequests = await stateOf();
  const refusedNow = afterRequests.refused - before.refused;
  results.push({
    name: "admission requests without the key and naming another tenant's connection",
    refused: refusedNow === 2 && afterRequests.queued <= before.queued,
    detail: `${refusedNow} of 2 refused; queued ${before.queued} → ${afterRequests.queued}`,
  });

  // A flood of sealed requests for runs that do not exist, first in priority (the tenant's key can do
  // this much): each grant comes back, and every genuine connection still completes.
  await Promise.all(
    Array.from({ length: FLOOD }, (_, index) =>
      admission.signal(admissionRequestSignal, { workflowId: `connection-${customerId}:flood-${index}`, runId: randomUUID(), priorityKey: 1 }),
    ),
  );
  const outcomes = await Promise.all(
    genuine.map((workflowId) =>
      target.connections.result(workflowId).then(
        () => 'completed',
        (error: unknown) => String(error),
      ),
    ),
  );
  const drained = await until(async () => {
    const state = await stateOf();
    return state.queued === 0 && state.inFlight === 0 ? state : undefined;
  }, 'the admission empty after the flood').catch(() => undefined);
  const completed = outcomes.filter((outcome) => outcome === 'completed').length;
  results.push({
    name: 'a flood of sealed admission requests for runs that do not exist',
    refused: completed === GENUINE && drained !== undefined,
    detail: `${completed} of ${GENUINE} genuine connections completed; the admission ${drained ? `empty again (granted ${drained.granted}, refused ${drained.refused}): each forged grant gave its room back` : 'still holding room'}`,
  });
  return results;
}

/**
 * A held start (the product's client with UNATTENDED_ADMISSION=window: a start delay, queued at the
 * admission) sent a grant without the key by signal-with-start, which ends its delay: it begins, but
 * the grant is refused (a marker, not a grant), it asks for room, and it is admitted only by the
 * admission's own grant once the window has room.
 */
export async function heldStartAttack(target: MessageTarget, sandboxUrl: string): Promise<AttackResult> {
  const { customerId, taskQueue } = target;
  const held = new ConnectionsClient({ client: target.sealed, taskQueue, unattendedAdmission: 'window' });
  const admission = target.sealed.workflow.getHandle(admissionWorkflowId(customerId));
  const start = async (key: string, username: string) => {
    const loginId = await savedLogin(sandboxUrl, customerId, username);
    return (
      await held.start(`connection-${customerId}:${key}`, {
        customerId,
        session: { kind: 'cached', loginId },
        products: { accountsDetail: {} },
        unattended: true,
        timing: { pollIntervalMs: 1_000 },
      })
    ).workflowId;
  };
  // The window full for 20 s (each polls 20 times, 1 s apart), then the held start queued behind it.
  // The admission of the attacks before may still run, its window grown past its start: filled to its size.
  // Long enough that none ends (and no completion lets the window grow) before the held start is seen
  // queued, on a machine busy with other work: with 8 s, a suite run saw it admitted at once.
  const room = (await admission.query(admissionStateQuery).catch(() => undefined))?.window.size ?? ADMISSION_WINDOW_BOUNDS.start;
  const running = await Promise.all(Array.from({ length: room }, (_, index) => start(`held-running-${index}`, 'pending_polls_20')));
  await until(async () => {
    const state = await admission.query(admissionStateQuery);
    return state.inFlight >= state.window.size ? true : undefined;
  }, 'the window full');
  const victim = await start('held-victim', 'pending_polls_1');
  // Queued and not begun: no workflow task in its history yet.
  await until(async () => {
    const queued = (await admission.query(admissionStateQuery)).queued >= 1;
    const events = (await target.sealed.workflow.getHandle(victim).fetchHistory()).events ?? [];
    return queued && !events.some((event) => event.workflowTaskScheduledEventAttributes) ? true : undefined;
  }, 'the held start queued, not begun');
  const identity = `security-check-forger-${randomUUID()}`;
  const forger = new WorkflowClient({ connection: target.raw.connection, namespace: target.raw.options.namespace, identity });
  await forger.signalWithStart('connectionWorkflow', {
    workflowId: victim,
    taskQueue,
    args: [],
    workflowIdReusePolicy: 'REJECT_DUPLICATE',
    signal: admissionGrantSignal,
    signalArgs: [{ admissionRunId: randomUUID() }],
  });
  await until(() => judgedForged(target.sealed, victim, { identity }), `${victim} judging the unsealed grant`);
  const admittedAt = (await target.connections.getState(victim)).admission?.admittedAt;
  const events = (await target.sealed.workflow.getHandle(victim).fetchHistory()).events ?? [];
  const verdict = forgedGrantVerdict(events, admittedAt, { identity, forgedFirst: true });
  // It began with the forged signal-with-start and, refusing the grant, asked for room itself.
  const asked = localActivityTypes(events).includes('askAdmission');
  const outcomes = await Promise.all(
    [...running, victim].map((workflowId) =>
      target.connections.result(workflowId).then(
        () => 'completed',
        (error: unknown) => String(error),
      ),
    ),
  );
  const completed = outcomes.filter((outcome) => outcome === 'completed').length;
  return {
    name: 'unsealed grant by signal-with-start to a held unattended start',
    refused: verdict.refused && asked && completed === outcomes.length,
    detail: `${verdict.detail}; ${asked ? 'it asked for room after the forged grant' : 'it never asked for room'}; ${completed} of ${outcomes.length} connections completed`,
  };
}

/** How long a forged held start is watched: two of the admission's looks for held starts, and a release's time. */
const FORGED_HELD_WATCH_MS = 2 * ADMISSION_DISCOVER_EVERY_MS + 3_000;

/**
 * Held starts forged in visibility: connections started under the tenant's id on the connections'
 * queue, with a long start delay, the search attributes a held start has (its tenant, its first
 * status) and a memo that says the client held it, first priority, one memo unsealed and one sealed
 * with another tenant's key; and an unsealed wake to the tenant's admission. The admission reads both
 * rows when it looks for held starts; it must queue neither (so grant nothing but the genuine start)
 * nor begin either, and must refuse the wake, while the tenant's genuine held start completes.
 */
export async function forgedHeldStartAttack(
  target: MessageTarget,
  sandboxUrl: string,
  otherTenant: { readonly codec: PayloadCodec; readonly workflowId: string },
): Promise<AttackResult> {
  const { customerId, taskQueue } = target;
  const namespace = target.raw.options.namespace;
  const held = new ConnectionsClient({ client: target.sealed, taskQueue, unattendedAdmission: 'window' });
  const admission = target.sealed.workflow.getHandle(admissionWorkflowId(customerId));
  const loginId = await savedLogin(sandboxUrl, customerId, 'pending_polls_1');
  // The admission of the attacks before may still run (its counts go on); none running, they start at 0.
  const running = await admission.describe().then(
    (described) => described.status.name === 'RUNNING',
    () => false,
  );
  const before = running ? await until(() => admission.query(admissionStateQuery), 'the admission answering its state') : undefined;
  // The admission running and woken by the product's client (a genuine held start of the tenant).
  const genuine = (
    await held.start(`connection-${customerId}:held-genuine-${randomUUID()}`, {
      customerId,
      session: { kind: 'cached', loginId },
      products: { accountsDetail: {} },
      unattended: true,
      timing: { pollIntervalMs: 1_000 },
    })
  ).workflowId;
  const input: ConnectionInputArgs = { customerId, session: { kind: 'cached', loginId }, products: { accountsDetail: {} }, unattended: true };
  const memo = { [HELD_START_MEMO]: true, [HELD_PRIORITY_MEMO]: 1 };
  const forge = async (memoFields: Record<string, Payload>) => {
    const workflowId = `connection-${customerId}:held-forged-${randomUUID()}`;
    await startForgedRow(target, {
      workflowId,
      workflowType: 'connectionWorkflow',
      input: [defaultPayloadConverter.toPayload(input)],
      memo: memoFields,
      keywords: { [CustomerIdKey.name]: customerId, [ConnectionStatusKey.name]: STARTING_STATUS },
    });
    return workflowId;
  };
  const unsealed = Object.fromEntries(Object.entries(memo).map(([key, value]) => [key, defaultPayloadConverter.toPayload(value)]));
  const otherContext = { type: 'workflow', namespace, workflowId: otherTenant.workflowId } as const;
  const sealedForOther: Record<string, Payload> = {};
  for (const [key, value] of Object.entries(memo)) {
    const [sealed] = await otherTenant.codec.encode([defaultPayloadConverter.toPayload(value)], otherContext);
    if (sealed) sealedForOther[key] = sealed;
  }
  const forged = [await forge(unsealed), await forge(sealedForOther)];
  await target.raw.workflow.signalWithStart(ADMISSION_WORKFLOW_TYPE, {
    workflowId: admissionWorkflowId(customerId),
    taskQueue,
    args: [{ customerId }],
    signal: admissionWakeSignal,
    signalArgs: [{ customerId }],
  });
  try {
    const genuineEnd = await target.connections.result(genuine).then(
      () => 'completed',
      (error: unknown) => String(error),
    );
    await delay(FORGED_HELD_WATCH_MS);
    const begun: string[] = [];
    for (const workflowId of forged) {
      const events = (await target.sealed.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
      if (events.some((event) => event.workflowTaskScheduledEventAttributes) || events.some(isGrant)) begun.push(workflowId);
    }
    // A query can time out on a busy machine: asked again.
    const after = await until(() => admission.query(admissionStateQuery), 'the admission answering its state');
    const granted = after.granted - (before?.granted ?? 0);
    const refused = after.refused - (before?.refused ?? 0);
    return {
      name: "forged held starts in visibility (an unsealed memo, another tenant's sealed memo) and an unsealed wake",
      refused: begun.length === 0 && granted === 1 && after.queued === 0 && refused >= 1 && genuineEnd === 'completed',
      detail: `${begun.length} of ${forged.length} forged starts begun; the admission granted ${granted} (the genuine start's: 1), holds ${after.queued} queued, refused ${refused} message(s) since; the genuine held start ${genuineEnd}`,
    };
  } finally {
    for (const workflowId of forged)
      await target.sealed.workflow
        .getHandle(workflowId)
        .terminate('security-check: the forged held start ends')
        .catch(() => undefined);
  }
}
