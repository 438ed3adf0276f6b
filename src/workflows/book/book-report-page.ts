/**
 * The record of one page of a book's refresh: its per-login outcomes, kept as a closed workflow
 * (`<refresh workflow id>-page-<n>`) whose result the pipeline and the CLI read, for as long as the
 * namespace retains closed workflows. One small payload per page rather than one for the whole book.
 * Deterministic code only.
 */
import { setCurrentDetails, setWorkflowOptions } from '@temporalio/workflow';
import type { BookReportPage } from '../../contract/book/book-definitions.js';

export async function bookReportPageWorkflow(page: BookReportPage): Promise<BookReportPage> {
  setCurrentDetails(`Page ${page.page} of book refresh ${page.refreshWorkflowId}: ${page.outcomes.length} logins`);
  return Promise.resolve(page);
}

setWorkflowOptions({ versioningBehavior: 'AUTO_UPGRADE' }, bookReportPageWorkflow);
