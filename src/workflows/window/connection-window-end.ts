/**
 * What a connection tells the window that admitted it when it ends: a book's refresh (the connection's
 * `book` input) or its tenant's admission (an unattended connection started outside a book,
 * connection-admission.ts). The `bookLoginEndedSignal`, sent by the `tellBook` local activity as the
 * connection's last step, so the window has it in its history before Temporal shows the connection
 * closed. A few bytes, where a child's end would carry the whole result into the window's history.
 * Deterministic code only.
 */
import { CancellationScope, proxyLocalActivities } from '@temporalio/workflow';
import type { BookEndActivities, TellBookInput } from '../../activities/book-end-activities.js';
import type { BookLoginEnded } from '../../contract/book/book-definitions.js';
import type { ConnectionResult, ConnectionState } from '../../contract/connection/connection-definitions.js';
import type { ConnectionInput } from '../../contract/connection/connection-input.js';
import { UNTIL_IT_LANDS_RETRY } from '../../retry/activity-retry.js';

/** Retried until it lands: a lost end holds a slot of the window until its silent check. */
const book = proxyLocalActivities<BookEndActivities>({
  startToCloseTimeout: '30s',
  retry: UNTIL_IT_LANDS_RETRY,
  summary: 'tell the window that admitted it how the connection ended',
});

/** Tells the window how the connection ended; a cancellation arriving meanwhile does not cut it short. */
export async function tellWindow(end: TellBookInput): Promise<void> {
  await CancellationScope.nonCancellable(() => book.tellBook(end));
}

/**
 * What the connection tells which window: its book's refresh, else the admission it asked for room
 * (`admissionWorkflowId`, undefined when it asked none); undefined when none admitted it or it has not ended.
 */
export function windowEndOf(
  input: ConnectionInput | undefined,
  state: ConnectionState,
  result: ConnectionResult | undefined,
  run: { readonly workflowId: string; readonly runId: string },
  admissionWorkflowId: string | undefined,
): TellBookInput | undefined {
  const refreshWorkflowId = input?.book?.refreshWorkflowId ?? admissionWorkflowId;
  if (input === undefined || refreshWorkflowId === undefined) return undefined;
  // An admission tells runs of one id apart (a book starts one run an id a night).
  const who = input.book === undefined ? { workflowId: run.workflowId, runId: run.runId } : { workflowId: run.workflowId };
  if (state.status === 'Completed' && result !== undefined)
    return { refreshWorkflowId, end: { ...who, ended: 'completed', pollWaitMs: result.totalPolls * input.timing.pollIntervalMs } };
  if (state.status === 'Cancelled') return { refreshWorkflowId, end: { ...who, ended: 'failed', failureType: 'Cancelled' } };
  if (state.status === 'Failed') return { refreshWorkflowId, end: { ...who, ended: 'failed', failureType: state.failure?.type ?? 'Unknown' } };
  return undefined;
}

/** Why an end signal received is not one (anyone who holds the tenant's key can signal); undefined when it is. */
export function endProblem(end: BookLoginEnded | undefined): string | undefined {
  if (typeof end !== 'object' || end === null || typeof end.workflowId !== 'string') return 'no workflowId';
  if (end.runId !== undefined && (typeof end.runId !== 'string' || end.runId.length > 100)) return 'runId is not a run id';
  if (end.ended === 'completed')
    return end.pollWaitMs === undefined || (Number.isFinite(end.pollWaitMs) && end.pollWaitMs >= 0) ? undefined : 'pollWaitMs is not a duration';
  if (end.ended === 'failed') return typeof end.failureType === 'string' && end.failureType.length <= 100 ? undefined : 'failureType is not a failure type';
  return `ended is ${JSON.stringify((end as { ended?: unknown }).ended)}`;
}
