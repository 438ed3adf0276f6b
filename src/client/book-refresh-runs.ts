/**
 * A book's refreshes once started: listed as visibility knows them, one's progress (an ended one's
 * from its report), the updates that steer it and why one is refused, its report and report pages,
 * and the error a call about a refresh becomes. Apart from the book client because it speaks to the
 * refresh workflows, not to the book's entries or its Schedule.
 */
import { WorkflowNotFoundError, WorkflowUpdateFailedError, type Client, type WorkflowHandle } from '@temporalio/client';
import {
  bookProgressQuery,
  bookRefreshesQuery,
  bookReportPageId,
  type BookProgress,
  type BookReport,
  type BookReportPage,
} from '../contract/book/book-definitions.js';
import { BookRefreshNotFoundError, BookRefreshRefusedError, BookReportNotReadyError, InvalidBookRequestError } from './errors.js';
import { clientErrorOf } from './temporal-errors.js';
import { unreadableQueryError } from './unreadable-history.js';
import { BookCadenceKey, CustomerIdKey } from '../contract/search-attributes.js';
import { listedExecutions } from '../temporal/visibility-rows.js';

/** One refresh of a book as visibility knows it. */
export interface BookRefreshSummary {
  readonly refreshWorkflowId: string;
  readonly customerId: string;
  readonly cadence: string;
  /** RUNNING, COMPLETED, FAILED, CANCELLED, TERMINATED, ... */
  readonly executionStatus: string;
  readonly startedAt: string;
  readonly closedAt?: string | undefined;
  /** The workflow that started it as its child (a Nexus relay), if any; absent for the Schedule's and those run by hand. */
  readonly parentWorkflowId?: string | undefined;
}

/** The book client's error for what Temporal threw at `address`; with `workflowId`, a workflow not found is BookRefreshNotFoundError. */
export function bookErrorOf(address: string | undefined, error: unknown, workflowId?: string): Error {
  return clientErrorOf(error, address, (known) =>
    known instanceof WorkflowNotFoundError && workflowId !== undefined ? new BookRefreshNotFoundError(JSON.stringify(workflowId), { cause: known }) : undefined,
  );
}

/** At most `limit` refreshes of `customerId`'s book (of `cadence`, or all; `running` only, or all), newest first. */
export async function listRefreshes(
  client: Client,
  address: string | undefined,
  customerId: string,
  cadence: string | undefined,
  running: boolean | undefined,
  limit: number,
): Promise<BookRefreshSummary[]> {
  const query = bookRefreshesQuery(customerId, cadence, running);
  const out: BookRefreshSummary[] = [];
  try {
    // Without memos: a listing needs none, and one this process cannot open must not fail it.
    for await (const info of listedExecutions(client, query, Math.min(limit, 100))) {
      // A refresh that continued as new is listed once per run: the current run stands for it.
      if (info.status.name === 'CONTINUED_AS_NEW' || out.some((known) => known.refreshWorkflowId === info.workflowId)) continue;
      out.push({
        refreshWorkflowId: info.workflowId,
        customerId: info.typedSearchAttributes.get(CustomerIdKey) ?? customerId,
        cadence: info.typedSearchAttributes.get(BookCadenceKey) ?? cadence ?? '',
        executionStatus: info.status.name,
        startedAt: info.startTime.toISOString(),
        closedAt: info.closeTime?.toISOString(),
        ...(info.parentExecution?.workflowId ? { parentWorkflowId: info.parentExecution.workflowId } : {}),
      });
      if (out.length >= limit) break;
    }
  } catch (error) {
    throw bookErrorOf(address, error);
  }
  return out;
}

/** The handle of a book refresh; InvalidBookRequestError when the id is not a book refresh's. */
export function refreshHandle(client: Client, refreshWorkflowId: string): WorkflowHandle {
  if (typeof refreshWorkflowId !== 'string' || !refreshWorkflowId.startsWith('book-')) {
    throw new InvalidBookRequestError(
      `refresh id: must be a book refresh's workflow id (book-<customerId>:<cadence>-<time>), got ${JSON.stringify(String(refreshWorkflowId).slice(0, 100))}`,
    );
  }
  return client.workflow.getHandle(refreshWorkflowId);
}

/** Where a refresh is (see `BooksClient.progress`). */
export async function refreshProgress(client: Client, address: string | undefined, refreshWorkflowId: string): Promise<BookProgress> {
  const handle = refreshHandle(client, refreshWorkflowId);
  try {
    return await handle.query(bookProgressQuery);
  } catch (error) {
    const ended = await endedProgress(handle).catch(() => undefined);
    if (ended) return ended;
    throw (await unreadableQueryError(client, refreshWorkflowId, error)) ?? bookErrorOf(address, error, refreshWorkflowId);
  }
}

async function endedProgress(handle: WorkflowHandle): Promise<BookProgress | undefined> {
  if ((await handle.describe()).status.name === 'RUNNING') return undefined;
  const { endedAt, pages: _pages, skippedWhileRunning: _skipped, windowChanges: _changes, ...summary } = (await handle.result()) as BookReport;
  return { ...summary, inFlight: 0, updatedAt: endedAt };
}

/** Sends one update (`act`) to a refresh; BookRefreshRefusedError when its validator refuses it or the refresh has ended. */
export async function updateRefresh(
  client: Client,
  address: string | undefined,
  refreshWorkflowId: string,
  request: BookRefreshRefusedError['request'],
  act: (handle: WorkflowHandle) => Promise<BookProgress>,
): Promise<BookProgress> {
  const handle = refreshHandle(client, refreshWorkflowId);
  try {
    return await act(handle);
  } catch (error) {
    if (error instanceof WorkflowUpdateFailedError)
      throw new BookRefreshRefusedError(refreshWorkflowId, request, error.cause?.message ?? error.message, { cause: error });
    // An update to a closed workflow is answered "not found": say that it has ended, if it has.
    if (error instanceof WorkflowNotFoundError) {
      const status = await handle.describe().then(
        (description) => description.status.name,
        () => undefined,
      );
      if (status !== undefined && status !== 'RUNNING')
        throw new BookRefreshRefusedError(refreshWorkflowId, request, `the refresh has ended (${status})`, { cause: error });
    }
    throw bookErrorOf(address, error, refreshWorkflowId);
  }
}

/** The night's summary of a refresh that has ended; BookReportNotReadyError while it runs. */
export async function refreshReport(client: Client, address: string | undefined, refreshWorkflowId: string): Promise<BookReport> {
  const handle = refreshHandle(client, refreshWorkflowId);
  try {
    const description = await handle.describe();
    if (description.status.name === 'RUNNING') throw new BookReportNotReadyError(refreshWorkflowId);
    return (await handle.result()) as BookReport;
  } catch (error) {
    throw bookErrorOf(address, error, refreshWorkflowId);
  }
}

/** One page of a refresh's per-login outcomes (pages count from 1). */
export async function refreshReportPage(client: Client, address: string | undefined, refreshWorkflowId: string, page: number): Promise<BookReportPage> {
  if (!Number.isInteger(page) || page < 1) throw new InvalidBookRequestError(`page: must be a whole number from 1, got ${JSON.stringify(page)}`);
  const pageId = bookReportPageId(refreshWorkflowId, page);
  try {
    return (await client.workflow.getHandle(pageId).result()) as BookReportPage;
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) throw await missingPage(client, address, refreshWorkflowId, page, error);
    throw bookErrorOf(address, error, pageId);
  }
}

/** Why a report page is not there: its refresh is still running (not written yet), or no such page or refresh. */
async function missingPage(client: Client, address: string | undefined, refreshWorkflowId: string, page: number, cause: WorkflowNotFoundError): Promise<Error> {
  try {
    const description = await refreshHandle(client, refreshWorkflowId).describe();
    if (description.status.name === 'RUNNING') return new BookReportNotReadyError(refreshWorkflowId, { cause, page });
  } catch (error) {
    return bookErrorOf(address, error, refreshWorkflowId);
  }
  return bookErrorOf(address, cause, bookReportPageId(refreshWorkflowId, page));
}
