/**
 * Every activity the worker registers, built from its settings: the connection's calls to the
 * service (one aggregation client per tenant), and the activities of books, forgetting, retention,
 * admission, callbacks and the live path. Apart from src/worker.ts because it is one job, the
 * product's activities wired to their dependencies, and the longest part of the wiring.
 */
import type { Client } from '@temporalio/client';
import type { MetricMeter } from '@temporalio/common';
import { createActivities, INLINE_RESULT_LIMIT_BYTES } from '../activities/connection-activities.js';
import { createCallbackActivities } from '../activities/callback-activities.js';
import { callbackMetrics } from '../metrics/callback-metrics.js';
import { createBookActivities } from '../activities/book-activities.js';
import { createLivePathActivities } from '../activities/live-path-activities.js';
import type { LiveTaskWaits } from '../metrics/live-task-waits.js';
import { createBookStartActivities } from '../activities/book-start-activities.js';
import { createAdmissionActivities } from '../activities/admission-activities.js';
import { createBookEndActivities } from '../activities/book-end-activities.js';
import { createForgetActivities } from '../activities/forget-activities.js';
import { createInputActivities } from '../activities/input-activities.js';
import { createRetentionActivities } from '../activities/retention-activities.js';
import { TenantPauses } from '../activities/tenant-pauses.js';
import { tenantClients } from '../activities/tenant-clients.js';
import { retentionDaysOf, type WorkerConfig } from '../settings/worker.js';
import type { PayloadStoreDriver } from '../payload-store/payload-store-driver.js';
import { serviceMetrics } from '../metrics/service-metrics.js';

export interface WorkerActivitiesDeps {
  /** The client of the worker's namespace: forget and retention manage schedules and workflows with it. */
  readonly temporal: Client;
  readonly payloadStore: PayloadStoreDriver | undefined;
  /** The product's metrics' meter, with the labels the SDK's carry. */
  readonly meter: MetricMeter;
  /** Live tasks' waits to start on this process (every worker of it records, its windows read them). */
  readonly liveStarts: LiveTaskWaits;
}

export function workerActivities(config: WorkerConfig, { temporal, payloadStore, meter, liveStarts }: WorkerActivitiesDeps) {
  const clientFor = tenantClients({
    baseUrl: config.aggregator.baseUrl,
    auth: config.aggregator.auth,
    timeoutMs: config.aggregator.timeoutMs,
    authorizeTimeoutMs: config.aggregator.authorizeTimeoutMs,
  });
  const metrics = serviceMetrics(meter);
  // TOO_MANY_REQUESTS pauses the tenant's whole fleet for the wait the service asked for; book refreshes read the same pauses.
  const pauses = new TenantPauses(temporal, config.temporal.taskQueue);
  return {
    ...createInputActivities(config.callbacks),
    ...createActivities(clientFor, {
      resultLimitBytes: config.payloadStore.kind === 'off' ? INLINE_RESULT_LIMIT_BYTES : undefined,
      pauses,
      metrics,
    }),
    ...createForgetActivities({ temporal, clientFor, payloadStore, metrics }),
    ...createBookActivities({ temporal, pauses }),
    ...createLivePathActivities({ temporal, taskQueue: config.temporal.taskQueue, liveKey: config.priority.keys.live, own: liveStarts }),
    ...createBookStartActivities({ temporal }),
    ...createBookEndActivities({ temporal }),
    ...createAdmissionActivities({
      temporal,
      taskQueue: config.pool.unattendedTaskQueue,
      connectionTaskQueue: config.temporal.taskQueue,
      priority: config.priority,
      admission: config.pool.admission,
    }),
    ...createRetentionActivities({
      temporal,
      taskQueue: config.temporal.taskQueue,
      retentionDays: (customerId) => retentionDaysOf(config.retentionDays, customerId),
      priority: config.priority,
    }),
    ...createCallbackActivities({
      temporal,
      taskQueue: config.temporal.taskQueue,
      settings: config.callbacks,
      metrics: callbackMetrics(meter),
      priority: config.priority,
    }),
  };
}
