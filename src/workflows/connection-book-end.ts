/**
 * What a book's connection tells the refresh that started it when it ends (`bookLoginEndedSignal`,
 * sent by the `tellBook` local activity as its last step, so the refresh has it in its history before
 * Temporal shows the connection closed). A few bytes, where a child's end would carry the whole
 * result into the refresh's history. Deterministic code only.
 */
import { CancellationScope, proxyLocalActivities } from '@temporalio/workflow';
import type { BookEndActivities, TellBookInput } from '../activities/book-end-activities.js';
import type { ConnectionResult, ConnectionState } from '../contract/connection-definitions.js';
import type { ConnectionInput } from '../contract/connection-input.js';

/** Retried until it lands: a lost end holds a slot of the refresh's window until its silent check. */
const book = proxyLocalActivities<BookEndActivities>({
  startToCloseTimeout: '30s',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '1m' },
  summary: 'tell the book refresh how the connection ended',
});

/** Tells the refresh how the connection ended; a cancellation arriving meanwhile does not cut it short. */
export async function tellBook(end: TellBookInput): Promise<void> {
  await CancellationScope.nonCancellable(() => book.tellBook(end));
}

/** What the connection tells which refresh; undefined when no refresh started it or it has not ended. */
export function bookEndOf(input: ConnectionInput | undefined, state: ConnectionState, result: ConnectionResult | undefined, workflowId: string): TellBookInput | undefined {
  const refreshWorkflowId = input?.book?.refreshWorkflowId;
  if (input === undefined || refreshWorkflowId === undefined) return undefined;
  if (state.status === 'Completed' && result !== undefined) return { refreshWorkflowId, end: { workflowId, ended: 'completed', pollWaitMs: result.totalPolls * input.timing.pollIntervalMs } };
  if (state.status === 'Cancelled') return { refreshWorkflowId, end: { workflowId, ended: 'failed', failureType: 'Cancelled' } };
  if (state.status === 'Failed') return { refreshWorkflowId, end: { workflowId, ended: 'failed', failureType: state.failure?.type ?? 'Unknown' } };
  return undefined;
}
