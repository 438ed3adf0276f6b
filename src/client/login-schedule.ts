/**
 * A login's refresh Schedule (`refresh-<customerId>:<loginId>`): the spec, action and policies it is
 * written with, and its summary read back from its description (undefined for a schedule of another
 * kind). Apart from the schedules client because it is the Schedule's form, not the calls that write
 * and read it; a book's Schedule has its own in book-schedule.ts.
 */
import type { ScheduleDescription, ScheduleOptions, WorkflowStartOptions } from '@temporalio/client';
import { TypedSearchAttributes } from '@temporalio/common';
import type { ConnectionInput, ProductsInput } from '../contract/connection/connection-input.js';
import { CONNECTION_WORKFLOW_TYPE } from '../contract/connection/connection-definitions.js';
import { startPriority, type PriorityPolicy } from '../contract/priority.js';
import { ConnectionStatusKey, CustomerIdKey, LoginIdKey } from '../contract/search-attributes.js';
import type { RefreshCadenceArgs, RefreshScheduleInput } from './refresh-schedule-input.js';
import { refreshCadenceOf, scheduleSpecOf } from './schedule-cadence.js';

/** A schedule as the pipeline sees it. */
export interface RefreshScheduleSummary {
  readonly scheduleId: string;
  readonly customerId: string;
  readonly loginId: string;
  readonly session: 'cached' | 'refresh';
  readonly products: ProductsInput;
  readonly cadence: RefreshCadenceArgs;
  readonly paused: boolean;
  readonly note?: string | undefined;
  /** Upcoming scheduled times (before jitter), ISO 8601. */
  readonly nextRunsAt: readonly string[];
  /** Most recent runs, oldest first. */
  readonly recentRuns: readonly { readonly workflowId: string; readonly scheduledAt: string; readonly startedAt: string }[];
}

/** A run missed while Temporal was down is still taken within this window (then SKIP applies). */
const CATCHUP_WINDOW = '1 hour';

/** What the Schedule `scheduleId` of a login is written with: its runs are `connectionInput`'s connections on `taskQueue`. */
export function refreshScheduleOptions(
  input: RefreshScheduleInput,
  connectionInput: ConnectionInput,
  scheduleId: string,
  taskQueue: string,
  priority: PriorityPolicy,
) {
  const spec = scheduleSpecOf(input.cadence);
  const identity = new TypedSearchAttributes([
    { key: CustomerIdKey, value: input.customerId },
    { key: LoginIdKey, value: input.loginId },
  ]);
  // SDK 1.24's action type omits `priority`, which its encoder reads (schedule-helpers compilePriority).
  const action: ScheduleOptions['action'] & Pick<WorkflowStartOptions, 'priority'> = {
    type: 'startWorkflow',
    workflowType: CONNECTION_WORKFLOW_TYPE,
    // Temporal appends each run's scheduled time, so every run has its own id.
    workflowId: scheduleId,
    taskQueue,
    args: [connectionInput],
    typedSearchAttributes: identity.updateCopy([{ key: ConnectionStatusKey, value: 'Authorizing' }]),
    staticSummary: `Scheduled ${input.session} refresh of login ${input.loginId}`,
    // Unattended: after live end users and pipelines, before forget and retention.
    priority: startPriority(priority, 'scheduled', input.customerId),
  };
  const policies: ScheduleOptions['policies'] = { overlap: 'SKIP', catchupWindow: CATCHUP_WINDOW, pauseOnFailure: false };
  const note = input.note ?? `${input.session} refresh of login ${input.loginId}`;
  return { spec, identity, action, policies, note };
}

/** A refresh schedule as the pipeline sees it, read back from its spec and action; undefined for another kind of schedule. */
export function summarizeRefresh(schedule: ScheduleDescription): RefreshScheduleSummary | undefined {
  const action = schedule.action;
  const input =
    action.type === 'startWorkflow' && action.workflowType === CONNECTION_WORKFLOW_TYPE ? (action.args?.[0] as ConnectionInput | undefined) : undefined;
  const cadence = refreshCadenceOf(schedule.spec);
  if (!input || input.session.kind === 'live' || !cadence) return undefined;
  return {
    scheduleId: schedule.scheduleId,
    customerId: input.customerId,
    loginId: input.session.loginId,
    session: input.session.kind,
    products: input.products,
    cadence,
    paused: schedule.state.paused,
    note: schedule.state.note,
    nextRunsAt: schedule.info.nextActionTimes.map((time) => time.toISOString()),
    recentRuns: schedule.info.recentActions.map((run) => ({
      workflowId: run.action.workflow.workflowId,
      scheduledAt: run.scheduledAt.toISOString(),
      startedAt: run.takenAt.toISOString(),
    })),
  };
}
