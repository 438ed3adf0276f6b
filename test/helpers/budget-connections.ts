/**
 * Connections for the fleet budget's tests (test/budget/): cached connections of one tenant started on
 * a process stack's workers, their results awaited, and the sandbox's per-second counts summed over
 * whole seconds.
 */
import type { Client } from '@temporalio/client';
import { ConnectionsClient } from '../../src/client/connections.js';
import type { ConnectionInputArgs } from '../../src/contract/connection/connection-input.js';
import type { ConnectionResult } from '../../src/contract/connection/connection-definitions.js';
import type { TenantRequestRates } from '../../sandbox/rate-limits.js';
import type { ProcessStack } from './process-stack.js';

/** Starts `count` worker processes on `taskQueue`, each with `env` added. */
export async function startBudgetWorkers(stack: ProcessStack, taskQueue: string, count: number, env: Record<string, string>): Promise<void> {
  await Promise.all(Array.from({ length: count }, () => stack.startWorker(taskQueue, { env })));
}

/** The input of a cached connection that retrieves accounts detail, polling every 200 ms. */
export function cachedInput(customerId: string, loginId: string): ConnectionInputArgs {
  return { customerId, session: { kind: 'cached', loginId }, products: { accountsDetail: {} }, timing: { pollIntervalMs: 200 } };
}

/** Starts `count` cached connections of the tenant, each a few requests (Authorize, the request, a poll or more). */
export async function startBudgetConnections(
  stack: ProcessStack,
  taskQueue: string,
  customerId: string,
  count: number,
  username = (index: number) => `pending_polls_${index + 1}`,
): Promise<string[]> {
  const connections = new ConnectionsClient({ client: stack.client, taskQueue });
  const ids: string[] = [];
  for (let index = 0; index < count; index += 1) {
    const loginId = await stack.savedLogin(customerId, username(index));
    ids.push((await connections.start(`connection-${customerId}:c${index}`, cachedInput(customerId, loginId))).workflowId);
  }
  return ids;
}

export async function completeAll(client: Client, workflowIds: readonly string[]): Promise<ConnectionResult[]> {
  return Promise.all(workflowIds.map((workflowId) => client.workflow.getHandle(workflowId).result() as Promise<ConnectionResult>));
}

/**
 * Requests in the whole seconds from `fromSecond` (default: the one after the first with requests)
 * up to `untilSecond`, not included (seconds without any count as 0).
 */
export function wholeSecondsOf(rates: TenantRequestRates, untilSecond: number, fromSecond?: number): { seconds: number; requests: number; max: number } {
  const from = fromSecond ?? (rates.perSecond[0]?.second ?? untilSecond) + 1;
  const inner = rates.perSecond.filter((count) => count.second >= from && count.second < untilSecond);
  return {
    seconds: Math.max(0, untilSecond - from),
    requests: inner.reduce((sum, count) => sum + count.accepted + count.refused, 0),
    max: Math.max(0, ...inner.map((count) => count.accepted + count.refused)),
  };
}
