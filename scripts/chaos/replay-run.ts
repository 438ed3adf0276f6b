/**
 * Replays a chaos run's histories (histories.ts) with Worker.runReplayHistories, as the workers ran
 * them: the same workflow code, interceptors, sandbox options and data converter (encryption key and
 * payload store of the run), so a history whose payloads are encrypted or stored outside it decodes
 * exactly as it did for the worker. Each history ends as replayed, nondeterministic (the code no
 * longer makes the commands the history recorded) or failed otherwise (undecodable, fetch failed...).
 */
import { DefaultLogger, Runtime, Worker, type ReplayWorkerOptions } from '@temporalio/worker';
import { DeterminismViolationError } from '@temporalio/workflow';
import { workerDataConverterFor, type PayloadSettings } from '../../src/codec/data-converter.js';
import { tracingWorkerOptions } from '../../src/tracing/worker-tracing.js';
import { WORKFLOW_SANDBOX_OPTIONS, workflowSource } from '../../src/bundle/workflow-code.js';
import type { FetchedHistory, HistoryFetchFailure } from './histories.js';

/** The bundle the run's workers loaded, or today's sources bundled now (a kept run against changed code). */
export type ReplayCode = { readonly kind: 'bundle'; readonly path: string } | { readonly kind: 'source' };

export interface ReplayProblem {
  readonly workflowId: string;
  readonly runId?: string | undefined;
  readonly workflowType?: string | undefined;
  readonly message: string;
}

export interface ReplayReport {
  /** Histories given to the replayer. */
  readonly replayed: number;
  /** Replayed histories by workflow type. */
  readonly byType: ReadonlyMap<string, number>;
  readonly nondeterminism: readonly ReplayProblem[];
  /** Any other replay failure, and histories that could not be fetched at all. */
  readonly errors: readonly ReplayProblem[];
  readonly code: ReplayCode;
}

export interface ReplayOptions {
  readonly code: ReplayCode;
  /** The workers' payload settings: their encryption key and payload store. */
  readonly payload: PayloadSettings;
  readonly replayName: string;
}

function firstLine(message: string, max = 400): string {
  const line = message.split('\n', 1)[0] ?? '';
  return line.length > max ? `${line.slice(0, max - 3)}...` : line;
}

/**
 * The harness prints its own report: the SDK's replay worker logs only warnings and errors. A Runtime
 * exists once per process; if one was made already (a test importing this), it is used as it is.
 */
function quietRuntime(): void {
  try {
    Runtime.install({ logger: new DefaultLogger('WARN') });
  } catch {
    // Installed before: keep it.
  }
}

export function replayOptions(options: ReplayOptions): ReplayWorkerOptions {
  const bundled = options.code.kind === 'bundle';
  return {
    ...(options.code.kind === 'bundle' ? { workflowBundle: { codePath: options.code.path } } : workflowSource()),
    ...tracingWorkerOptions(undefined, { bundled }),
    ...WORKFLOW_SANDBOX_OPTIONS,
    dataConverter: workerDataConverterFor(options.payload),
    replayName: options.replayName,
  };
}

export async function replayHistories(
  histories: readonly FetchedHistory[],
  fetchFailures: readonly HistoryFetchFailure[],
  options: ReplayOptions,
): Promise<ReplayReport> {
  const byType = new Map<string, number>();
  for (const { workflowType } of histories) byType.set(workflowType, (byType.get(workflowType) ?? 0) + 1);
  const nondeterminism: ReplayProblem[] = [];
  const errors: ReplayProblem[] = fetchFailures.map((failure) => ({ ...failure, message: `history not fetched: ${firstLine(failure.message)}` }));
  // The replayer takes one history at a time and yields its result before the next: results come in order.
  let done = 0;
  const problemOf = (history: FetchedHistory, message: string): ReplayProblem => ({
    workflowId: history.workflowId,
    runId: history.runId,
    workflowType: history.workflowType,
    message,
  });

  if (histories.length > 0) {
    quietRuntime();
    try {
      const results = Worker.runReplayHistories(
        replayOptions(options),
        histories.map(({ workflowId, history }) => ({ workflowId, history })),
      );
      for await (const result of results) {
        const history = histories[done++];
        if (result.error === undefined || history === undefined) continue;
        (result.error instanceof DeterminismViolationError ? nondeterminism : errors).push(problemOf(history, firstLine(result.error.message)));
      }
    } catch (error) {
      // The replayer itself failed (bundle, converter): every history it did not get to is unproven.
      const message = `the replayer stopped: ${firstLine(error instanceof Error ? `${error.name}: ${error.message}` : String(error))}`;
      for (const history of histories.slice(done)) errors.push(problemOf(history, message));
      done = histories.length;
    }
  }
  for (const history of histories.slice(done)) errors.push(problemOf(history, 'the replayer returned no result for it'));
  return { replayed: histories.length, byType, nondeterminism, errors, code: options.code };
}

export function replayPassed(report: ReplayReport): boolean {
  return report.nondeterminism.length === 0 && report.errors.length === 0;
}

/** The report's Replay section. */
export function renderReplay(report: ReplayReport): string[] {
  const types = [...report.byType]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([type, count]) => `${type} ${count}`)
    .join(', ');
  const against = report.code.kind === 'bundle' ? `the run's workflow bundle (${report.code.path})` : "today's workflow sources";
  const lines = [
    `Replay: ${report.replayed} histories${types ? ` (${types})` : ''} replayed against ${against} with the workers' data converter: ` +
      `${report.nondeterminism.length} nondeterminism, ${report.errors.length} replay errors`,
  ];
  for (const problem of report.nondeterminism)
    lines.push(`  NONDETERMINISM ${problem.workflowId} (run ${problem.runId ?? '?'}, ${problem.workflowType ?? '?'}): ${problem.message}`);
  for (const problem of report.errors) lines.push(`  replay error ${problem.workflowId}${problem.runId ? ` (run ${problem.runId})` : ''}: ${problem.message}`);
  return lines;
}
