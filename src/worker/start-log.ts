/**
 * What the worker says once its workers exist: the one "worker started" line that names every
 * setting an operator checks (queues, pool, Temporal, service, encryption, store, metrics, health,
 * tracing, cache, deployment, budget), and the warning of a workflow cache too small for the heap.
 * Apart from src/worker.ts: the start's description, not its wiring.
 */
import { getHeapStatistics } from 'node:v8';
import { Runtime, type Worker } from '@temporalio/worker';
import { describeServiceLimit, type QueueLimits } from '../budget/fleet-budget.js';
import type { WorkerConfig } from '../settings/worker.js';
import { temporalSettingsSource } from '../temporal/connection.js';
import { describeEndpoint } from '../tracing/provider.js';
import type { WorkflowBuild } from './deployment.js';
import type { NexusPoolWorker } from './pool-workers.js';

/**
 * Below this heap limit the SDK's default workflow cache (sized from the heap) is small enough that
 * pending connections beyond it replay their whole history on every poll.
 */
const SMALL_HEAP_MIB = 1024;

export interface StartedWorker {
  /** Every SDK worker of the process, the task queues' first. */
  readonly workers: readonly Worker[];
  readonly nexusWorkers: readonly NexusPoolWorker[];
  readonly build: WorkflowBuild;
  readonly limits: QueueLimits | undefined;
  readonly statusGaugeOn: boolean;
  readonly healthUrl: string | undefined;
}

export function logWorkerStarted(config: WorkerConfig, { workers, nexusWorkers, build, limits, statusGaugeOn, healthUrl }: StartedWorker): void {
  Runtime.instance().logger.info('worker started', {
    taskQueue: config.pool.taskQueues.join(', '),
    nexus: nexusWorkers.length > 0 ? nexusWorkers.map(({ endpoint, taskQueue }) => `${endpoint} on ${taskQueue}`).join(', ') : 'off',
    pool: describePool(config),
    namespace: config.temporal.namespace,
    temporal: config.temporal.address,
    /** Which settings a Temporal profile (temporal.toml) or Temporal's own variables gave, if any. */
    temporalSettings: temporalSettingsSource(config.temporal),
    aggregator: config.aggregator.baseUrl,
    payloadEncryption: config.encryption ? `on (key id ${config.encryption.keyId})` : 'off',
    payloadStore: config.payloadStore.kind,
    retention: config.retentionDays.size > 0 ? Object.fromEntries(config.retentionDays) : 'off',
    metrics: config.metrics.port ? `http://${config.metrics.host}:${config.metrics.port}/metrics` : 'off',
    connectionStatusGauge: statusGaugeOn ? `every ${config.statusGauge.intervalMs / 1000} s` : 'off',
    health: healthUrl ?? 'off',
    tracing: config.tracing ? describeEndpoint(config.tracing) : 'off',
    workflowCache: workers[0]?.options.maxCachedWorkflows,
    heapLimitMiB: heapLimitMiB(),
    deployment: `${config.deployment.name}:${build.buildId} (build id from ${build.buildIdSource})`,
    budget:
      config.budget && limits
        ? `${config.budget.totalRps}/s for the fleet (the service's limit: ${describeServiceLimit(config.budget)}), ${config.budget.tenantRps}/s per tenant of weight 1 (queue limits set: ${limits.queueRps}/s, ${limits.tenantRps}/s per tenant)`
        : 'none (SERVICE_BUDGET_RPS unset)',
  });
  warnOnSmallDefaultCache(workers[0]?.options.maxCachedWorkflows ?? 0, config.workflows.maxCachedWorkflows);
}

function describePool(config: WorkerConfig): string {
  const { unattended, nice, unattendedNice } = config.pool;
  const queues = unattended === 'shared' ? 'unattended work shares the service queue' : `unattended work on ${config.pool.unattendedTaskQueue}`;
  const lowered = nice > 0 ? `${queues}; CPU priority lowered by ${nice} (WORKER_NICE)` : queues;
  return unattendedNice > 0 ? `${lowered}; the unattended pool's workflow threads at ${unattendedNice} (WORKER_UNATTENDED_NICE)` : lowered;
}

function heapLimitMiB(): number {
  return Math.round(getHeapStatistics().heap_size_limit / 2 ** 20);
}

/**
 * A heap capped with --max-old-space-size (the way to bound the worker's RSS) also shrinks the SDK's
 * default cache, from ~2,300 workflows at a 4 GiB heap to 32 at 256 MiB; measured at 1,000 pending
 * connections that multiplied the CPU per poll by 3 and delayed polls by minutes. Say so at start.
 */
function warnOnSmallDefaultCache(effective: number, configured: number | undefined): void {
  const limit = heapLimitMiB();
  if (configured !== undefined || limit >= SMALL_HEAP_MIB) return;
  Runtime.instance().logger.warn(
    `the heap is capped at ${limit} MiB, so the SDK caches only ${effective} workflows; pending connections beyond that replay their history on each poll. ` +
      'Set WORKER_MAX_CACHED_WORKFLOWS to the pending connections you expect (a cached connection holds ~35 KiB of heap)',
    { workflowCache: effective, heapLimitMiB: limit },
  );
}
