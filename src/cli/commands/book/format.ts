/** How the book commands print a refresh's progress, its report and one page of its outcomes. */
import type { BookCounts, BookOutcome, BookProgress, BookReport } from '../../../contract/book/book-definitions.js';
import type { WindowView } from '../../../contract/window/window-definitions.js';
import { took } from '../../../presentation/durations.js';
import { printable } from '../../terminal-view.js';
import { formatTable } from '../../report.js';

/** "4 (floor 1, ceiling 8; pinned at 4): pinned by an operator at 4, 02:14:03" */
export function describeWindow(window: WindowView): string {
  const pinned = window.pinned === undefined ? '' : `; pinned at ${window.pinned}`;
  const change = window.lastChange
    ? `: ${printable(window.lastChange.reason)} (${window.lastChange.from} to ${window.lastChange.to} at ${window.lastChange.at})`
    : '';
  const live =
    window.liveReadAt === undefined
      ? ''
      : `; live path read at ${printable(window.liveReadAt)}: ${String(window.liveWaiting ?? 0)} waiting, the oldest ${String(window.liveWaitMs ?? 0)} ms`;
  return `${window.size} (floor ${window.floor}, ceiling ${window.ceiling}${pinned}${live})${change}`;
}

/** "2 (InvalidCredentials 1, Terminated 1)" */
export function describeFailed(counts: BookCounts): string {
  const byType = Object.entries(counts.failedByType)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([type, count]) => `${printable(type)} ${count}`);
  return byType.length > 0 ? `${counts.failed} (${byType.join(', ')})` : String(counts.failed);
}

/** "3/7 (43%)", or "3" while the total is unknown. */
function describeDone(progress: Pick<BookProgress, 'counts' | 'total'>): string {
  const { done } = progress.counts;
  if (progress.total === undefined) return String(done);
  const percent = progress.total > 0 ? ` (${Math.floor((100 * done) / progress.total)}%)` : '';
  return `${done}/${progress.total}${percent}`;
}

/** The outcome lines progress and report share. */
function countLines(progress: Pick<BookProgress, 'counts' | 'window' | 'pausedMs' | 'drainMs'>): Array<[string, string]> {
  const { counts } = progress;
  return [
    ['refreshed', String(counts.refreshed)],
    ['needs end user', String(counts.needsEndUser)],
    ['failed', describeFailed(counts)],
    ['forgotten', String(counts.forgotten)],
    ['malformed', String(counts.malformed)],
    // Only after a cancel or a second run the same night: noise otherwise.
    ...(counts.cancelled > 0 ? [['cancelled', String(counts.cancelled)] as [string, string]] : []),
    ...(counts.duplicate > 0 ? [['duplicate', String(counts.duplicate)] as [string, string]] : []),
    ['paused time', took(progress.pausedMs)],
    ['drain time', took(progress.drainMs)],
  ];
}

function aligned(lines: ReadonlyArray<[string, string]>): string[] {
  const width = Math.max(...lines.map(([label]) => label.length)) + 2;
  return lines.map(([label, value]) => `  ${label.padEnd(width)}${value}`);
}

export function describeProgress(progress: BookProgress): string[] {
  return [
    `book refresh ${progress.refreshWorkflowId}: ${progress.status} (${progress.cadence} book of ${progress.customerId}, night ${progress.night}, page ${progress.page})`,
    ...aligned([
      ['done', describeDone(progress)],
      ['in flight', String(progress.inFlight)],
      ['window', describeWindow(progress.window)],
      ...countLines(progress),
      ['started', progress.startedAt],
      ['estimated end', progress.estimatedEnd ?? '-'],
    ]),
  ];
}

export function describeReport(report: BookReport): string[] {
  const changes = report.windowChanges.slice(-5).map((change) => `    ${change.at}  ${change.from} to ${change.to}: ${printable(change.reason)}`);
  return [
    `book refresh ${report.refreshWorkflowId}: ${report.status} (${report.cadence} book of ${report.customerId}, night ${report.night})`,
    ...aligned([
      ['done', describeDone(report)],
      ...countLines(report),
      ['window', describeWindow(report.window)],
      ['started', report.startedAt],
      ['ended', `${report.endedAt} (took ${took(Date.parse(report.endedAt) - Date.parse(report.startedAt))})`],
      ['skipped runs', String(report.skippedWhileRunning)],
      ['pages', `${report.pages.length} (read one with --page 1..${Math.max(1, report.pages.length)})`],
    ]),
    ...(changes.length > 0 ? [`  window changes (last ${changes.length} of ${report.windowChanges.length}):`, ...changes] : []),
  ];
}

/** One page's per-login outcomes as a table. */
export function outcomeTable(outcomes: readonly BookOutcome[]): string[] {
  // A malformed entry's login and problem come from rows anyone who may start workflows can write.
  const rows = outcomes.map((outcome) => [
    printable(outcome.loginId),
    outcome.outcome,
    printable(outcome.failureType ?? outcome.problem ?? '-'),
    outcome.durationMs === undefined ? '-' : took(outcome.durationMs),
    outcome.workflowId ?? '-',
  ]);
  return formatTable(['LOGIN', 'OUTCOME', 'DETAIL', 'TOOK', 'CONNECTION'], rows);
}
