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
 * writes its report (its status `cancelled`), which the relay returns. A child whose id is taken fails
 * the relay with a non-retryable ApplicationFailure naming it (`ConnectionAlreadyRunning`,
 * `BookRefreshAlreadyRunning`): a connection started outside the service in the moment since the
 * handler looked; for a refresh, only one started in the same second, by hand or by its Schedule
 * (its id is stamped to the second as the Schedule stamps its runs), so the handler's check through visibility, which may lag, is the book's one-at-a-time
 * guard, as it is BooksClient.run's.
 * Deterministic code only: bundled by the Nexus worker (src/nexus/nexus-worker.ts).
 */
import { ApplicationFailure, executeChild, ParentClosePolicy, ChildWorkflowCancellationType, workflowInfo } from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError, type Priority, type SearchAttributePair } from '@temporalio/common';
import { connectionStartAttributes } from '../contract/search-attributes.js';
import { CONNECTION_WORKFLOW_TYPE, type ConnectionResult } from '../contract/connection/connection-definitions.js';
import type { ConnectionInput } from '../contract/connection/connection-input.js';
import {
  BOOK_REFRESH_WORKFLOW_TYPE,
  bookRefreshAttributes,
  bookRefreshRunId,
  type BookRefreshInput,
  type BookReport,
} from '../contract/book/book-definitions.js';

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
  /**
   * Named by relays started before 2026-12-03; absent: `book-<customerId>:<cadence>-<time>` from the
   * relay's own start time, as a refresh run by hand is named, so the handler names a running relay's
   * refresh from one describe of the relay.
   */
  readonly refreshWorkflowId?: string | undefined;
  /** Where book refreshes run (the unattended pool's queue, or the product's). */
  readonly taskQueue: string;
  /** The customer id its endpoint's tenant; window and page size as the handler settled them. */
  readonly input: BookRefreshInput;
  readonly priority?: Priority | undefined;
}

/**
 * Runs the relay's one child and returns its result: it ends with its relay (a terminated relay
 * cancels it), and cancelling the relay waits for the child's end. A child whose id was taken while
 * the relay started it fails the relay with a typed, non-retryable failure naming it.
 */
async function relayChild<R>(
  workflowType: string,
  options: {
    readonly workflowId: string;
    readonly taskQueue: string;
    readonly args: unknown[];
    readonly typedSearchAttributes: SearchAttributePair[];
    readonly staticSummary?: string;
    readonly priority?: Priority | undefined;
  },
  taken: { readonly type: string; readonly what: string },
): Promise<R> {
  const { priority, staticSummary, ...rest } = options;
  try {
    return await executeChild<(...args: unknown[]) => Promise<R>>(workflowType, {
      ...rest,
      ...(staticSummary === undefined ? {} : { staticSummary }),
      ...(priority ? { priority } : {}),
      parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
      cancellationType: ChildWorkflowCancellationType.WAIT_CANCELLATION_COMPLETED,
    });
  } catch (error) {
    if (error instanceof WorkflowExecutionAlreadyStartedError) {
      throw ApplicationFailure.create({
        type: taken.type,
        message: `${taken.what} is already running (started outside the connections Nexus service)`,
        nonRetryable: true,
        details: [error.workflowId],
      });
    }
    throw error;
  }
}

export async function nexusConnectionRelay({ connectionWorkflowId, taskQueue, input, priority }: RelayInput): Promise<ConnectionResult> {
  return await relayChild<ConnectionResult>(
    CONNECTION_WORKFLOW_TYPE,
    { workflowId: connectionWorkflowId, taskQueue, args: [input], typedSearchAttributes: connectionStartAttributes(input), priority },
    { type: 'ConnectionAlreadyRunning', what: `connection ${connectionWorkflowId}` },
  );
}

export async function nexusBookRefreshRelay({ refreshWorkflowId: named, taskQueue, input, priority }: BookRelayInput): Promise<BookReport> {
  const refreshWorkflowId = named ?? bookRefreshRunId(input.customerId, input.cadence, workflowInfo().startTime);
  return await relayChild<BookReport>(
    BOOK_REFRESH_WORKFLOW_TYPE,
    {
      workflowId: refreshWorkflowId,
      taskQueue,
      args: [input],
      // What the book's listing of refreshes reads (BooksClient.refreshes), as a refresh run by hand has.
      typedSearchAttributes: bookRefreshAttributes(input.customerId, input.cadence),
      staticSummary: `Refresh of the ${input.cadence} book of ${input.customerId} (through the connections Nexus service)`,
      priority,
    },
    { type: 'BookRefreshAlreadyRunning', what: `book refresh ${refreshWorkflowId}` },
  );
}
