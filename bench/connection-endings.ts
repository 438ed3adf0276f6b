/**
 * How the connections a bench waited on ended, counted honestly: a wait that failed while its
 * connection completed is a failed wait, not a lost connection; any other unfulfilled wait is a lost
 * connection, kept with how Temporal says it ended. Shared by the benches that start many
 * connections and await them all (worker-polling.ts, waiting-curve.ts).
 */
import type { ConnectionsClient } from '../src/client/index.js';
import { ResultWaitFailedError } from '../src/client/index.js';

export interface ConnectionEndings {
  readonly lost: number;
  readonly failedWaits: number;
  /** Lost connections by how they ended (execution status and the wait's error, the workflow id taken out). */
  readonly lostBy: ReadonlyMap<string, number>;
}

/** `results[i]` is the wait on `workflowIds[i]`; each unfulfilled one is looked up in Temporal, one at a time. */
export async function countEndings(
  connections: Pick<ConnectionsClient, 'describe'>,
  workflowIds: readonly string[],
  results: readonly PromiseSettledResult<unknown>[],
): Promise<ConnectionEndings> {
  let lost = 0;
  let failedWaits = 0;
  const lostBy = new Map<string, number>();
  for (const [index, result] of results.entries()) {
    if (result.status === 'fulfilled') continue;
    const id = workflowIds[index] ?? '?';
    const status = (await connections.describe(id)).executionStatus;
    if (result.reason instanceof ResultWaitFailedError && status === 'COMPLETED') {
      failedWaits += 1;
      continue;
    }
    lost += 1;
    const error: unknown = result.reason;
    const why = `${String(status)}${error instanceof Error ? ` (${error.name}: ${error.message.slice(0, 160)})` : ''}`.replaceAll(id, '<id>');
    lostBy.set(why, (lostBy.get(why) ?? 0) + 1);
  }
  return { lost, failedWaits, lostBy };
}
