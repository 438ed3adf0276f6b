/**
 * What a connection hands its completion callback when it ends (src/contract/callback-definitions.ts):
 * the event, made from its input, its final state and its result. Deterministic code only.
 */
import type { ScheduleCallbackInput } from '../activities/callback-activities.js';
import { webhookIdOf, type CallbackEventType } from '../contract/callback-definitions.js';
import type { ConnectionResult, ConnectionState } from '../contract/connection-definitions.js';
import type { ConnectionInput } from '../contract/connection-input.js';

const EVENT_OF_STATUS: Partial<Record<ConnectionState['status'], CallbackEventType>> = {
  Completed: 'connection.completed',
  Failed: 'connection.failed',
  Cancelled: 'connection.cancelled',
};

/** The callback's delivery for an ended connection; undefined when it asked for none or has not ended. */
export function callbackOfEnd(input: ConnectionInput | undefined, state: ConnectionState, result: ConnectionResult | undefined, run: { readonly workflowId: string; readonly runId: string }): ScheduleCallbackInput | undefined {
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
