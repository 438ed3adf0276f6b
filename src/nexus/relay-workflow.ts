/**
 * The workflows behind the asynchronous operations of the `connections` Nexus service: each runs the
 * product's own workflow as its child and returns its result. They exist because an asynchronous
 * Nexus operation delivers its backing workflow's result bytes to the caller as they are: the
 * product's workflow's result is sealed under the tenant's key, which the caller does not hold; the
 * relay's result is sealed (by the Nexus worker's codec) under the caller's boundary key.
 *
 * - `nexusConnectionRelay` (`start`): the connection `connection-<customerId>:<applicationId>`.
 * - `nexusBookRefreshRelay` (`refreshBook`): a refresh of the tenant's book, `book-<customerId>:<cadence>-<time>`.
 *
 * Cancelling the operation cancels the relay, which cancels its child and waits for it to end: a
 * connection ends Cancelled; a book refresh starts no more logins, cancels those in flight and still
 * writes its report (its status `cancelled`), which the relay returns. A child whose id is taken (a
 * connection or refresh started outside the service in the moment since the handler looked) fails the
 * relay with a non-retryable ApplicationFailure naming it (`ConnectionAlreadyRunning`, `BookRefreshAlreadyRunning`).
 * Deterministic code only: bundled by the Nexus worker (src/nexus/nexus-worker.ts).
 */
import { ApplicationFailure, executeChild, ParentClosePolicy, ChildWorkflowCancellationType } from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError, type Priority } from '@temporalio/common';
import { connectionStartAttributes } from '../contract/search-attributes.js';
import { CONNECTION_WORKFLOW_TYPE, type ConnectionResult } from '../contract/connection-definitions.js';
import type { ConnectionInput } from '../contract/connection-input.js';
import { BOOK_REFRESH_WORKFLOW_TYPE, bookRefreshAttributes, type BookRefreshInput, type BookReport } from '../contract/book-definitions.js';

export interface RelayInput {
  /** `connection-<customerId>:<applicationId>`. */
  readonly connectionWorkflowId: string;
  /** The product's task queue, where the connection runs. */
  readonly taskQueue: string;
  /** Parsed by the handler (defaults applied), the customer id its endpoint's tenant. */
  readonly input: ConnectionInput;
  readonly priority?: Priority | undefined;
}

export interface BookRelayInput {
  /** `book-<customerId>:<cadence>-<time>`, as a refresh run by hand is named. */
  readonly refreshWorkflowId: string;
  /** Where book refreshes run (the unattended pool's queue, or the product's). */
  readonly taskQueue: string;
  /** The customer id its endpoint's tenant; window and page size as the handler settled them. */
  readonly input: BookRefreshInput;
  readonly priority?: Priority | undefined;
}

/** The child's id was taken while the relay started it: a typed, non-retryable failure naming it. */
function alreadyRunning(error: unknown, type: string, what: string): never {
  if (error instanceof WorkflowExecutionAlreadyStartedError) {
    throw ApplicationFailure.create({ type, message: `${what} is already running (started outside the connections Nexus service)`, nonRetryable: true, details: [error.workflowId] });
  }
  throw error;
}

export async function nexusConnectionRelay({ connectionWorkflowId, taskQueue, input, priority }: RelayInput): Promise<ConnectionResult> {
  const pairs = connectionStartAttributes(input);
  try {
    return await executeChild<(input: ConnectionInput) => Promise<ConnectionResult>>(CONNECTION_WORKFLOW_TYPE, {
      workflowId: connectionWorkflowId,
      taskQueue,
      args: [input],
      typedSearchAttributes: pairs,
      ...(priority ? { priority } : {}),
      // The connection ends with its relay (a terminated relay cancels it); cancelling waits for its end.
      parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
      cancellationType: ChildWorkflowCancellationType.WAIT_CANCELLATION_COMPLETED,
    });
  } catch (error) {
    return alreadyRunning(error, 'ConnectionAlreadyRunning', `connection ${connectionWorkflowId}`);
  }
}

export async function nexusBookRefreshRelay({ refreshWorkflowId, taskQueue, input, priority }: BookRelayInput): Promise<BookReport> {
  try {
    return await executeChild<(input: BookRefreshInput) => Promise<BookReport>>(BOOK_REFRESH_WORKFLOW_TYPE, {
      workflowId: refreshWorkflowId,
      taskQueue,
      args: [input],
      // What the book's listing of refreshes reads (BooksClient.refreshes), as a refresh run by hand has.
      typedSearchAttributes: bookRefreshAttributes(input.customerId, input.cadence),
      staticSummary: `Refresh of the ${input.cadence} book of ${input.customerId} (through the connections Nexus service)`,
      ...(priority ? { priority } : {}),
      // The refresh ends with its relay; cancelling it waits for its report.
      parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
      cancellationType: ChildWorkflowCancellationType.WAIT_CANCELLATION_COMPLETED,
    });
  } catch (error) {
    return alreadyRunning(error, 'BookRefreshAlreadyRunning', `book refresh ${refreshWorkflowId}`);
  }
}
