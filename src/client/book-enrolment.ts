/**
 * How a login comes into its book: the enrolment record and the start of its entry workflow (signal
 * with start), and the enrolment a completed connection gives (its login, session, products and
 * timing, read from its result and its start). Apart from the book client because it is what an
 * enrolment is made of, not the call that sends it.
 */
import { WorkflowFailedError, type Client } from '@temporalio/client';
import { TypedSearchAttributes } from '@temporalio/common';
import type { z } from 'zod';
import { decodeFromPayloadsAtIndex } from '../sdk/internals.js';
import { BOOK_ENTRY_MEMO, bookEntryWorkflowId, enrolSignal, type BookEnrolment } from '../contract/book/book-definitions.js';
import type { ConnectionInput } from '../contract/connection/connection-input.js';
import type { ConnectionResult } from '../contract/connection/connection-definitions.js';
import { startPriority, type PriorityPolicy } from '../contract/priority.js';
import { BookCadenceKey, CustomerIdKey, LoginIdKey } from '../contract/search-attributes.js';
import type { BookEnrolmentInput } from './book-input.js';
import { bookErrorOf } from './book-refresh-runs.js';
import { InvalidBookRequestError } from './errors.js';

/** The enrolment record of a checked request, enrolled now. */
export function enrolmentOf(input: z.infer<typeof BookEnrolmentInput>): BookEnrolment {
  return {
    customerId: input.customerId,
    loginId: input.loginId,
    cadence: input.cadence,
    session: input.session,
    products: input.products,
    ...(input.timing ? { timing: input.timing } : {}),
    enrolledAt: new Date().toISOString(),
  };
}

/** The signal-with-start of the login's entry workflow on `taskQueue` that enrols it (or changes its enrolment). */
export function entryStartOf(enrolment: BookEnrolment, taskQueue: string, priority: PriorityPolicy) {
  return {
    workflowId: bookEntryWorkflowId(enrolment.customerId, enrolment.loginId),
    taskQueue,
    args: [enrolment],
    signal: enrolSignal,
    signalArgs: [enrolment] as [BookEnrolment],
    memo: { [BOOK_ENTRY_MEMO.enrolment]: enrolment },
    typedSearchAttributes: new TypedSearchAttributes([
      { key: CustomerIdKey, value: enrolment.customerId },
      { key: LoginIdKey, value: enrolment.loginId },
      { key: BookCadenceKey, value: enrolment.cadence },
    ]),
    staticSummary: `Login ${enrolment.loginId} in the ${enrolment.cadence} book of ${enrolment.customerId}`,
    // An entry only waits for messages: ahead of connections so an enrolment lands at once.
    priority: startPriority(priority, 'pipeline', enrolment.customerId),
  };
}

/**
 * The enrolment the completed connection `workflowId` gives: its login, its session as the refresh's
 * (`cached`, or `refresh` for a live refresh), its products and timing. InvalidBookRequestError when
 * the connection did not complete.
 */
export async function connectionEnrolment(client: Client, address: string | undefined, workflowId: string) {
  const handle = client.workflow.getHandle(workflowId);
  let result: ConnectionResult;
  let input: ConnectionInput;
  try {
    result = (await handle.result()) as ConnectionResult;
    const started = (await handle.fetchHistory()).events?.[0]?.workflowExecutionStartedEventAttributes;
    input = await decodeFromPayloadsAtIndex<ConnectionInput>(client.options.loadedDataConverter, 0, started?.input?.payloads, {
      namespace: client.options.namespace,
      workflowId,
    });
  } catch (error) {
    if (error instanceof WorkflowFailedError)
      throw new InvalidBookRequestError(
        `connection ${workflowId} did not complete (${error.cause?.message ?? error.message}): there is no saved login to enrol`,
        {
          cause: error,
        },
      );
    throw bookErrorOf(address, error, workflowId);
  }
  return {
    customerId: result.customerId,
    loginId: result.loginId,
    session: input.session.kind === 'refresh' ? ('refresh' as const) : ('cached' as const),
    products: input.products,
    ...(input.timing ? { timing: { pollIntervalMs: input.timing.pollIntervalMs, pollTimeoutMs: input.timing.pollTimeoutMs } } : {}),
  };
}
