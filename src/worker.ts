/**
 * Worker wiring only: config, telemetry, connection, activities, Worker.create, shutdown.
 * SIGINT/SIGTERM make the SDK drain the worker; run() then resolves and we close the connection.
 */
import { existsSync } from 'node:fs';
import { getHeapStatistics } from 'node:v8';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, Worker, type LogEntry } from '@temporalio/worker';
import { createActivities, INLINE_RESULT_LIMIT_BYTES } from './activities/connection-activities.js';
import { createCallbackActivities } from './activities/callback-activities.js';
import { callbackMetrics } from './metrics/callback-metrics.js';
import { createBookActivities } from './activities/book-activities.js';
import { createLivePathActivities } from './activities/live-path-activities.js';
import { LiveTaskWaits } from './metrics/live-task-waits.js';
import { withLiveTaskWaits } from './worker/live-task-recording.js';
import { createBookStartActivities } from './activities/book-start-activities.js';
import { createAdmissionActivities } from './activities/admission-activities.js';
import { createBookEndActivities } from './activities/book-end-activities.js';
import { createForgetActivities } from './activities/forget-activities.js';
import { createInputActivities } from './activities/input-activities.js';
import { createRetentionActivities } from './activities/retention-activities.js';
import { TenantPauses } from './activities/tenant-pauses.js';
import { applyFleetBudget, describeServiceLimit, type QueueLimits } from './budget/fleet-budget.js';
import { tenantClients } from './activities/tenant-clients.js';
import { dataConverterFor, encryptionCodecFor, workerDataConverterFor } from './codec/data-converter.js';
import { createConfiguredNexusWorkers, NexusKeyFileError } from './nexus/configured-workers.js';
import { keyProviderHealthOf, keySourceFor, staticSealingSourceOf } from './codec/key-provider.js';
import { ConfigError } from './settings/load.js';
import { loadWorkerConfig, retentionDaysOf, type WorkerConfig } from './settings/worker.js';
import { payloadStoreDriverFor } from './payload-store/external-storage.js';
import { connectFailureReason, TemporalConnectError } from './temporal/connect-error.js';
import { temporalConnectionOptions, temporalSettingsSource, TemporalTlsFileError } from './temporal/connection.js';
import { renewApiKey } from './temporal/api-key-file.js';
import { TemporalApiKeyFileError } from './settings/temporal-api-key-file.js';
import { redact } from './logging/redact.js';
import { ConnectionStatusGauge, connectionsGauge } from './metrics/connection-status-gauge.js';
import { recordKeyProviderMetrics } from './metrics/key-provider-metrics.js';
import { recordStaticKeyUse } from './metrics/static-key-metrics.js';
import { logKeyProviderChanges } from './worker/key-provider-log.js';
import { serviceMetrics } from './metrics/service-metrics.js';
import { acquireTracing, describeEndpoint } from './tracing/provider.js';
import { tracingWorkerOptions } from './tracing/worker-tracing.js';
import { WORKFLOW_SANDBOX_OPTIONS } from './bundle/workflow-code.js';
import { becomeCurrent, loadWorkflowBuild, workerDeploymentOptions, type WorkflowBuild } from './worker/deployment.js';
import { startWorkerHealthServer } from './worker/health.js';
import { waitForFirstDataKey } from './worker/key-provider-ready.js';
import { lowerCpuPriority, lowerThreadsStartedBy } from './worker/cpu-priority.js';

/** How long a draining worker lets its in-flight activities finish before they are cancelled. */
const WORKER_SHUTDOWN_GRACE = '2m';

/**
 * Below this heap limit the SDK's default workflow cache (sized from the heap) is small enough that
 * pending connections beyond it replay their whole history on every poll.
 */
const SMALL_HEAP_MIB = 1024;

/** One JSON object per line: what log shippers expect; secrets are redacted by key. */
function jsonLine(entry: LogEntry): void {
  const line = JSON.stringify({
    time: new Date(Number(entry.timestampNanos / 1_000_000n)).toISOString(),
    level: entry.level,
    message: entry.message,
    ...(redact(entry.meta ?? {}) as Record<string, unknown>),
  });
  (entry.level === 'ERROR' || entry.level === 'WARN' ? process.stderr : process.stdout).write(`${line}\n`);
}

export async function runWorker(config: WorkerConfig): Promise<void> {
  // Before the SDK starts its threads, so that they inherit it.
  const lowered = lowerCpuPriority(config.pool.nice);
  Runtime.install({
    logger: new DefaultLogger(config.logLevel, jsonLine),
    telemetryOptions: config.metrics.port ? { metrics: { prometheus: { bindAddress: `${config.metrics.host}:${config.metrics.port}` } } } : {},
  });
  if (config.pool.nice > 0 && lowered === 0)
    Runtime.instance().logger.info(`WORKER_NICE=${config.pool.nice}: the process already ran at that CPU priority or lower; left as it is`);

  // Read once (TLS files included) for both connections below.
  const connectionOptions = await temporalConnectionOptions(config.temporal);
  let connection: NativeConnection;
  try {
    connection = await NativeConnection.connect(connectionOptions);
  } catch (error) {
    throw new TemporalConnectError(config.temporal.address, await connectFailureReason(config.temporal, error), { cause: error });
  }
  const tracing = config.tracing ? await acquireTracing(config.tracing) : undefined;
  // Forget and retention activities manage schedules and workflows: a client of the same namespace.
  const clientConnection = await Connection.connect(connectionOptions);
  const temporal = new Client({ connection: clientConnection, namespace: config.temporal.namespace, dataConverter: dataConverterFor(config) });
  // TEMPORAL_API_KEY_FILE: a renewed token reaches both connections (the pollers' and the activities' client) without a restart.
  const tokenRenewal = renewApiKey(config.temporal.transport, [connection, clientConnection], Runtime.instance().logger, connectionOptions.apiKey);
  const payloadStore = payloadStoreDriverFor(config.payloadStore);
  const clientFor = tenantClients({
    baseUrl: config.aggregator.baseUrl,
    auth: config.aggregator.auth,
    timeoutMs: config.aggregator.timeoutMs,
    authorizeTimeoutMs: config.aggregator.authorizeTimeoutMs,
  });
  // The product's metrics, beside the SDK's on the same endpoint (a no-op meter without one), with the labels the SDK's carry.
  const meter = Runtime.instance().metricMeter.withTags({ namespace: config.temporal.namespace, task_queue: config.temporal.taskQueue });
  const metrics = serviceMetrics(meter);

  // TOO_MANY_REQUESTS pauses the tenant's whole fleet for the wait the service asked for; book refreshes read the same pauses.
  const pauses = new TenantPauses(temporal, config.temporal.taskQueue);
  // Live tasks' waits to start on this process (every worker of it records, its windows read them).
  const liveStarts = new LiveTaskWaits();
  const activities = {
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

  // The workflow code decides the build id: read (or bundled) before the worker exists.
  const build = await loadWorkflowBuild(config);
  // The fleet's request budget lives on the task queue: every worker sets the same (src/budget/fleet-budget.ts).
  const limits: QueueLimits | undefined = config.budget
    ? await applyFleetBudget(
        {
          workflowService: temporal.workflowService,
          namespace: config.temporal.namespace,
          taskQueue: config.temporal.taskQueue,
          identity: temporal.options.identity ?? 'aggregation-connections-worker',
        },
        config.budget,
        `SERVICE_BUDGET_RPS=${config.budget.totalRps}, SERVICE_BUDGET_TENANT_RPS=${config.budget.tenantRps}, the service's limit ${describeServiceLimit(config.budget)} (worker start)`,
      )
    : undefined;

  // Up before the workers exist (503 until they run) and down only after the drain, so a draining worker answers 503.
  let workers: Worker[] = [];
  // Fleet-wide running connections by status, counted from this thread (src/metrics/connection-status-gauge.ts).
  const statusGauge =
    config.metrics.port && config.statusGauge.intervalMs > 0
      ? new ConnectionStatusGauge({
          client: temporal,
          taskQueues: [config.temporal.taskQueue, config.pool.unattendedTaskQueue],
          gauge: connectionsGauge(meter),
          logger: Runtime.instance().logger,
          intervalMs: config.statusGauge.intervalMs,
        })
      : undefined;
  const kms = keyProviderHealthOf(config.encryption);
  const stopKmsMetrics = kms ? recordKeyProviderMetrics(meter, kms) : undefined;
  const staticKey = staticSealingSourceOf(config.encryption);
  const warnInLog = (message: string) => {
    Runtime.instance().logger.warn(message);
  };
  const stopStaticKeyUse = staticKey ? recordStaticKeyUse(meter, staticKey, warnInLog) : undefined;
  const stopKmsLog = kms ? logKeyProviderChanges(kms, Runtime.instance().logger) : undefined;
  const health = config.health.port
    ? await startWorkerHealthServer({
        host: config.health.host,
        port: config.health.port,
        state: () => poolState(workers),
        ...(kms ? { details: () => ({ keyProvider: kms.status }) } : {}),
      })
    : undefined;

  try {
    // A worker that cannot seal cannot complete a task: with a KMS, it has a data key before it polls.
    if (kms && config.encryption) {
      const logger = Runtime.instance().logger;
      await waitForFirstDataKey(keySourceFor(config.encryption), {
        warn: (message) => {
          logger.warn(message);
        },
        info: (message) => {
          logger.info(message);
        },
      });
    }
    // One SDK worker per task queue this process polls (WORKER_POOL): the service queue, the unattended pool's, or both.
    const createWorker = (taskQueue: string) =>
      Worker.create({
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
    // The unattended pool's worker after the service queue's, so that the threads it starts are
    // told apart and lowered (WORKER_UNATTENDED_NICE) when this process polls both.
    const unattendedQueue = config.pool.taskQueues.length > 1 ? config.pool.unattendedTaskQueue : undefined;
    workers = await Promise.all(config.pool.taskQueues.filter((queue) => queue !== unattendedQueue).map(createWorker));
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
    // The `connections` Nexus service (NEXUS_ENDPOINT_TENANTS): a worker per endpoint, beside the service queue's.
    const nexusWorkers = config.pool.taskQueues.includes(config.temporal.taskQueue)
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
    workers = [...workers, ...nexusWorkers.map(({ worker }) => worker)];
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
      connectionStatusGauge: statusGauge ? `every ${config.statusGauge.intervalMs / 1000} s` : 'off',
      health: health?.url ?? 'off',
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
    // SIGINT/SIGTERM drain every worker of the process (the SDK's runtime shuts them all down).
    const running = Promise.all(workers.map((worker) => worker.run()));
    statusGauge?.start();
    if (config.deployment.becomeCurrent !== 'no') void reportBecomingCurrent(temporal, config, build);
    await running;
  } finally {
    tokenRenewal?.stop();
    stopKmsMetrics?.();
    stopStaticKeyUse?.();
    stopKmsLog?.();
    await statusGauge?.stop();
    await health?.close();
    await tracing?.release(); // exports the spans still buffered
    payloadStore?.close();
    await clientConnection.close();
    // A worker created but never run (the next one's creation failed) still holds the connection: the
    // close then fails, and must not hide why the worker stopped.
    await connection.close().catch((error: unknown) => {
      Runtime.instance().logger.warn(`the worker's connection to Temporal did not close: ${error instanceof Error ? error.message : String(error)}`);
    });
  }
}

/** The process's state for /healthz: RUNNING only when every one of its workers runs; otherwise the first that does not. */
function poolState(workers: readonly Worker[]): ReturnType<Worker['getState']> {
  if (workers.length === 0) return 'INITIALIZED';
  return workers.map((worker) => worker.getState()).find((state) => state !== 'RUNNING') ?? 'RUNNING';
}

function describePool(config: WorkerConfig): string {
  const { unattended, nice, unattendedNice } = config.pool;
  const queues = unattended === 'shared' ? 'unattended work shares the service queue' : `unattended work on ${config.pool.unattendedTaskQueue}`;
  const lowered = nice > 0 ? `${queues}; CPU priority lowered by ${nice} (WORKER_NICE)` : queues;
  return unattendedNice > 0 ? `${lowered}; the unattended pool's workflow threads at ${unattendedNice} (WORKER_UNATTENDED_NICE)` : lowered;
}

/** Runs beside the worker: its polls register the version, then it can be made current. */
async function reportBecomingCurrent(temporal: Client, config: WorkerConfig, build: WorkflowBuild): Promise<void> {
  const { name } = config.deployment;
  const policy = config.deployment.becomeCurrent === 'yes' ? 'yes' : 'when-unset';
  const result = await becomeCurrent(temporal, name, build.buildId, policy).catch((error: unknown) => ({ outcome: 'failed' as const, error: error as Error }));
  const logger = Runtime.instance().logger;
  if (result.outcome === 'made-current')
    logger.info(`build ${build.buildId} is now the current version of ${name}`, { deployment: name, buildId: build.buildId });
  else if (result.outcome === 'left') {
    logger.warn(
      `build ${build.buildId} is not current (${result.currentBuildId} is): it serves only connections pinned to it until an operator runs ` +
        `\`npm run cli -- deployment set-current ${build.buildId}\` (or ramps it)`,
      { deployment: name, buildId: build.buildId, currentBuildId: result.currentBuildId },
    );
  } else if (result.outcome === 'failed')
    logger.error(`could not make build ${build.buildId} current: ${result.error.message}`, { deployment: name, buildId: build.buildId });
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

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  let config: WorkerConfig;
  try {
    config = loadWorkerConfig();
    if (config.workflows.bundlePath && !existsSync(config.workflows.bundlePath)) {
      throw new ConfigError([`WORKER_WORKFLOW_BUNDLE: no file at ${config.workflows.bundlePath} (run npm run build or npm run build:bundle)`]);
    }
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(2);
  }
  runWorker(config).then(
    () => process.exit(0),
    (error: unknown) => {
      // Start-up failures the operator fixes in the environment: the message says which variable; no stack.
      const known =
        error instanceof TemporalConnectError ||
        error instanceof TemporalTlsFileError ||
        error instanceof TemporalApiKeyFileError ||
        error instanceof NexusKeyFileError;
      process.stderr.write(`worker stopped: ${error instanceof Error ? (known ? error.message : (error.stack ?? error.message)) : String(error)}\n`);
      process.exit(1);
    },
  );
}
