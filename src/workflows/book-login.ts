/**
 * One login's refresh within a book's night, as refreshes begun before 2026-11-29 started it: the
 * login's connection as its child, answering only how it ended (a parent's history records each
 * child's result). Refreshes now start the connection itself, which signals its end
 * (connection-window-end.ts): one workflow per login. This stays registered, unchanged, until no
 * refresh begun before then is open (a Pinned run of the old build may still start one), then goes
 * (docs/operations.md). Deterministic code only.
 */
import {
  ApplicationFailure,
  ChildWorkflowFailure,
  ParentClosePolicy,
  TerminatedFailure,
  TimeoutFailure,
  WorkflowIdReusePolicy,
  isCancellation,
  setWorkflowOptions,
  startChild,
  workflowInfo,
} from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import type { BookLoginEnd, BookLoginRequest } from '../contract/book-definitions.js';
import { CONNECTION_WORKFLOW_TYPE } from '../contract/connection-definitions.js';
import { DEFAULT_TIMING } from '../contract/timing.js';
import { ConnectionStatusKey, CustomerIdKey, LoginIdKey } from '../contract/search-attributes.js';
import type { connectionWorkflow } from './connection.js';

/** A failure's type as the connection raised it (ApplicationFailure type), or how Temporal ended it. */
function failureTypeOf(failure: ChildWorkflowFailure): string {
  const cause = failure.cause;
  if (cause instanceof ApplicationFailure) return cause.type ?? 'Unknown';
  if (isCancellation(cause)) return 'Cancelled';
  if (cause instanceof TerminatedFailure) return 'Terminated';
  if (cause instanceof TimeoutFailure) return 'TimedOut';
  return cause?.name ?? 'Unknown';
}

export async function bookLoginWorkflow(request: BookLoginRequest): Promise<BookLoginEnd> {
  const { connectionWorkflowId, input, summary } = request;
  const priority = workflowInfo().priority;
  try {
    const connection = await startChild<typeof connectionWorkflow>(CONNECTION_WORKFLOW_TYPE, {
      workflowId: connectionWorkflowId,
      args: [input],
      // A refresh cancelled (or this workflow ended by hand) cancels the connection it started.
      parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
      // One connection per login and night, even if the login shows up twice.
      workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
      typedSearchAttributes: [
        { key: CustomerIdKey, value: input.customerId },
        ...(input.session.kind === 'live' ? [] : [{ key: LoginIdKey, value: input.session.loginId }]),
        { key: ConnectionStatusKey, value: 'Authorizing' },
      ],
      // The refresh's priority (the scheduled class, the tenant's fairness key and weight).
      ...(priority ? { priority } : {}),
      staticSummary: summary,
    });
    const result = await connection.result();
    return { ended: 'completed', pollWaitMs: result.totalPolls * (input.timing?.pollIntervalMs ?? DEFAULT_TIMING.pollIntervalMs) };
  } catch (error) {
    if (error instanceof WorkflowExecutionAlreadyStartedError) return { ended: 'duplicate' };
    if (error instanceof ChildWorkflowFailure) return { ended: 'failed', failureType: failureTypeOf(error) };
    throw error;
  }
}

/** Pinned, like the connection it waits for (at most ~45 minutes): it finishes on the build it started on. */
setWorkflowOptions({ versioningBehavior: 'PINNED' }, bookLoginWorkflow);
