/**
 * Worker wiring only: config, telemetry, connection, activities, Worker.create, shutdown.
 * SIGINT/SIGTERM make the SDK drain the worker; run() then resolves and we close the connection.
 * The activities (src/worker/activities.ts), the SDK workers (src/worker/pool-workers.ts), the key
 * provider's watch (src/worker/key-provider-watch.ts) and the start's log (src/worker/start-log.ts) are built apart.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, type Worker, type LogEntry } from '@temporalio/worker';
import { LiveTaskWaits } from './metrics/live-task-waits.js';
import { applyFleetBudget, describeServiceLimit, type QueueLimits } from './budget/fleet-budget.js';
import { dataConverterFor } from './codec/data-converter.js';
import { NexusKeyFileError } from './nexus/configured-workers.js';
import { ConfigError } from './settings/load.js';
import { loadWorkerConfig, type WorkerConfig } from './settings/worker.js';
import { payloadStoreDriverFor } from './payload-store/external-storage.js';
import { connectFailureReason, TemporalConnectError } from './temporal/connect-error.js';
import { temporalConnectionOptions, TemporalTlsFileError } from './temporal/connection.js';
import { renewApiKey } from './temporal/api-key-file.js';
import { TemporalApiKeyFileError } from './settings/temporal-api-key-file.js';
import { redact } from './logging/redact.js';
import { ConnectionStatusGauge, connectionsGauge } from './metrics/connection-status-gauge.js';
import { acquireTracing } from './tracing/provider.js';
import { becomeCurrent, loadWorkflowBuild, type WorkflowBuild } from './worker/deployment.js';
import { startWorkerHealthServer } from './worker/health.js';
import { lowerCpuPriority } from './worker/cpu-priority.js';
import { workerActivities } from './worker/activities.js';
import { createNexusWorkers, createQueueWorkers } from './worker/pool-workers.js';
import { untilFirstDataKey, watchKeyProvider } from './worker/key-provider-watch.js';
import { logWorkerStarted } from './worker/start-log.js';

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
  // The product's metrics, beside the SDK's on the same endpoint (a no-op meter without one), with the labels the SDK's carry.
  const meter = Runtime.instance().metricMeter.withTags({ namespace: config.temporal.namespace, task_queue: config.temporal.taskQueue });
  // Live tasks' waits to start on this process (every worker of it records, its windows read them).
  const liveStarts = new LiveTaskWaits();
  const activities = workerActivities(config, { temporal, payloadStore, meter, liveStarts });

  // The workflow code decides the build id: read (or bundled) before the worker exists.
  const build = await loadWorkflowBuild(config);
  const limits = await fleetBudgetAtStart(config, temporal);

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
  const keys = watchKeyProvider(config, meter);
  const { kms } = keys;
  const health = config.health.port
    ? await startWorkerHealthServer({
        host: config.health.host,
        port: config.health.port,
        state: () => poolState(workers),
        ...(kms ? { details: () => ({ keyProvider: kms.status }) } : {}),
      })
    : undefined;

  try {
    await untilFirstDataKey(config, kms);
    workers = await createQueueWorkers(config, { connection, activities, build, tracing, liveStarts });
    // The `connections` Nexus service (NEXUS_ENDPOINT_TENANTS): a worker per endpoint, beside the service queue's.
    const nexusWorkers = await createNexusWorkers(config, connection, temporal);
    workers = [...workers, ...nexusWorkers.map(({ worker }) => worker)];
    logWorkerStarted(config, { workers, nexusWorkers, build, limits, statusGaugeOn: statusGauge !== undefined, healthUrl: health?.url });
    // SIGINT/SIGTERM drain every worker of the process (the SDK's runtime shuts them all down).
    const running = Promise.all(workers.map((worker) => worker.run()));
    statusGauge?.start();
    if (config.deployment.becomeCurrent !== 'no') void reportBecomingCurrent(temporal, config, build);
    await running;
  } finally {
    tokenRenewal?.stop();
    keys.stop();
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

/** The fleet's request budget lives on the task queue: every worker sets the same (src/budget/fleet-budget.ts); none without SERVICE_BUDGET_RPS. */
async function fleetBudgetAtStart(config: WorkerConfig, temporal: Client): Promise<QueueLimits | undefined> {
  if (!config.budget) return undefined;
  return await applyFleetBudget(
    {
      workflowService: temporal.workflowService,
      namespace: config.temporal.namespace,
      taskQueue: config.temporal.taskQueue,
      identity: temporal.options.identity ?? 'aggregation-connections-worker',
    },
    config.budget,
    `SERVICE_BUDGET_RPS=${config.budget.totalRps}, SERVICE_BUDGET_TENANT_RPS=${config.budget.tenantRps}, the service's limit ${describeServiceLimit(config.budget)} (worker start)`,
  );
}

/** The process's state for /healthz: RUNNING only when every one of its workers runs; otherwise the first that does not. */
function poolState(workers: readonly Worker[]): ReturnType<Worker['getState']> {
  if (workers.length === 0) return 'INITIALIZED';
  return workers.map((worker) => worker.getState()).find((state) => state !== 'RUNNING') ?? 'RUNNING';
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
