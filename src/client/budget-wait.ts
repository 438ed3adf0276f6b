/**
 * Whether a connection is waiting for the fleet's request budget, and why, as Temporal sees it: a
 * call to the service that is scheduled but not yet handed to a worker (the queue's limits hold it),
 * or one held back while its tenant is paused (the service said TOO_MANY_REQUESTS). The workflow
 * itself cannot see an activity waiting in the queue; describe() can.
 */
import type { WorkflowExecutionDescription } from '@temporalio/client';
import proto from '@temporalio/proto';
import { millisOfTimestamp } from '../temporal/timestamps.js';

const { PendingActivityState } = proto.temporal.api.enums.v1;

/** Below this a scheduled call is just being dispatched, not waiting. */
const WAITING_AFTER_MS = 1_000;

export interface BudgetWait {
  /** The call's summary as the workflow named it, e.g. "poll accounts detail #3". */
  readonly call: string;
  readonly since: string;
  readonly reason: string;
}

/** `tenantPause`: the tenant's running throttle (its memo), if the service asked it to wait. */
export function budgetWaitOf(
  description: WorkflowExecutionDescription,
  now: number,
  tenantPause?: { readonly pausedUntil: string; readonly reason: string },
): BudgetWait | undefined {
  for (const activity of description.raw.pendingActivities ?? []) {
    if (activity.state !== PendingActivityState.PENDING_ACTIVITY_STATE_SCHEDULED) continue;
    const call = activity.activityType?.name ?? 'a call to the service';
    const retryAt = millisOfTimestamp(activity.nextAttemptScheduleTime);
    if (retryAt !== undefined && tenantPause && Date.parse(tenantPause.pausedUntil) > now) {
      return {
        call,
        since: new Date(millisOfTimestamp(activity.lastAttemptCompleteTime) ?? now).toISOString(),
        reason: `its tenant is paused until ${tenantPause.pausedUntil}: ${tenantPause.reason}; next attempt at ${new Date(retryAt).toISOString()}`,
      };
    }
    const scheduledAt = millisOfTimestamp(activity.scheduledTime);
    if (retryAt === undefined && (activity.attempt ?? 1) === 1 && scheduledAt !== undefined && now - scheduledAt >= WAITING_AFTER_MS) {
      return {
        call,
        since: new Date(scheduledAt).toISOString(),
        reason: "queued for the fleet's request budget (Temporal's queue and per-tenant limits), behind higher priorities, or for a free worker slot",
      };
    }
  }
  return undefined;
}
