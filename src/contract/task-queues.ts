/**
 * Where unattended work runs: book refreshes, their logins and their connections can have a worker
 * pool of their own (`UNATTENDED_POOL=separate`), the task queue named here, so a night's thousands of
 * workflow tasks never share a worker's cores and event loop with the live answers an end user waits
 * for. The connections' calls to the service stay on the service queue whatever pool runs their
 * workflow code: its limits are the fleet's one request budget, and priority orders them there.
 * Import-free: workflow code derives the service queue from its own.
 */

/** The unattended pool's queue is the service queue's name with this suffix. */
export const UNATTENDED_QUEUE_SUFFIX = '-unattended';

/** The unattended pool's task queue beside `serviceTaskQueue`. */
export function unattendedTaskQueue(serviceTaskQueue: string): string {
  return `${serviceTaskQueue}${UNATTENDED_QUEUE_SUFFIX}`;
}

/** The queue a workflow's calls to the service go to: its own, or the service queue an unattended pool's queue belongs to. */
export function serviceTaskQueueOf(workflowTaskQueue: string): string {
  return workflowTaskQueue.endsWith(UNATTENDED_QUEUE_SUFFIX) ? workflowTaskQueue.slice(0, -UNATTENDED_QUEUE_SUFFIX.length) : workflowTaskQueue;
}
