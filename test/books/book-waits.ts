/** What the book tests wait for: a refresh's report once it ends, and its progress reaching a state. */
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
export async function progressUntil(books: BooksClient, refreshWorkflowId: string, predicate: (progress: BookProgress) => boolean, describe: string, timeoutMs = 30_000): Promise<BookProgress> {
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
