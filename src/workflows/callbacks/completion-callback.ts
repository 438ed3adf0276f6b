/**
 * What an ended connection or book refresh hands its completion callback
 * (src/contract/callbacks/callback-definitions.ts): the event, made from its input and how it ended; and the
 * local activity that starts the callback's delivery (its own workflow). Deterministic code only.
 */
import { CancellationScope, proxyLocalActivities } from '@temporalio/workflow';
import type { CallbackActivities, ScheduleCallbackInput } from '../../activities/callback-activities.js';
import type { BookRefreshInput, BookReport } from '../../contract/book/book-definitions.js';
import { webhookIdOf, type CallbackEventType } from '../../contract/callbacks/callback-definitions.js';
import type { ConnectionResult, ConnectionState } from '../../contract/connection/connection-definitions.js';
import type { ConnectionInput } from '../../contract/connection/connection-input.js';
import { UNTIL_IT_LANDS_RETRY } from '../../retry/activity-retry.js';

/**
 * Starts the delivery of a completion callback (the connection's result, or the refresh's report, is
 * not held up by a receiver that is down). Retried until it lands: a lost start is a callback never sent.
 */
const { scheduleCallback } = proxyLocalActivities<CallbackActivities>({
  startToCloseTimeout: '30s',
  retry: UNTIL_IT_LANDS_RETRY,
  summary: 'start the completion callback',
});

/** Starts the callback's delivery; a cancellation arriving meanwhile does not cut it short. */
export async function startCallback(callback: ScheduleCallbackInput): Promise<void> {
  await CancellationScope.nonCancellable(() => scheduleCallback(callback));
}

const EVENT_OF_STATUS: Partial<Record<ConnectionState['status'], CallbackEventType>> = {
  Completed: 'connection.completed',
  Failed: 'connection.failed',
  Cancelled: 'connection.cancelled',
};

/** The callback's delivery for an ended connection; undefined when it asked for none or has not ended. */
export function callbackOfEnd(
  input: ConnectionInput | undefined,
  state: ConnectionState,
  result: ConnectionResult | undefined,
  run: { readonly workflowId: string; readonly runId: string },
): ScheduleCallbackInput | undefined {
  const callback = input?.callback;
  const type = EVENT_OF_STATUS[state.status];
  if (input === undefined || callback === undefined || type === undefined) return undefined;
  const status = state.status as 'Completed' | 'Failed' | 'Cancelled';
  const completed = status === 'Completed' && result !== undefined;
  return {
    sourceRunId: run.runId,
    delivery: {
      customerId: input.customerId,
      url: callback.url,
      webhookId: webhookIdOf(run.runId),
      resultByReference: completed && !callback.includeResult,
      event: {
        type,
        timestamp: new Date().toISOString(),
        data: {
          workflowId: run.workflowId,
          runId: run.runId,
          customerId: input.customerId,
          status,
          loginId: result?.loginId ?? state.loginId,
          failure: state.failure,
          result: completed && callback.includeResult ? result : undefined,
        },
      },
    },
  };
}

/** The callback's delivery for an ended book refresh (its counts, no login's data); undefined when it asked for none. */
export function callbackOfBookEnd(
  input: BookRefreshInput,
  report: BookReport,
  run: { readonly workflowId: string; readonly runId: string },
): ScheduleCallbackInput | undefined {
  if (input.callback === undefined) return undefined;
  const cancelled = report.status === 'cancelled';
  return {
    sourceRunId: run.runId,
    delivery: {
      customerId: input.customerId,
      url: input.callback.url,
      webhookId: webhookIdOf(run.runId),
      resultByReference: false,
      event: {
        type: cancelled ? 'book.refresh.cancelled' : 'book.refresh.completed',
        timestamp: report.endedAt,
        data: {
          workflowId: run.workflowId,
          runId: run.runId,
          customerId: input.customerId,
          status: cancelled ? 'Cancelled' : 'Completed',
          counts: report.counts,
        },
      },
    },
  };
}
