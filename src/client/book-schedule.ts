/**
 * A book's Temporal Schedule (one per tenant and cadence): the spec, action and policies it is
 * written with, and its summary read back from its description. Apart from the book client because
 * it is how one cadence of a book is written as a Schedule, not the calls that write it.
 */
import type { ScheduleDescription, ScheduleOptions, WorkflowStartOptions } from '@temporalio/client';
import { TypedSearchAttributes } from '@temporalio/common';
import type { z } from 'zod';
import { BOOK_REFRESH_WORKFLOW_TYPE, bookRefreshAttributes, type BookRefreshInput } from '../contract/book/book-definitions.js';
import type { WindowBounds } from '../contract/window/window-definitions.js';
import { startPriority, type PriorityPolicy } from '../contract/priority.js';
import type { BookScheduleInput } from './book-input.js';
import type { RefreshCadenceArgs } from './refresh-schedule-input.js';
import { bookCadenceOf, scheduleSpecOf } from './schedule-cadence.js';

export interface BookScheduleSummary {
  readonly scheduleId: string;
  readonly customerId: string;
  readonly cadence: string;
  readonly when: RefreshCadenceArgs;
  readonly window?: Partial<WindowBounds> | undefined;
  readonly pageSize?: number | undefined;
  readonly paused: boolean;
  readonly note?: string | undefined;
  readonly nextRunsAt: readonly string[];
  readonly recentRuns: readonly { readonly workflowId: string; readonly scheduledAt: string }[];
}

/** A missed nightly run is still taken within this window (then SKIP applies). */
const CATCHUP_WINDOW = '1 hour';

/** What the Schedule `scheduleId` of a book is written with: its refreshes of `refreshInput` start on `taskQueue`. */
export function bookScheduleOptions(
  input: z.infer<typeof BookScheduleInput>,
  scheduleId: string,
  refreshInput: BookRefreshInput,
  taskQueue: string,
  priority: PriorityPolicy,
) {
  const spec = scheduleSpecOf(input.when);
  const attributes = new TypedSearchAttributes(bookRefreshAttributes(input.customerId, input.cadence));
  // SDK 1.24's action type omits `priority`, which its encoder reads (schedule-helpers compilePriority).
  const action: ScheduleOptions['action'] & Pick<WorkflowStartOptions, 'priority'> = {
    type: 'startWorkflow',
    workflowType: BOOK_REFRESH_WORKFLOW_TYPE,
    // Temporal appends each run's scheduled time: the night's id.
    workflowId: scheduleId,
    taskQueue,
    args: [refreshInput],
    typedSearchAttributes: attributes,
    staticSummary: `Refresh of the ${input.cadence} book of ${input.customerId}`,
    priority: startPriority(priority, 'scheduled', input.customerId),
  };
  // SKIP: a refresh still running when the next is due makes that one skip (its report counts it).
  const policies: ScheduleOptions['policies'] = { overlap: 'SKIP', catchupWindow: CATCHUP_WINDOW, pauseOnFailure: false };
  const note = input.note ?? `${input.cadence} refresh of the book of ${input.customerId}`;
  return { spec, attributes, action, policies, note };
}

/** The book's Schedule as its description tells it, with its upcoming and recent runs. */
export function bookScheduleSummaryOf(scheduleId: string, customerId: string, cadence: string, description: ScheduleDescription): BookScheduleSummary {
  const action = description.action;
  const input = action.type === 'startWorkflow' ? (action.args?.[0] as BookRefreshInput | undefined) : undefined;
  return {
    scheduleId,
    customerId,
    cadence,
    when: bookCadenceOf(description.spec),
    window: input?.window,
    pageSize: input?.pageSize,
    paused: description.state.paused,
    note: description.state.note,
    nextRunsAt: description.info.nextActionTimes.map((time) => time.toISOString()),
    recentRuns: description.info.recentActions.map((run) => ({ workflowId: run.action.workflow.workflowId, scheduledAt: run.scheduledAt.toISOString() })),
  };
}
