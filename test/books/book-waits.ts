/** What the book tests wait for and read back: a refresh's report once it ends, its progress reaching a state, a login's one connection. */
import assert from 'node:assert/strict';
import type { Client, WorkflowExecutionInfo } from '@temporalio/client';
import { bookConnectionWorkflowId } from '../../src/contract/book/book-definitions.js';
import { BookReportNotReadyError, type BookProgress, type BookReport, type BooksClient } from '../../src/client/index.js';
import { waitFor } from '../helpers/temporal.js';

/** The refresh's report, once it has ended. */
export function reportWhenEnded(books: BooksClient, refreshWorkflowId: string, timeoutMs = 90_000): Promise<BookReport> {
  return waitFor(
    async () => {
      try {
        return await books.report(refreshWorkflowId);
      } catch (error) {
        if (error instanceof BookReportNotReadyError) return undefined;
        throw error;
      }
    },
    { timeoutMs, intervalMs: 250, describe: `the report of ${refreshWorkflowId}` },
  );
}

/** The refresh's progress once `predicate` holds; a timeout says the last progress seen. */
export async function progressUntil(
  books: BooksClient,
  refreshWorkflowId: string,
  predicate: (progress: BookProgress) => boolean,
  describe: string,
  timeoutMs = 30_000,
): Promise<BookProgress> {
  let last: BookProgress | undefined;
  try {
    return await waitFor(
      async () => {
        last = await books.progress(refreshWorkflowId);
        return predicate(last) ? last : undefined;
      },
      { timeoutMs, intervalMs: 100, describe },
    );
  } catch (error) {
    throw new Error(`${(error as Error).message}; last progress: ${JSON.stringify(last)}`, { cause: error });
  }
}

/** The login's connection of that night, asserting it ran once (one connection per login and night) and completed. */
export async function onlyCompletedConnection(temporal: Client, customerId: string, loginId: string, night: string): Promise<WorkflowExecutionInfo> {
  const runs: WorkflowExecutionInfo[] = [];
  for await (const info of temporal.workflow.list({ query: `WorkflowId = ${JSON.stringify(bookConnectionWorkflowId(customerId, loginId, night))}` }))
    runs.push(info);
  assert.equal(runs.length, 1, `one connection for ${loginId}`);
  assert.equal(runs[0]?.status.name, 'COMPLETED', `the connection of ${loginId}`);
  return runs[0];
}
