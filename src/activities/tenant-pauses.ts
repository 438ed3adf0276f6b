/**
 * Tenants the service asked to wait (TOO_MANY_REQUESTS): a refused call starts or extends the
 * tenant's throttle workflow (signal-with-start), whose memo says until when; before calling the
 * service for a tenant, an activity reads that memo (describe: no worker involved, at most once a
 * second per tenant and process) and, while the pause lasts, is rescheduled on Temporal's retry
 * timer without sending anything. So one refusal slows the tenant's whole fleet, every worker of
 * it, for the time the service asked, and no connection fails for it.
 *
 * Why not Temporal's own limits for the pause: a weight override on the tenant's fairness key
 * slows its per-key limiter, but each task dispatched meanwhile pushes the key's next slot out by
 * interval/weight, and removing the override does not pull it back: tried here, the tenant stayed
 * blocked long after the pause (server 1.32.2's ratelimit_manager.go clips only on a rate change).
 */
import type { Client } from '@temporalio/client';
import { WorkflowNotFoundError } from '@temporalio/client';
import {
  TENANT_THROTTLE_WORKFLOW_TYPE,
  tenantThrottleWorkflowId,
  throttleNoticeSignal,
  publishedPause,
  type ThrottleNotice,
} from '../contract/throttle/tenant-throttle-definitions.js';

/** When the service gives no Retry-After, the tenant waits this long. */
export const DEFAULT_THROTTLE_MS = 10_000;
/** How long a process trusts what it read of a tenant's pause. */
const REFRESH_MS = 1_000;

export interface TenantPause {
  /** Epoch ms. */
  readonly until: number;
  readonly reason: string;
}

interface Known {
  readonly pause: TenantPause | undefined;
  readonly readAt: number;
}

export class TenantPauses {
  private readonly known = new Map<string, Known>();
  private readonly reading = new Map<string, Promise<TenantPause | undefined>>();

  constructor(
    private readonly temporal: Client,
    private readonly taskQueue: string,
    private readonly now: () => number = Date.now,
  ) {}

  /** The pause in force for the tenant now, if any. */
  async pauseOf(customerId: string): Promise<TenantPause | undefined> {
    const known = this.known.get(customerId);
    const pause = known && this.now() - known.readAt < REFRESH_MS ? known.pause : await this.read(customerId);
    return pause && pause.until > this.now() ? pause : undefined;
  }

  /** The service refused a call of the tenant: this process holds back at once; the throttle workflow tells the others. */
  async refused(customerId: string, retryAfterMs: number | undefined, reason: string): Promise<void> {
    const until = this.now() + (retryAfterMs ?? DEFAULT_THROTTLE_MS);
    const current = this.known.get(customerId)?.pause;
    if (!current || current.until < until) this.known.set(customerId, { pause: { until, reason }, readAt: this.now() });
    const notice: ThrottleNotice = { until: new Date(until).toISOString(), reason };
    await this.temporal.workflow.signalWithStart(TENANT_THROTTLE_WORKFLOW_TYPE, {
      workflowId: tenantThrottleWorkflowId(customerId),
      taskQueue: this.taskQueue,
      args: [{ customerId }],
      signal: throttleNoticeSignal,
      signalArgs: [notice],
      // Its steps only keep a deadline: ahead of every connection.
      priority: { priorityKey: 1 },
    });
  }

  private read(customerId: string): Promise<TenantPause | undefined> {
    let reading = this.reading.get(customerId);
    if (!reading) {
      reading = this.describe(customerId).finally(() => this.reading.delete(customerId));
      this.reading.set(customerId, reading);
    }
    return reading;
  }

  private async describe(customerId: string): Promise<TenantPause | undefined> {
    let pause: TenantPause | undefined;
    try {
      const published = publishedPause(await this.temporal.workflow.getHandle(tenantThrottleWorkflowId(customerId)).describe());
      if (published) pause = { until: Date.parse(published.pausedUntil), reason: published.reason };
    } catch (error) {
      if (!(error instanceof WorkflowNotFoundError)) throw error;
    }
    // What this process learned itself may be newer than the memo.
    const mine = this.known.get(customerId)?.pause;
    const latest = mine && (!pause || mine.until > pause.until) ? mine : pause;
    this.known.set(customerId, { pause: latest, readAt: this.now() });
    return latest;
  }
}
