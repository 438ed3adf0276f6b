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
 * How the service counts the requests it takes (SERVICE_BUDGET_MODE):
 * - `bucket`: a token bucket: `rps` a second and up to `burst` at once (most services' limiters;
 *   the burst defaults to one second's worth, `rps`).
 * - `strict`: fixed whole seconds: at most `rps` in any whole second, whatever came before.
 */
export type ServiceLimitMode = 'bucket' | 'strict';

/**
 * How far apart from when Temporal dispatched them calls may reach the service (s): a burst's calls
 * queue in the workers for a while, a later one need not. While they are on their way the service's
 * bucket, full, wastes its refill, so the rule keeps room for that much (measured here with no room
 * kept, `burst - 1`: one refusal in the first seconds of each of two runs of
 * test/budget/fleet-budget.test.ts). 50 ms is also the most that keeps a budget of 20 at 90%.
 */
export const ARRIVAL_SPREAD_S = 0.05;

/**
 * Temporal's limiter (server 1.32.2, service/matching: `simpleLimiter`, a GCRA with a burst of
 * `defaultBurstDuration`, fixed at one second) lets `r + 1` tasks go at once at a rate of `r` (one
 * second's worth plus the one dispatched), then one every `1/r` s: its dispatches fit a token bucket
 * of rate `r` holding `r + 1` (measured here: 7 requests in one whole second at a rate of 3, the
 * 4 at once and 3 more).
 *
 * - bucket: that fits the service's bucket (`rps`, `burst`) when `r ≤ rps` and the burst with what
 *   the spread of arrivals brings in, `r + 1 + r × ARRIVAL_SPREAD_S`, is at most `burst`:
 *   `r = min(rps, (burst - 1) / 1.05)`, i.e. `(rps - 1) / 1.05` with the default burst (94 of a
 *   contract's 100, 18.1 of 20). Below a burst of 2 the smallest thing Temporal sends at once, one
 *   request and then another `1/r - 1` s later, must wait for the service's next token:
 *   `r = rps / (rps × (1 + ARRIVAL_SPREAD_S) + 2 - burst)`.
 * - strict: the worst whole second sees the burst and a second's worth, `2r + 1`, so
 *   `r = (rps - 1) / 2`, never below a quarter of `rps`.
 */
export function dispatchRateFor(rps: number, limit: ServiceLimit = { mode: 'bucket', burst: rps }): number {
  if (limit.mode === 'strict') return Math.max(rps / 4, (rps - 1) / 2);
  // Down to a thousandth: a rate the API shows as set.
  const rate = limit.burst >= 2 ? Math.min(rps, (limit.burst - 1) / (1 + ARRIVAL_SPREAD_S)) : rps / (rps * (1 + ARRIVAL_SPREAD_S) + 2 - limit.burst);
  return Math.floor(rate * 1_000) / 1_000;
}

/** The shape of the service's limit for one rate: how it counts and (bucket) how much it takes at once. */
export type ServiceLimit = { readonly mode: 'bucket'; readonly burst: number } | { readonly mode: 'strict' };

export interface FleetBudget {
  /** Requests a second for every tenant together. */
  readonly totalRps: number;
  /** Requests a second for one tenant of weight 1. */
  readonly tenantRps: number;
  /** How the service counts (default bucket). */
  readonly mode?: ServiceLimitMode | undefined;
  /** Bucket: requests the service takes at once from the fleet (default one second's worth, totalRps). */
  readonly burst?: number | undefined;
}

/** The service's limit for the fleet and for one tenant (its burst in proportion to its rate). */
export function serviceLimitsOf(budget: FleetBudget): { fleet: ServiceLimit; tenant: ServiceLimit } {
  if (budget.mode === 'strict') return { fleet: { mode: 'strict' }, tenant: { mode: 'strict' } };
  const burst = budget.burst ?? budget.totalRps;
  return { fleet: { mode: 'bucket', burst }, tenant: { mode: 'bucket', burst: (burst * budget.tenantRps) / budget.totalRps } };
}

export interface QueueLimits {
  /** The queue's limit as set through the API (fitted to the service's limit: dispatchRateFor), if any. */
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

/** The service's limit for the fleet in words: `a bucket of 8/s holding 8 at once` or `8/s in any whole second (strict)`. */
export function describeServiceLimit(budget: FleetBudget): string {
  const limit = serviceLimitsOf(budget).fleet;
  return limit.mode === 'strict' ? `${budget.totalRps}/s in any whole second (strict)` : `a bucket of ${budget.totalRps}/s holding ${limit.burst} at once`;
}

/** The budget as the server's limits: the rates Temporal should dispatch at. */
export function queueRatesFor(budget: FleetBudget): { queueRps: number; tenantRps: number } {
  const limits = serviceLimitsOf(budget);
  return { queueRps: dispatchRateFor(budget.totalRps, limits.fleet), tenantRps: dispatchRateFor(budget.tenantRps, limits.tenant) };
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
