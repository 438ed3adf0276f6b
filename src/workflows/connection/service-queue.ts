/**
 * Activities that reach the service are scheduled on the service queue, whichever pool runs the
 * workflow: that queue's limits are the fleet's one request budget (src/budget/fleet-budget.ts). A
 * connection of the unattended pool (src/contract/task-queues.ts) would otherwise send its calls to
 * its own queue, outside the budget. For a workflow on the service queue this is its own queue, as
 * the SDK would have chosen, so histories recorded before replay unchanged.
 */
import { proxyActivities, workflowInfo, type ActivityInterfaceFor, type ActivityOptions } from '@temporalio/workflow';
import { serviceTaskQueueOf } from '../../contract/task-queues.js';

export function serviceActivities<A>(options: ActivityOptions): ActivityInterfaceFor<A> {
  return proxyActivities<A>({ ...options, taskQueue: serviceTaskQueueOf(workflowInfo().taskQueue) });
}
