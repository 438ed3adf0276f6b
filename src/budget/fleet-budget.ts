/**
 * The fleet's request budget toward the service, held by Temporal rather than by any process: the
 * activity task queue's rate limit (every tenant together) and its per-fairness-key limit (one
 * tenant, times its weight), set through the task queue config API. Every worker of the fleet pulls
 * activities from the same queue, so N workers together never exceed it. Every request to the
 * service is a regular activity dispatched through that queue (never eagerly, never as a local
 * activity: both bypass the limits).
 *
 * A tenant the service throttles (TOO_MANY_REQUESTS) is paused by its throttle workflow for the
 * time the service asked (src/activities/tenant-pauses.ts says how, and why not through these limits).
 */
import type { WorkflowService } from '@temporalio/client';
import proto from '@temporalio/proto';

const ACTIVITY_QUEUE = proto.temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY;

/**
 * Temporal's limiters let an idle queue or tenant take one second's worth at once on top of the
 * rate (the burst), so in the worst second it dispatches twice the rate and one more (measured
 * here: 7 requests in the first second at a rate of 3). The rate set is what keeps that worst second
 * within the budget: (budget - 1) / 2, and never below a quarter of the budget.
 */
export function dispatchRateFor(budgetRps: number): number {
  return Math.max(budgetRps / 4, (budgetRps - 1) / 2);
}

export interface FleetBudget {
  /** Requests a second for every tenant together. */
  readonly totalRps: number;
  /** Requests a second for one tenant of weight 1. */
  readonly tenantRps: number;
}

export interface QueueLimits {
  /** The queue's limit as set through the API (already lowered for the burst: dispatchRateFor), if any. */
  readonly queueRps?: number | undefined;
  readonly tenantRps?: number | undefined;
  /** Tenants whose fairness weight an operator overrode on the queue. */
  readonly weightOverrides: Readonly<Record<string, number>>;
  /** The whole queue's limit the server applies now and where it comes from. */
  readonly effectiveRps?: number | undefined;
}

export interface BudgetTarget {
  readonly workflowService: WorkflowService;
  readonly namespace: string;
  readonly taskQueue: string;
  readonly identity: string;
}

/** The budget as the server's limits: the rates Temporal should dispatch at. */
export function queueRatesFor(budget: FleetBudget): { queueRps: number; tenantRps: number } {
  return { queueRps: dispatchRateFor(budget.totalRps), tenantRps: dispatchRateFor(budget.tenantRps) };
}

/** Sets both limits (the same call by every worker at start: the last one's is the same). */
export async function applyFleetBudget(target: BudgetTarget, budget: FleetBudget, reason: string): Promise<QueueLimits> {
  const rates = queueRatesFor(budget);
  await target.workflowService.updateTaskQueueConfig({
    namespace: target.namespace,
    identity: target.identity,
    taskQueue: target.taskQueue,
    taskQueueType: ACTIVITY_QUEUE,
    updateQueueRateLimit: { rateLimit: { requestsPerSecond: rates.queueRps }, reason },
    updateFairnessKeyRateLimitDefault: { rateLimit: { requestsPerSecond: rates.tenantRps }, reason },
  });
  return describeQueueLimits(target);
}

export async function describeQueueLimits(target: Omit<BudgetTarget, 'identity'>): Promise<QueueLimits> {
  const response = await target.workflowService.describeTaskQueue({
    namespace: target.namespace,
    taskQueue: { name: target.taskQueue },
    taskQueueType: ACTIVITY_QUEUE,
    reportConfig: true,
  });
  const config = response.config;
  return {
    queueRps: config?.queueRateLimit?.rateLimit?.requestsPerSecond ?? undefined,
    tenantRps: config?.fairnessKeysRateLimitDefault?.rateLimit?.requestsPerSecond ?? undefined,
    weightOverrides: { ...(config?.fairnessWeightOverrides ?? {}) },
    effectiveRps: response.effectiveRateLimit?.requestsPerSecond ?? undefined,
  };
}
