/**
 * The SDK workers this process runs: one per task queue it polls (WORKER_POOL: the service queue,
 * the unattended pool's, or both), with the options every one of them shares, the unattended pool's
 * workflow threads lowered in CPU priority, and the `connections` Nexus service's workers beside the
 * service queue's. Apart from src/worker.ts: how the workers are made, not when they start or stop.
 */
import type { Client } from '@temporalio/client';
import { type NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { encryptionCodecFor, workerDataConverterFor } from '../codec/data-converter.js';
import { createConfiguredNexusWorkers } from '../nexus/configured-workers.js';
import type { WorkerConfig } from '../settings/worker.js';
import type { LiveTaskWaits } from '../metrics/live-task-waits.js';
import type { Tracing } from '../tracing/provider.js';
import { tracingWorkerOptions } from '../tracing/worker-tracing.js';
import { WORKFLOW_SANDBOX_OPTIONS } from '../bundle/workflow-code.js';
import { workerDeploymentOptions, type WorkflowBuild } from './deployment.js';
import { withLiveTaskWaits } from './live-task-recording.js';
import { lowerThreadsStartedBy } from './cpu-priority.js';

/** How long a draining worker lets its in-flight activities finish before they are cancelled. */
const WORKER_SHUTDOWN_GRACE = '2m';

export interface PoolWorkersDeps {
  readonly connection: NativeConnection;
  readonly activities: object;
  readonly build: WorkflowBuild;
  readonly tracing: Tracing | undefined;
  readonly liveStarts: LiveTaskWaits;
}

/** A Nexus endpoint's worker, and where it polls: what the start log names. */
export interface NexusPoolWorker {
  readonly endpoint: string;
  readonly taskQueue: string;
  readonly worker: Worker;
}

/** One SDK worker per task queue this process polls (WORKER_POOL): the service queue, the unattended pool's, or both. */
export async function createQueueWorkers(config: WorkerConfig, deps: PoolWorkersDeps): Promise<Worker[]> {
  const createWorker = (taskQueue: string) => queueWorker(config, taskQueue, deps);
  // The unattended pool's worker after the service queue's, so that the threads it starts are
  // told apart and lowered (WORKER_UNATTENDED_NICE) when this process polls both.
  const unattendedQueue = config.pool.taskQueues.length > 1 ? config.pool.unattendedTaskQueue : undefined;
  const workers = await Promise.all(config.pool.taskQueues.filter((queue) => queue !== unattendedQueue).map(createWorker));
  if (unattendedQueue !== undefined) {
    const { value, started, lowered } = await lowerThreadsStartedBy(config.pool.unattendedNice, () => createWorker(unattendedQueue));
    workers.push(value);
    const nice = config.pool.unattendedNice;
    const logger = Runtime.instance().logger;
    if (lowered > 0) logger.info(`the unattended pool's ${lowered} workflow thread(s) at CPU priority ${nice} (WORKER_UNATTENDED_NICE)`);
    else if (nice > 0 && started > 0)
      logger.info(
        `the unattended pool's ${started} workflow thread(s) already at CPU priority ${nice} or lower (WORKER_NICE, or the process started under nice): left as they are`,
      );
    // Workflows in the main thread (TEMPORAL_DEBUG), or threads not listed (not Linux).
    else if (nice > 0)
      logger.warn(`WORKER_UNATTENDED_NICE=${nice} lowered no thread: this process could not tell the unattended pool's workflow threads apart`);
  }
  return workers;
}

function queueWorker(config: WorkerConfig, taskQueue: string, { connection, activities, build, tracing, liveStarts }: PoolWorkersDeps): Promise<Worker> {
  return Worker.create({
    connection,
    namespace: config.temporal.namespace,
    taskQueue,
    activities,
    // Encrypts workflow/activity inputs and results, signals, updates and failure details when
    // PAYLOAD_ENCRYPTION_KEY is set (the codec runs outside the workflow sandbox); a message that
    // cannot be decoded reaches the workflow as a marker its handlers refuse.
    dataConverter: workerDataConverterFor(config),
    // Production starts from a prebuilt bundle (npm run build:bundle); development bundles at start.
    workflowBundle: { code: build.code },
    // Pinned connections finish on this build; retention and forget move to the current one.
    workerDeploymentOptions: workerDeploymentOptions(config.deployment.name, build.buildId),
    ...(config.workflows.maxCachedWorkflows === undefined ? {} : { maxCachedWorkflows: config.workflows.maxCachedWorkflows }),
    ...(config.workflows.threads === undefined ? {} : { workflowThreadPoolSize: config.workflows.threads }),
    ...(config.workflows.pollers === undefined ? {} : { workflowTaskPollerBehavior: { type: 'simple-maximum', maximum: config.workflows.pollers } }),
    // Sticky queues have no fairness: a task waiting on a busy worker moves to the shared, fair queue soon.
    stickyQueueScheduleToStartTimeout: config.workflows.stickyTimeoutMs,
    ...(config.workflows.maxConcurrentTasks === undefined ? {} : { maxConcurrentWorkflowTaskExecutions: config.workflows.maxConcurrentTasks }),
    ...(config.workflows.reuseV8Context === undefined ? {} : { reuseV8Context: config.workflows.reuseV8Context }),
    ...(config.activities.maxConcurrent === undefined ? {} : { maxConcurrentActivityTaskExecutions: config.activities.maxConcurrent }),
    ...(config.resourceTuner === undefined ? {} : { tuner: { tunerOptions: config.resourceTuner } }),
    ...WORKFLOW_SANDBOX_OPTIONS,
    // Spans of connections started by a traced client (the interceptors are inert for others),
    // and live tasks' waits to start, recorded for the windows (src/worker/live-task-recording.ts into src/metrics/live-task-waits.ts).
    ...withLiveTaskWaits(tracingWorkerOptions(tracing, { bundled: true }), liveStarts, config.priority.keys.live),
    // SIGTERM drains: activities in flight (an Authorize may take minutes) get this long to finish
    // before they are cancelled; the SDK's default is 0, which cancelled them at once.
    shutdownGraceTime: WORKER_SHUTDOWN_GRACE,
  });
}

/** The `connections` Nexus service (NEXUS_ENDPOINT_TENANTS): a worker per endpoint, beside the service queue's; none if this process does not poll it. */
export async function createNexusWorkers(config: WorkerConfig, connection: NativeConnection, temporal: Client): Promise<NexusPoolWorker[]> {
  return config.pool.taskQueues.includes(config.temporal.taskQueue)
    ? await createConfiguredNexusWorkers({
        connection,
        namespace: config.temporal.namespace,
        taskQueue: config.temporal.taskQueue,
        nexus: config.nexus,
        productCodec: encryptionCodecFor(config),
        productClient: temporal,
        priority: config.priority,
        unattendedTaskQueue: config.pool.unattendedTaskQueue,
      })
    : [];
}
