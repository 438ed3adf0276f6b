/**
 * The night's book refreshes replayed from their histories, as a worker that lost them from its cache
 * replays them: every run (page) of every refresh, with the bundle, key and payload store the workers
 * had. A replay that no longer makes the commands its run recorded is nondeterminism: a refresh whose
 * worker evicts it is stuck (a half-size night's B stopped at 94 of 100 that way before the steady
 * clock, src/workflows/steady-clock.ts).
 */
import type { Client } from '@temporalio/client';
import type { PayloadSettings } from '../../src/codec/data-converter.js';
import { fetchHistories, type ExecutionRef } from '../../scripts/chaos/histories.js';
import { replayHistories, type ReplayReport } from '../../scripts/chaos/replay-run.js';

export interface RefreshReplayTarget {
  readonly client: Client;
  readonly bundlePath: string;
  readonly payload: PayloadSettings;
  readonly runTag: string;
}

export async function replayRefreshes(target: RefreshReplayTarget): Promise<ReplayReport> {
  const executions: ExecutionRef[] = [];
  for await (const execution of target.client.workflow.list({ query: `WorkflowType = 'bookRefreshWorkflow'` })) {
    executions.push({ workflowId: execution.workflowId, runId: execution.runId, workflowType: execution.type });
  }
  const { histories, failures } = await fetchHistories(target.client, executions);
  return replayHistories(histories, failures, {
    code: { kind: 'bundle', path: target.bundlePath },
    payload: target.payload,
    replayName: `burst-refreshes-${target.runTag}`,
  });
}

/** `replayed 5 refresh runs: 0 nondeterminism, 0 replay errors` and the first problems, if any. */
export function refreshReplayLine(report: ReplayReport): string {
  const problems = [...report.nondeterminism, ...report.errors].slice(0, 3).map((problem) => `${problem.workflowId}: ${problem.message}`);
  return `replayed ${report.replayed} refresh runs: ${report.nondeterminism.length} nondeterminism, ${report.errors.length} replay errors${problems.length > 0 ? `; e.g. ${problems.join('; ')}` : ''}`;
}
