/**
 * Worker wiring only: config, telemetry, connection, activities, Worker.create, shutdown.
 * SIGINT/SIGTERM make the SDK drain the worker; run() then resolves and we close the connection.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, Worker, type LogEntry } from '@temporalio/worker';
import { createActivities, INLINE_RESULT_LIMIT_BYTES } from './activities/connection-activities.js';
import { createForgetActivities } from './activities/forget-activities.js';
import { createInputActivities } from './activities/input-activities.js';
import { createRetentionActivities } from './activities/retention-activities.js';
import { tenantClients } from './activities/tenant-clients.js';
import { dataConverterFor, workerDataConverterFor } from './codec/data-converter.js';
import { ConfigError, loadWorkerConfig, retentionDaysOf, temporalTransportOf, type WorkerConfig } from './config.js';
import { payloadStoreDriverFor } from './payload-store/external-storage.js';
import { temporalConnectionOptions } from './temporal-connection.js';
import { redact } from './logging/redact.js';
import { WORKFLOW_CODE, WORKFLOW_SANDBOX_OPTIONS } from './workflow-code.js';

/** How long a draining worker lets its in-flight activities finish before they are cancelled. */
const WORKER_SHUTDOWN_GRACE = '2m';

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
  Runtime.install({
    logger: new DefaultLogger(config.LOG_LEVEL, jsonLine),
    telemetryOptions: config.WORKER_METRICS_PORT
      ? { metrics: { prometheus: { bindAddress: `${config.WORKER_METRICS_HOST}:${config.WORKER_METRICS_PORT}` } } }
      : {},
  });

  const connection = await NativeConnection.connect(await temporalConnectionOptions(config.TEMPORAL_ADDRESS, temporalTransportOf(config)));
  // Forget and retention activities manage schedules and workflows: a client of the same namespace.
  const clientConnection = await Connection.connect(await temporalConnectionOptions(config.TEMPORAL_ADDRESS, temporalTransportOf(config)));
  const temporal = new Client({ connection: clientConnection, namespace: config.TEMPORAL_NAMESPACE, dataConverter: dataConverterFor(config) });
  const payloadStore = payloadStoreDriverFor(config.payloadStore);
  const clientFor = tenantClients({
    baseUrl: config.AGGREGATOR_BASE_URL,
    auth: config.AGGREGATOR_AUTH_SECRET ? { header: config.AGGREGATOR_AUTH_HEADER, value: config.AGGREGATOR_AUTH_SECRET } : undefined,
    timeoutMs: config.AGGREGATOR_TIMEOUT_MS,
  });

  const activities = {
    ...createInputActivities(),
    ...createActivities(
      clientFor,
      { resultLimitBytes: config.payloadStore.kind === 'off' ? INLINE_RESULT_LIMIT_BYTES : undefined },
    ),
    ...createForgetActivities({ temporal, clientFor, payloadStore }),
    ...createRetentionActivities({ temporal, taskQueue: config.TEMPORAL_TASK_QUEUE, retentionDays: (customerId) => retentionDaysOf(config.RETENTION_DAYS, customerId) }),
  };

  try {
    const worker = await Worker.create({
      connection,
      namespace: config.TEMPORAL_NAMESPACE,
      taskQueue: config.TEMPORAL_TASK_QUEUE,
      activities,
      // Encrypts workflow/activity inputs and results, signals, updates and failure details when
      // PAYLOAD_ENCRYPTION_KEY is set (the codec runs outside the workflow sandbox); a message that
      // cannot be decoded reaches the workflow as a marker its handlers refuse.
      dataConverter: workerDataConverterFor(config),
      // Production starts from a prebuilt bundle (npm run build:bundle); development bundles at start.
      ...(config.WORKER_WORKFLOW_BUNDLE
        ? { workflowBundle: { codePath: config.WORKER_WORKFLOW_BUNDLE } }
        : { workflowsPath: WORKFLOW_CODE.workflowsPath }),
      ...(config.WORKER_MAX_CACHED_WORKFLOWS === undefined ? {} : { maxCachedWorkflows: config.WORKER_MAX_CACHED_WORKFLOWS }),
      ...(config.WORKER_WORKFLOW_THREADS === undefined ? {} : { workflowThreadPoolSize: config.WORKER_WORKFLOW_THREADS }),
      ...WORKFLOW_SANDBOX_OPTIONS,
      // SIGTERM drains: activities in flight (an Authorize may take minutes) get this long to finish
      // before they are cancelled; the SDK's default is 0, which cancelled them at once.
      shutdownGraceTime: WORKER_SHUTDOWN_GRACE,
    });
    Runtime.instance().logger.info('worker started', {
      taskQueue: config.TEMPORAL_TASK_QUEUE,
      namespace: config.TEMPORAL_NAMESPACE,
      temporal: config.TEMPORAL_ADDRESS,
      aggregator: config.AGGREGATOR_BASE_URL,
      payloadEncryption: config.encryption ? `on (key id ${config.encryption.keyId})` : 'off',
      payloadStore: config.payloadStore.kind,
      retention: config.RETENTION_DAYS.size > 0 ? Object.fromEntries(config.RETENTION_DAYS) : 'off',
      metrics: config.WORKER_METRICS_PORT ? `http://${config.WORKER_METRICS_HOST}:${config.WORKER_METRICS_PORT}/metrics` : 'off',
    });
    await worker.run();
  } finally {
    payloadStore?.close();
    await clientConnection.close();
    await connection.close();
  }
}


if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  let config: WorkerConfig;
  try {
    config = loadWorkerConfig();
    if (config.WORKER_WORKFLOW_BUNDLE && !existsSync(config.WORKER_WORKFLOW_BUNDLE)) {
      throw new ConfigError([`WORKER_WORKFLOW_BUNDLE: no file at ${config.WORKER_WORKFLOW_BUNDLE} (run npm run build:bundle)`]);
    }
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(2);
  }
  runWorker(config).then(
    () => process.exit(0),
    (error: unknown) => {
      process.stderr.write(`worker stopped: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      process.exit(1);
    },
  );
}
