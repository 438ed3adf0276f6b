/**
 * How the connection's data requests and polls reach the service: as regular activities that go
 * through the task queue, so the fleet's request budget (Temporal's queue and per-tenant rate limits,
 * src/budget/fleet-budget.ts) and the connection's priority govern every one of them, never
 * dispatched eagerly (which would bypass the limits), with their retries backing off on the server.
 */
import type { ConnectionActivities } from '../../activities/connection-activities.js';
import { CALL_HEARTBEAT_TIMEOUT_MS, CALL_TIMEOUT_MS } from './polling.js';
import { SERVICE_CALL_RETRY } from '../../retry/activity-retry.js';
import { serviceActivities } from './service-queue.js';

/** The activities of one data request or poll; `deadline` bounds its retries (the pending operation's). */
export function dataCalls(summary: string, deadline: number): ConnectionActivities {
  return serviceActivities<ConnectionActivities>({
    startToCloseTimeout: CALL_TIMEOUT_MS,
    scheduleToCloseTimeout: Math.max(1_000, deadline - Date.now()),
    retry: SERVICE_CALL_RETRY,
    summary,
    heartbeatTimeout: CALL_HEARTBEAT_TIMEOUT_MS,
    allowEagerDispatch: false,
  });
}
