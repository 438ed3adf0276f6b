/**
 * Shared section `pools`: whether unattended work (book refreshes, their logins and connections)
 * has a worker pool of its own. The client decides where a book's refresh starts; the worker,
 * with WORKER_POOL=all, whether it polls that pool's queue too (src/contract/task-queues.ts).
 */
import { z } from 'zod';
import { doc, group } from './document.js';
import { unattendedTaskQueue } from '../contract/task-queues.js';

export const PoolVars = group(
  z.object({
    UNATTENDED_POOL: doc(
      z.enum(['shared', 'separate'], { error: 'must be shared or separate' }).default('shared'),
      "`separate`: book refreshes, their logins and their connections run on the task queue TEMPORAL_TASK_QUEUE-unattended, polled by workers of WORKER_POOL=unattended (or all), so a night's workflow tasks never share a worker's cores with live answers; their calls to the service still go through TEMPORAL_TASK_QUEUE and its budget. `shared`: everything on TEMPORAL_TASK_QUEUE. Set the same on the client (where Schedules and runs start books) and on the workers (docs/fleet.md#a-pool-for-unattended-work).",
    ),
    UNATTENDED_ADMISSION: doc(
      z.enum(['off', 'window'], { error: 'must be off or window' }).default('off'),
      "`window`: an unattended connection that no book started waits for room at its tenant's admission before it calls the service (docs/fleet.md#unattended-starts-outside-a-book-the-tenants-admission); the product's client starts it held by Temporal (a start delay, on the unattended pool when UNATTENDED_POOL=separate) and wakes the admission, which finds it in visibility and releases it when there is room, so a queued start costs no worker anything. `off`: it starts at once. Off by default: no storm run has met its targets (live answers ≤ 1.5x idle at p50, ≤ 2x at p99; a small tenant ≤ 1.5x its time alone). Turn it on wherever pipelines, scripts or Schedules without jitter may start hundreds of unattended connections in a minute outside a book: in the full storm with Temporal on a core of its own, live answers took 11x idle at p50 and 14-32x at p99 without it against 1.6-2.2x and 3.6-4x with it, and in one of two runs connections were still running 15 minutes after the last start (docs/fleet.md#unattended-starts-outside-a-book-the-tenants-admission). Set the same on the client and on every worker.",
    ),
  }),
  'Worker pools',
  "Which task queue unattended work runs on, and whether unattended starts queue at their tenant's admission (client and worker).",
);

/** The task queues of the fleet: `unattended` is the service queue itself when the pool is shared. */
export function poolsSection(env: z.output<typeof PoolVars>, serviceTaskQueue: string) {
  return Object.freeze({
    unattended: env.UNATTENDED_POOL,
    unattendedTaskQueue: env.UNATTENDED_POOL === 'separate' ? unattendedTaskQueue(serviceTaskQueue) : serviceTaskQueue,
    admission: env.UNATTENDED_ADMISSION,
  });
}
