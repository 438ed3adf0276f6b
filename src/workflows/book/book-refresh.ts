/**
 * The refresh of a tenant's book (one cadence) as one durable operation: a sliding window of
 * connection children, as Temporal's batch samples keep one, sized by what it observes
 * (window-controller.ts), so the fleet is never handed more unattended work than it carries.
 *
 * Per run: read one page of the book (a local activity through visibility), start a child per
 * enrolled login while the window has room (a login forgotten since the page was read is skipped,
 * a flagged or malformed one reported), let the page's children finish (the window drains), keep
 * the page's per-login outcomes as a report page, then continue as new with the next page's token.
 * Draining before continuing as new means no child ever outlives the run that started it, so none
 * is lost and none is started twice; its cost is the tail of each page (the progress's `drainMs`).
 *
 * This file is the wiring: the run's state, handlers and sequence are `BookRefreshRun`'s
 * (book-refresh-run.ts). Operators: `bookProgress` (query); `pauseBook`, `resumeBook`, `cancelBook`,
 * `resizeBook` (updates); the Web UI's current details say the same in a line. The result is the
 * night's report. Deterministic code only.
 */
import { makeContinueAsNewFunc, setHandler, setWorkflowOptions, workflowInfo } from '@temporalio/workflow';
import {
  bookLoginEndedSignal,
  bookProgressQuery,
  cancelBookUpdate,
  pauseBookUpdate,
  resizeBookUpdate,
  resumeBookUpdate,
  type BookRefreshInput,
  type BookReport,
} from '../../contract/book/book-definitions.js';
import { bookRefreshSettings } from './book-refresh-input.js';
import { BookRefreshRun } from './book-refresh-run.js';
import { callbackOfBookEnd, startCallback } from '../callbacks/completion-callback.js';

export async function bookRefreshWorkflow(input: BookRefreshInput): Promise<BookReport> {
  const refresh = new BookRefreshRun(input, bookRefreshSettings(input));
  const refuse = (update: Parameters<BookRefreshRun['refusal']>[0]) => {
    const refusal = refresh.refusal(update);
    if (refusal) throw new Error(refusal);
  };
  setHandler(bookProgressQuery, () => refresh.progress());
  setHandler(bookLoginEndedSignal, (end) => refresh.loginEnded(end));
  setHandler(pauseBookUpdate, (request) => refresh.pause(request?.reason), {
    validator: (_request) => refuse('pause'),
    description: 'Start no more connections until resumed; those in flight finish.',
  });
  setHandler(resumeBookUpdate, (_request) => refresh.resume(), {
    validator: (_request) => refuse('resume'),
    description: 'Start connections again after a pause.',
  });
  setHandler(cancelBookUpdate, (request) => refresh.cancel(request?.reason), {
    validator: (_request) => refuse('cancel'),
    description: 'Start no more connections and cancel those in flight; the report is still written.',
  });
  setHandler(resizeBookUpdate, (request: { readonly size?: number; readonly unpin?: boolean }) => refresh.resize(request), {
    validator: (request: { readonly size?: number; readonly unpin?: boolean } | undefined) => {
      refuse('resize');
      const problem = BookRefreshRun.resizeProblem(request);
      if (problem) throw new Error(problem);
    },
    description: 'Pin the window at a size (an operator overrides the controller), or unpin it.',
  });

  // The run waits for updates in flight to answer before it ends or hands over.
  const end = await refresh.run();
  if ('report' in end) {
    // Started with a callback URL (no run recorded before callbacks has one: its branch never replays).
    const callback = callbackOfBookEnd(input, end.report, workflowInfo());
    if (callback !== undefined) await startCallback(callback);
    return end.report;
  }
  // The next page's run starts on the current build (this one was pinned to the build it began on).
  return await makeContinueAsNewFunc<typeof bookRefreshWorkflow>({ initialVersioningBehavior: 'AUTO_UPGRADE' })({ ...input, carried: end.next });
}

/**
 * Pinned per page: a run (one page, minutes) finishes on the build it began on, so a deploy that
 * changes how the window decides never replays a run's history under other rules, and a change to
 * its steps needs no `patched()`; each page's run continues as new onto the current build
 * (initialVersioningBehavior AUTO_UPGRADE). A refresh runs for hours and still takes every deploy, a
 * page later.
 */
setWorkflowOptions({ versioningBehavior: 'PINNED' }, bookRefreshWorkflow);
