/**
 * A book's entries (a workflow per enrolled login) as the pipeline sees them: one entry from its
 * memo, and a page of visibility rows read into entries, each row that cannot be opened named rather
 * than failing the page. Apart from the book client because it is reading records, not calling Temporal.
 */
import type { Client } from '@temporalio/client';
import { decodeMapFromPayloads } from '../sdk/internals.js';
import { BOOK_ENTRY_MEMO, bookEntryLoginOf, type BookEnrolment, type BookEntryFlag } from '../contract/book/book-definitions.js';
import type { VisibilityRow } from '../temporal/visibility-rows.js';

/** A login's place in the book, as the pipeline sees it. */
export interface BookEntrySummary extends BookEnrolment {
  readonly workflowId: string;
  /** Set while the login is left out of refreshes: it needs its end user. */
  readonly flag?: BookEntryFlag | undefined;
}

export interface BookPageOfEntries {
  readonly entries: readonly BookEntrySummary[];
  /** Rows of the page whose record this client cannot open (sealed with a key not of this tenant's, or by none), with why; absent when none. */
  readonly unreadable?: readonly { readonly workflowId: string; readonly problem: string }[] | undefined;
  /** Pass it back for the next page; absent on the last. */
  readonly nextPageToken?: string | undefined;
}

/** The entries of `customerId`'s book among a page's rows, and the rows that could not be read as one, with why. */
export async function entriesOfRows(client: Client, customerId: string, rows: readonly VisibilityRow[]) {
  const entries: BookEntrySummary[] = [];
  const unreadable: { workflowId: string; problem: string }[] = [];
  for (const execution of rows) {
    const workflowId = execution.execution?.workflowId ?? '';
    // One row that cannot be opened is named, not allowed to fail the page (the rest are the tenant's).
    if (bookEntryLoginOf(workflowId, customerId) === undefined) {
      unreadable.push({ workflowId, problem: `its workflow id is not one of ${customerId}'s book entries` });
      continue;
    }
    try {
      const memo = await decodeMapFromPayloads(client.options.loadedDataConverter, execution.memo?.fields ?? undefined, {
        namespace: client.options.namespace,
        workflowId,
      });
      const enrolment = memo?.[BOOK_ENTRY_MEMO.enrolment] as Partial<BookEnrolment> | undefined;
      if (typeof enrolment !== 'object' || enrolment === null || typeof enrolment.products !== 'object' || enrolment.products === null) {
        unreadable.push({ workflowId, problem: 'it has no enrolment record' });
        continue;
      }
      entries.push(entryOf(workflowId, memo));
    } catch (error) {
      unreadable.push({ workflowId, problem: (error instanceof Error ? error.message : String(error)).slice(0, 300) });
    }
  }
  return { entries, unreadable };
}

export function entryOf(workflowId: string, memo: Record<string, unknown> | undefined): BookEntrySummary {
  const enrolment = memo?.[BOOK_ENTRY_MEMO.enrolment] as BookEnrolment;
  const flag = memo?.[BOOK_ENTRY_MEMO.flag] as BookEntryFlag | undefined;
  return { ...enrolment, workflowId, ...(flag ? { flag } : {}) };
}
