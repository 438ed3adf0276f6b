/**
 * security:check's attacks on a tenant's admission (src/workflows/admission.ts), the window every
 * unattended connection outside a book waits at: a grant without the key sent to a queued connection,
 * a request without the key, a sealed request naming another tenant's connection, and a flood of
 * sealed requests for runs that do not exist, queued ahead of the genuine ones. Each is judged on
 * what the admission and the connections record, read after the message is in their history.
 */
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { ADMISSION_WINDOW_BOUNDS, admissionGrantSignal, admissionRequestSignal, admissionStateQuery, admissionWorkflowId, type AdmissionState } from '../../src/contract/admission-definitions.js';
import type { ConnectionInputArgs } from '../../src/contract/connection-input.js';
import { optionalTsToDate } from '../../src/sdk/internals.js';
import { until, type AttackResult, type MessageTarget } from './attacks.js';

/** Genuine unattended connections started: one more than the window's first size, so one waits. */
const GENUINE = ADMISSION_WINDOW_BOUNDS.start + 1;
/** Forged requests of the flood. */
const FLOOD = 200;

async function savedLogin(sandboxUrl: string, customerId: string, username: string): Promise<string> {
  const response = await fetch(`${sandboxUrl}/sandbox/${encodeURIComponent(customerId)}/logins`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username }) });
  if (!response.ok) throw new Error(`security-check: the sandbox refused a saved login: HTTP ${response.status}`);
  return ((await response.json()) as { LoginId: string }).LoginId;
}

/** The indexes of the signals named `signalName` in a history. */
function signalIndexes(events: HistoryEvents, signalName: string): number[] {
  return events.flatMap((event, index) => (event.workflowExecutionSignaledEventAttributes?.signalName === signalName ? [index] : []));
}

type HistoryEvents = NonNullable<Awaited<ReturnType<ReturnType<Client['workflow']['getHandle']>['fetchHistory']>>['events']>;

/** Whether the history of `workflowId` holds `count` signals named `signalName` and a workflow task completed after the last (so the state read next has judged it). */
async function judged(client: Client, workflowId: string, signalName: string, count = 1): Promise<true | undefined> {
  const events = (await client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
  const signals = signalIndexes(events, signalName);
  if (signals.length < count) return undefined;
  const last = signals[signals.length - 1] as number;
  return events.slice(last).some((event) => event.workflowTaskCompletedEventAttributes) ? true : undefined;
}

/**
 * Who admitted a queued connection sent an unsealed grant, read from its history: the admission may
 * grant it for real meanwhile (a genuine connection ended), and that grant is the admission's own.
 * Admitted in the first task after the forged grant, with no genuine grant before that task: the
 * forged grant opened the door. Both in one task: undecided, counted as through (never hidden).
 */
function forgedGrantVerdict(events: HistoryEvents, forgedIndex: number, admittedAt: string | undefined): { refused: boolean; detail: string } {
  if (admittedAt === undefined) return { refused: true, detail: 'still queued' };
  const genuine = signalIndexes(events, admissionGrantSignal.name).find((index) => index > forgedIndex);
  const nextTask = events.findIndex((event, index) => index > forgedIndex && event.workflowTaskStartedEventAttributes);
  if (genuine === undefined || nextTask === -1) return { refused: false, detail: `admitted at ${admittedAt} with no grant but the forged one` };
  if (genuine < nextTask) return { refused: false, detail: `undecided: the admission's own grant arrived in the same workflow task as the forged one (admitted at ${admittedAt})` };
  const genuineAt = optionalTsToDate(events[genuine]?.eventTime)?.toISOString() ?? '';
  return admittedAt >= genuineAt
    ? { refused: true, detail: `not admitted by it: admitted at ${admittedAt} by the admission's own grant of ${genuineAt}` }
    : { refused: false, detail: `admitted at ${admittedAt}, before the admission's own grant of ${genuineAt}` };
}

export async function admissionAttacks(target: MessageTarget, sandboxUrl: string, otherTenant: string): Promise<AttackResult[]> {
  const { customerId } = target;
  const admission = target.sealed.workflow.getHandle(admissionWorkflowId(customerId));
  const stateOf = (): Promise<AdmissionState> => admission.query(admissionStateQuery);
  // Each polls a pending operation 8 times, 1 s apart: the window stays full while the attacks run.
  const genuine = await Promise.all(
    Array.from({ length: GENUINE }, async (_, index) => {
      const loginId = await savedLogin(sandboxUrl, customerId, 'pending_polls_8');
      const input: ConnectionInputArgs = { customerId, session: { kind: 'cached', loginId }, products: { accountsDetail: {} }, unattended: true, timing: { pollIntervalMs: 1_000 } };
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
  const grantsBefore = signalIndexes((await target.sealed.workflow.getHandle(queued).fetchHistory()).events ?? [], admissionGrantSignal.name).length;
  await target.raw.workflow.getHandle(queued).signal(admissionGrantSignal, { admissionRunId: randomUUID() });
  await until(() => judged(target.sealed, queued, admissionGrantSignal.name, grantsBefore + 1), `${queued} judging the unsealed grant`);
  // The state first, then the history: whichever grant admitted it is in the history read after.
  const admittedAt = (await target.connections.getState(queued)).admission?.admittedAt;
  const history = (await target.sealed.workflow.getHandle(queued).fetchHistory()).events ?? [];
  const verdict = forgedGrantVerdict(history, signalIndexes(history, admissionGrantSignal.name)[grantsBefore] as number, admittedAt);
  results.push({ name: 'unsealed admission grant to a queued unattended connection', ...verdict });

  // Requests the admission must refuse: one without the key, one (sealed) naming another tenant's connection.
  const before = await stateOf();
  await target.raw.workflow.getHandle(admissionWorkflowId(customerId)).signal(admissionRequestSignal, { workflowId: `connection-${customerId}:forged`, runId: randomUUID(), priorityKey: 1 });
  await admission.signal(admissionRequestSignal, { workflowId: `connection-${otherTenant}:victim`, runId: randomUUID(), priorityKey: 1 });
  await until(async () => ((await stateOf()).refused >= before.refused + 2 ? true : undefined), 'the admission judging the two requests').catch(() => undefined);
  const afterRequests = await stateOf();
  const refusedNow = afterRequests.refused - before.refused;
  results.push({
    name: "admission requests without the key and naming another tenant's connection",
    refused: refusedNow === 2 && afterRequests.queued <= before.queued,
    detail: `${refusedNow} of 2 refused; queued ${before.queued} → ${afterRequests.queued}`,
  });

  // A flood of sealed requests for runs that do not exist, first in priority (the tenant's key can do
  // this much): each grant comes back, and every genuine connection still completes.
  await Promise.all(Array.from({ length: FLOOD }, (_, index) => admission.signal(admissionRequestSignal, { workflowId: `connection-${customerId}:flood-${index}`, runId: randomUUID(), priorityKey: 1 })));
  const outcomes = await Promise.all(genuine.map((workflowId) => target.connections.result(workflowId).then(() => 'completed', (error: unknown) => String(error))));
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
