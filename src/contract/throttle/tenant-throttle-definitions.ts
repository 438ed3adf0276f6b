/**
 * The tenant throttle's public surface: one workflow per tenant the service rate-limited, started
 * (or extended) by a signal-with-start from the activity that got TOO_MANY_REQUESTS, that pauses the
 * tenant's whole fleet for the time the service asked: its memo says until when, and every worker
 * reads it before calling the service for the tenant (src/activities/tenant-pauses.ts).
 */
import { defineQuery, defineSignal } from '@temporalio/workflow';

export const TENANT_THROTTLE_WORKFLOW_TYPE = 'tenantThrottleWorkflow';

/** One workflow per tenant: a second throttle while one runs extends it. */
export function tenantThrottleWorkflowId(customerId: string): string {
  return `throttle-${customerId}`;
}

export interface ThrottleNotice {
  /** Until when the service asked the tenant to wait (ISO 8601): now + Retry-After, or a default. */
  readonly until: string;
  /** What the service said, e.g. "TOO_MANY_REQUESTS (HTTP 429), Retry-After 30 s, on accounts detail". */
  readonly reason: string;
}

export interface ThrottleState {
  readonly customerId: string;
  /** `throttled`: the tenant's fleet is paused until `until`; `released`: it runs again. */
  readonly status: 'waiting' | 'throttled' | 'released';
  readonly until?: string | undefined;
  readonly reason?: string | undefined;
  /** Notices received (each TOO_MANY_REQUESTS of the tenant while it ran). */
  readonly notices: number;
  readonly since?: string | undefined;
}

/** What the running throttle publishes in its memo for the workers (describe() reads it without a worker). */
export interface ThrottleMemo {
  readonly pausedUntil: string;
  readonly reason: string;
}

/** The pause a throttle's describe() shows: its memo while it runs and names a time; undefined otherwise. */
export function publishedPause(description: {
  readonly status: { readonly name: string };
  readonly memo?: Record<string, unknown> | undefined;
}): ThrottleMemo | undefined {
  const memo = description.memo as Partial<ThrottleMemo> | undefined;
  if (description.status.name !== 'RUNNING' || !memo?.pausedUntil || Number.isNaN(Date.parse(memo.pausedUntil))) return undefined;
  return { pausedUntil: memo.pausedUntil, reason: memo.reason ?? '' };
}

export const throttleNoticeSignal = defineSignal<[ThrottleNotice]>('throttleNotice');
export const throttleStateQuery = defineQuery<ThrottleState>('throttleState');
