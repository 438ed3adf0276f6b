/**
 * The tenant throttle's side effects: pausing and resuming a tenant's activities on the queue
 * (Temporal's API, src/budget/fleet-budget.ts), and starting or extending the throttle when the
 * service refuses a request with TOO_MANY_REQUESTS.
 */
import type { Client } from '@temporalio/client';
import { setTenantThrottled, type BudgetTarget } from '../budget/fleet-budget.js';
import { TENANT_THROTTLE_WORKFLOW_TYPE, tenantThrottleWorkflowId, throttleNoticeSignal, type ThrottleNotice } from '../workflows/tenant-throttle-definitions.js';

export interface ThrottleActivitiesDeps {
  readonly temporal: Client;
  readonly taskQueue: string;
}

function targetOf({ temporal, taskQueue }: ThrottleActivitiesDeps): BudgetTarget {
  return { workflowService: temporal.workflowService, namespace: temporal.options.namespace, taskQueue, identity: temporal.options.identity ?? 'aggregation-connections-worker' };
}

export function createThrottleActivities(deps: ThrottleActivitiesDeps) {
  return {
    async setTenantPaused({ customerId, paused }: { readonly customerId: string; readonly paused: boolean }): Promise<void> {
      await setTenantThrottled(targetOf(deps), customerId, paused);
    },
  };
}

export type ThrottleActivities = ReturnType<typeof createThrottleActivities>;

/** When the service gives no Retry-After, the tenant waits this long. */
export const DEFAULT_THROTTLE_MS = 10_000;

/**
 * Tells the tenant's throttle (starting it if none runs) that the service refused a request:
 * every connection of the tenant waits, not just the refused one. The throttle's own steps run first
 * (priority 1): they only call Temporal.
 */
export function serviceThrottleNotifier(deps: ThrottleActivitiesDeps) {
  return async (customerId: string, retryAfterMs: number | undefined, reason: string): Promise<void> => {
    const notice: ThrottleNotice = { until: new Date(Date.now() + (retryAfterMs ?? DEFAULT_THROTTLE_MS)).toISOString(), reason };
    await deps.temporal.workflow.signalWithStart(TENANT_THROTTLE_WORKFLOW_TYPE, {
      workflowId: tenantThrottleWorkflowId(customerId),
      taskQueue: deps.taskQueue,
      args: [{ customerId }],
      signal: throttleNoticeSignal,
      signalArgs: [notice],
      priority: { priorityKey: 1 },
    });
  };
}

export type ServiceThrottleNotifier = ReturnType<typeof serviceThrottleNotifier>;
