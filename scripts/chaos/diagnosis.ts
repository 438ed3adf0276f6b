/**
 * Why a connection is still running at the deadline, read from the server while it still is: the
 * pending workflow task (its attempt: from the third on, the server refuses every query with
 * FAILED_PRECONDITION, so the connection's own state query cannot say), the last WorkflowTaskFailed
 * or WorkflowTaskTimedOut event with its cause and failure message (decoded with the run's codec:
 * the workers encrypt failure messages), and the pending activities with their last failures.
 * Reading it (diagnoseStuck) is apart from showing it (formatDiagnosis, diagnosisLine), which is pure.
 */
import type { Client } from '@temporalio/client';
import { decodeOptionalFailureToOptionalError, optionalTsToDate } from '../../src/sdk/internals.js';
import proto from '@temporalio/proto';
import { formatCodeCounts } from './grpc-codes.js';
import { fetchRawHistory, type RawHistoryEvent } from './histories.js';
import { seconds } from './timeline.js';

const { EventType, PendingActivityState, PendingWorkflowTaskState, TimeoutType, WorkflowTaskFailedCause } = proto.temporal.api.enums.v1;
type RawFailure = proto.temporal.api.failure.v1.IFailure;
type RawPendingWorkflowTask = proto.temporal.api.workflow.v1.IPendingWorkflowTaskInfo;
type RawPendingActivity = proto.temporal.api.workflow.v1.IPendingActivityInfo;
type RawTimestamp = Parameters<typeof optionalTsToDate>[0];

/** The diagnosis reads (describe, each history page) may take this long each. */
const CALL_TIMEOUT_MS = 10_000;
/** A failure message is cut to this in the one-line summary (the file has it whole). */
const LINE_MESSAGE_MAX = 160;

export interface PendingWorkflowTask {
  /** SCHEDULED or STARTED. */
  readonly state: string;
  readonly attempt: number;
  readonly scheduledAt?: Date | undefined;
  readonly originalScheduledAt?: Date | undefined;
  readonly startedAt?: Date | undefined;
}

export interface WorkflowTaskProblem {
  readonly event: 'WorkflowTaskFailed' | 'WorkflowTaskTimedOut';
  readonly eventId: number;
  readonly at?: Date | undefined;
  /** WorkflowTaskFailed: the cause (e.g. WORKFLOW_WORKER_UNHANDLED_FAILURE); timed out: the timeout type (e.g. START_TO_CLOSE). */
  readonly cause: string;
  /** The failure's message (decoded), for a failed task. */
  readonly message?: string | undefined;
  /** The first lines of the failure's stack trace, when it has one. */
  readonly stack?: string | undefined;
  readonly identity?: string | undefined;
}

export interface PendingActivity {
  readonly activityId: string;
  readonly activityType: string;
  readonly state: string;
  readonly attempt: number;
  /** 0: unlimited. */
  readonly maximumAttempts: number;
  readonly lastFailure?: string | undefined;
  readonly lastStartedAt?: Date | undefined;
  readonly lastHeartbeatAt?: Date | undefined;
  readonly lastWorkerIdentity?: string | undefined;
}

export interface StuckDiagnosis {
  readonly workflowId: string;
  readonly runId: string;
  readonly status: string;
  readonly diagnosedAt: Date;
  readonly historyLength: number;
  readonly lastEvent?: { readonly type: string; readonly at?: Date | undefined } | undefined;
  readonly pendingWorkflowTask?: PendingWorkflowTask | undefined;
  readonly workflowTaskFailures: number;
  readonly workflowTaskTimeouts: number;
  readonly lastWorkflowTaskProblem?: WorkflowTaskProblem | undefined;
  readonly pendingActivities: readonly PendingActivity[];
}

// ---- reading ------------------------------------------------------------------------------------

/** "PENDING_WORKFLOW_TASK_STATE_STARTED" → "STARTED"; an unknown number stays a number. */
function enumName(values: Record<number, string>, value: number | null | undefined, prefix: string): string {
  if (value === null || value === undefined) return 'UNSPECIFIED';
  const name = values[value];
  return name ? name.replace(prefix, '') : String(value);
}

/** "EVENT_TYPE_WORKFLOW_TASK_FAILED" → "WorkflowTaskFailed". */
export function eventTypeName(value: number | null | undefined): string {
  return enumName(EventType, value, 'EVENT_TYPE_')
    .toLowerCase()
    .replace(/(^|_)([a-z])/g, (_, __: string, letter: string) => letter.toUpperCase());
}

/** A proto int64 (Long) or number as a number. */
function toNumber(value: { toString(): string } | number | null | undefined): number {
  return value === null || value === undefined ? 0 : Number(value.toString());
}

function dateOf(ts: RawTimestamp): Date | undefined {
  return optionalTsToDate(ts) ?? undefined;
}

export function pendingWorkflowTaskOf(raw: RawPendingWorkflowTask | null | undefined): PendingWorkflowTask | undefined {
  if (!raw) return undefined;
  return {
    state: enumName(PendingWorkflowTaskState, raw.state, 'PENDING_WORKFLOW_TASK_STATE_'),
    attempt: raw.attempt ?? 0,
    scheduledAt: dateOf(raw.scheduledTime),
    originalScheduledAt: dateOf(raw.originalScheduledTime),
    startedAt: dateOf(raw.startedTime),
  };
}

/** How many workflow tasks failed and timed out, and the last such event with its raw failure (decoded later). */
export function workflowTaskProblemsIn(events: readonly RawHistoryEvent[]): {
  readonly failures: number;
  readonly timeouts: number;
  readonly last?: { readonly problem: WorkflowTaskProblem; readonly failure?: RawFailure | null | undefined } | undefined;
} {
  let failures = 0;
  let timeouts = 0;
  let last: { problem: WorkflowTaskProblem; failure?: RawFailure | null | undefined } | undefined;
  for (const event of events) {
    const eventId = toNumber(event.eventId);
    const at = dateOf(event.eventTime);
    if (event.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED) {
      failures += 1;
      const attributes = event.workflowTaskFailedEventAttributes;
      last = {
        problem: {
          event: 'WorkflowTaskFailed',
          eventId,
          at,
          cause: enumName(WorkflowTaskFailedCause, attributes?.cause, 'WORKFLOW_TASK_FAILED_CAUSE_'),
          message: attributes?.failure?.message ?? undefined,
          identity: attributes?.identity ?? undefined,
        },
        failure: attributes?.failure,
      };
    } else if (event.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT) {
      timeouts += 1;
      const attributes = event.workflowTaskTimedOutEventAttributes;
      last = { problem: { event: 'WorkflowTaskTimedOut', eventId, at, cause: enumName(TimeoutType, attributes?.timeoutType, 'TIMEOUT_TYPE_') } };
    }
  }
  return { failures, timeouts, last };
}

type DecodeFailure = (failure: RawFailure | null | undefined) => Promise<{ message?: string | undefined; stack?: string | undefined }>;

/** The failure as the client's codec reads it (the workers move messages into an encrypted payload); the raw message if that fails. */
function failureDecoder(client: Client, workflowId: string): DecodeFailure {
  return async (failure) => {
    if (!failure) return {};
    try {
      const error = await decodeOptionalFailureToOptionalError(client.options.loadedDataConverter, failure, {
        namespace: client.options.namespace,
        workflowId,
      });
      const stack = error?.stack?.split('\n').slice(1, 7).join('\n').trim();
      return { message: error?.message ?? failure.message ?? undefined, stack: stack || undefined };
    } catch (error) {
      return { message: `${failure.message ?? ''} (not decodable here: ${error instanceof Error ? error.message : String(error)})` };
    }
  };
}

async function pendingActivityOf(raw: RawPendingActivity, decode: DecodeFailure): Promise<PendingActivity> {
  return {
    activityId: raw.activityId ?? '',
    activityType: raw.activityType?.name ?? 'unknown',
    state: enumName(PendingActivityState, raw.state, 'PENDING_ACTIVITY_STATE_'),
    attempt: raw.attempt ?? 0,
    maximumAttempts: raw.maximumAttempts ?? 0,
    lastFailure: raw.lastFailure ? (await decode(raw.lastFailure)).message : undefined,
    lastStartedAt: dateOf(raw.lastStartedTime),
    lastHeartbeatAt: dateOf(raw.lastHeartbeatTime),
    lastWorkerIdentity: raw.lastWorkerIdentity || undefined,
  };
}

/** Describes the execution and reads its history; throws if Temporal cannot be asked (the caller notes why). */
export async function diagnoseStuck(client: Client, workflowId: string): Promise<StuckDiagnosis> {
  const description = await client.withDeadline(Date.now() + CALL_TIMEOUT_MS, () => client.workflow.getHandle(workflowId).describe());
  const events = await fetchRawHistory(client.connection, client.options.namespace, { workflowId, runId: description.runId });
  const decode = failureDecoder(client, workflowId);
  const problems = workflowTaskProblemsIn(events);
  const last = problems.last;
  const decoded = last?.failure ? await decode(last.failure) : {};
  const lastEvent = events.at(-1);
  return {
    workflowId,
    runId: description.runId,
    status: description.status.name,
    diagnosedAt: new Date(),
    historyLength: events.length,
    lastEvent: lastEvent ? { type: eventTypeName(lastEvent.eventType), at: dateOf(lastEvent.eventTime) } : undefined,
    pendingWorkflowTask: pendingWorkflowTaskOf(description.raw.pendingWorkflowTask),
    workflowTaskFailures: problems.failures,
    workflowTaskTimeouts: problems.timeouts,
    lastWorkflowTaskProblem: last
      ? { ...last.problem, ...(decoded.message !== undefined ? { message: decoded.message } : {}), stack: decoded.stack }
      : undefined,
    pendingActivities: await Promise.all((description.raw.pendingActivities ?? []).map((activity) => pendingActivityOf(activity, decode))),
  };
}

// ---- showing ------------------------------------------------------------------------------------

function ago(at: Date | undefined, now: Date): string {
  return at ? `${at.toISOString()} (${seconds(now.getTime() - at.getTime())} before)` : 'unknown';
}

function clip(text: string, max: number): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max - 3)}...` : line;
}

function describeProblem(problem: WorkflowTaskProblem, max: number): string {
  return `${problem.event} #${problem.eventId} (${problem.cause})${problem.message ? `: ${clip(problem.message, max)}` : ''}`;
}

/** One line per stuck connection, for the report. */
export function diagnosisLine(diagnosis: StuckDiagnosis, failedQueries: ReadonlyMap<string, number>): string {
  const task = diagnosis.pendingWorkflowTask;
  const parts = [
    task
      ? `workflow task attempt ${task.attempt} (${task.state}${task.scheduledAt ? `, scheduled ${seconds(diagnosis.diagnosedAt.getTime() - task.scheduledAt.getTime())} before` : ''})`
      : 'no workflow task pending',
    diagnosis.lastWorkflowTaskProblem
      ? `last ${describeProblem(diagnosis.lastWorkflowTaskProblem, LINE_MESSAGE_MAX)} [${diagnosis.workflowTaskFailures} failed, ${diagnosis.workflowTaskTimeouts} timed out]`
      : 'no workflow task failed or timed out',
    diagnosis.pendingActivities.length === 0
      ? 'no pending activity'
      : `pending: ${diagnosis.pendingActivities.map((activity) => `${activity.activityType} (${activity.state}, attempt ${activity.attempt})`).join(', ')}`,
    `failed queries: ${formatCodeCounts(failedQueries)}`,
  ];
  return parts.join('; ');
}

/** The whole diagnosis, for the run directory's file. */
export function formatDiagnosis(key: string, diagnosis: StuckDiagnosis, failedQueries: ReadonlyMap<string, number>): string[] {
  const now = diagnosis.diagnosedAt;
  const lines = [
    `${key} (workflow ${diagnosis.workflowId}, run ${diagnosis.runId}): ${diagnosis.status} at ${now.toISOString()}`,
    `  history: ${diagnosis.historyLength} events, the last ${diagnosis.lastEvent ? `${diagnosis.lastEvent.type} at ${ago(diagnosis.lastEvent.at, now)}` : 'unknown'}`,
  ];
  const task = diagnosis.pendingWorkflowTask;
  lines.push(
    task
      ? `  pending workflow task: ${task.state}, attempt ${task.attempt}; scheduled ${ago(task.scheduledAt, now)}` +
          `${task.originalScheduledAt && task.originalScheduledAt.getTime() !== task.scheduledAt?.getTime() ? `, first scheduled ${ago(task.originalScheduledAt, now)}` : ''}` +
          `${task.startedAt ? `, started ${ago(task.startedAt, now)}` : ', not started'}` +
          (task.attempt >= 3 ? ' (attempt 3 or more: the server refuses every query with FAILED_PRECONDITION)' : '')
      : '  pending workflow task: none',
  );
  lines.push(`  workflow tasks failed: ${diagnosis.workflowTaskFailures}, timed out: ${diagnosis.workflowTaskTimeouts}`);
  const problem = diagnosis.lastWorkflowTaskProblem;
  if (problem) {
    lines.push(`  last: ${describeProblem(problem, 2_000)} at ${ago(problem.at, now)}${problem.identity ? ` by ${problem.identity}` : ''}`);
    if (problem.stack) lines.push(...problem.stack.split('\n').map((line) => `      ${line.trim()}`));
  }
  lines.push(`  pending activities: ${diagnosis.pendingActivities.length === 0 ? 'none' : ''}`.trimEnd());
  for (const activity of diagnosis.pendingActivities) {
    lines.push(
      `    ${activity.activityType} (id ${activity.activityId}): ${activity.state}, attempt ${activity.attempt}${activity.maximumAttempts > 0 ? ` of ${activity.maximumAttempts}` : ''}` +
        `${activity.lastStartedAt ? `, last started ${ago(activity.lastStartedAt, now)}` : ''}${activity.lastHeartbeatAt ? `, last heartbeat ${ago(activity.lastHeartbeatAt, now)}` : ''}` +
        `${activity.lastWorkerIdentity ? ` by ${activity.lastWorkerIdentity}` : ''}${activity.lastFailure ? `; last failure: ${clip(activity.lastFailure, 2_000)}` : ''}`,
    );
  }
  lines.push(`  failed queries by gRPC code: ${formatCodeCounts(failedQueries)}`);
  return lines;
}
