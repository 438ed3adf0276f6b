/**
 * How the connection's data requests and polls reach the service: as regular activities that go
 * through the task queue, so the fleet's request budget (Temporal's queue and per-tenant rate limits,
 * src/budget/fleet-budget.ts) and the connection's priority govern every one of them, never
 * dispatched eagerly (which would bypass the limits), with their retries backing off on the server.
 *
 * Connections that started before this shape (unversioned workers, before Worker Deployment
 * Versioning pinned each connection to its build) replay their local activities as they were
 * recorded: the choice is made once, in the workflow's first activation (see connection.ts).
 */
import { proxyLocalActivities } from '@temporalio/workflow';
import type { ConnectionActivities } from '../activities/connection-activities.js';
import { CALL_HEARTBEAT_TIMEOUT_MS, CALL_TIMEOUT_MS, TRANSIENT_RETRY } from './polling.js';
import { serviceActivities } from './service-queue.js';

/** `activities` from this build on; `local-activities` for histories recorded before it. */
export type ServiceCallShape = 'activities' | 'local-activities';

/** The activities of one data request or poll; `deadline` bounds its retries (the pending operation's). */
export function dataCalls(shape: ServiceCallShape, summary: string, deadline: number): ConnectionActivities {
  const bound = { startToCloseTimeout: CALL_TIMEOUT_MS, scheduleToCloseTimeout: Math.max(1_000, deadline - Date.now()), retry: TRANSIENT_RETRY, summary };
  if (shape === 'activities') return serviceActivities<ConnectionActivities>({ ...bound, heartbeatTimeout: CALL_HEARTBEAT_TIMEOUT_MS, allowEagerDispatch: false });
  // Recorded before: each retry's backoff was a durable timer (localRetryThreshold 0), not held in memory.
  return proxyLocalActivities<ConnectionActivities>({ ...bound, localRetryThreshold: 0 });
}
