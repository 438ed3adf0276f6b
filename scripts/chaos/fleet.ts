/**
 * What the chaos run and the production check share around their different servers: the workflow
 * bundle, worker processes behind the proxy with the driver's pipeline client (the same Temporal,
 * task queue, payload key and payload store, as a worker and a pipeline would share), driving every
 * planned connection, and judging each one's outcome and data against the sandbox.
 */
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { ConnectionsClient, loadClientConfig } from '../../src/client/index.js';
import { renewApiKey, type ApiKeyFileWatch } from '../../src/temporal/api-key-file.js';
import { dataConverterFor, type PayloadSettings } from '../../src/codec/data-converter.js';
import { temporalConnectionOptions } from '../../src/temporal/connection.js';
import type { Sandbox } from '../../sandbox/server.js';
import type { DevServer } from '../lib/dev-server.js';
import { productWorkflowBundle } from '../lib/workflow-bundle.js';
import { checkData, countDuplicates, judge, type DuplicateReport } from './checks.js';
import { driveConnection, type DriverContext, type DriveRecord } from './driver.js';
import type { ConnectionPlan } from './flows.js';
import { WorkerPool } from './processes.js';
import type { ChaosProxy } from './proxy.js';
import { summarize, type ConnectionOutcome, type Summary } from './report.js';
import { seconds, type Timeline } from './timeline.js';

const PROGRESS_EVERY_MS = 15_000;
const DATA_CHECK_CONCURRENCY = 4;

/** One bundle for every worker, with the product's converters: a worker then starts in seconds. */
export async function buildWorkflowBundle(runDir: string): Promise<string> {
  const bundlePath = join(runDir, 'workflow-bundle.js');
  await writeFile(bundlePath, await productWorkflowBundle());
  return bundlePath;
}

export interface FleetOptions {
  /** Names the task queue and the payload key ("chaos", "prod-check"). */
  readonly name: string;
  readonly runTag: string;
  readonly runDir: string;
  readonly bundlePath: string;
  readonly temporalAddress: string;
  /** More TEMPORAL_* settings for the workers and the driver's client (prod-check --tls: CA, server name, client certificate). */
  readonly temporalEnv?: Readonly<Record<string, string>>;
  readonly workers: number;
  readonly replyDelayMs: number;
  readonly proxy: ChaosProxy;
  readonly timeline: Timeline;
  /** More settings of the workers and the driver's client alike (keys-check: the key provider), over the run's own. */
  readonly payloadEnv?: Readonly<Record<string, string>>;
  /** More settings of the workers only (keys-check: a retention policy). */
  readonly workerEnv?: Readonly<Record<string, string>>;
}

/** What the caller releases at the end, set as soon as each exists. */
export interface FleetResources {
  pool?: WorkerPool;
  connection?: Connection;
  /** TEMPORAL_API_KEY_FILE's renewals reaching the driver's connection; none without the file. */
  tokenRenewal?: ApiKeyFileWatch | undefined;
}

/** Everything a rehearsal on the fleet starts (chaos, keys:check), set as soon as each exists. */
export interface RehearsalResources extends FleetResources {
  runDir?: string;
  sandbox?: Sandbox;
  proxy?: ChaosProxy;
  server?: DevServer | undefined;
}

/** Stops a rehearsal's processes, the workers first and the sandbox last, then `more` (its own). */
export function releaseRehearsal(
  label: string,
  log: (line: string) => void,
  resources: RehearsalResources,
  more: readonly (() => Promise<unknown> | undefined)[] = [],
): Promise<void> {
  return closeEach(label, log, [
    () => resources.pool?.close(),
    () => resources.connection?.close(),
    () => resources.server?.close(),
    () => resources.proxy?.close(),
    () => resources.sandbox?.close(),
    ...more,
  ]);
}

export interface Fleet {
  readonly pool: WorkerPool;
  readonly connection: Connection;
  readonly client: Client;
  readonly connections: ConnectionsClient;
  readonly taskQueue: string;
  /** The run's payload key and store, as every worker and the driver have them: what reads its histories. */
  readonly payload: PayloadSettings;
}

export async function startFleet(options: FleetOptions, resources: FleetResources): Promise<Fleet> {
  const { name, runTag, runDir, proxy, timeline } = options;
  // One key per run, so nothing depends on a key file on disk; large payloads in the run's directory.
  const sharedEnv = {
    TEMPORAL_ADDRESS: options.temporalAddress,
    TEMPORAL_NAMESPACE: 'default',
    TEMPORAL_TASK_QUEUE: `${name}-${runTag}`,
    ...options.temporalEnv,
    PAYLOAD_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    PAYLOAD_ENCRYPTION_KEY_ID: `${name}-${runTag}`,
    PAYLOAD_STORE: 'local',
    PAYLOAD_STORE_DIRECTORY: join(runDir, 'payloads'),
    ...options.payloadEnv,
  };
  const clientConfig = loadClientConfig(sharedEnv);
  const pool = new WorkerPool({
    size: options.workers,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      ...sharedEnv,
      WORKER_WORKFLOW_BUNDLE: options.bundlePath,
      WORKER_METRICS_PORT: '0',
      // A held reply must not look like a dead service to the worker's HTTP client.
      AGGREGATOR_TIMEOUT_MS: String(Math.min(600_000, options.replyDelayMs + 30_000)),
      LOG_LEVEL: 'INFO',
      ...options.workerEnv,
    },
    baseUrlFor: (worker) => proxy.urlFor(worker),
    logDir: runDir,
    timeline,
  });
  resources.pool = pool;
  await pool.start();
  const { temporal } = clientConfig;
  timeline.mark(`${options.workers} worker(s) polling task queue ${temporal.taskQueue}: ${pool.readyNames().join(', ')}`);

  // Through the product's own connection options, as the pipeline client connects.
  const connectionOptions = await temporalConnectionOptions(temporal);
  const connection = await Connection.connect(connectionOptions);
  resources.connection = connection;
  // A token renewed in TEMPORAL_API_KEY_FILE reaches the driver's connection, as the pipeline client's.
  resources.tokenRenewal = renewApiKey(
    temporal.transport,
    [connection],
    { info: (message) => timeline.mark(message), warn: (message) => timeline.mark(message) },
    connectionOptions.apiKey,
  );
  const client = new Client({ connection, namespace: temporal.namespace, dataConverter: dataConverterFor(clientConfig) });
  const connections = new ConnectionsClient({ client, taskQueue: temporal.taskQueue, address: temporal.address });
  return {
    pool,
    connection,
    client,
    connections,
    taskQueue: temporal.taskQueue,
    payload: { encryption: clientConfig.encryption, payloadStore: clientConfig.payloadStore },
  };
}

/** Drives every planned connection to its end (or the deadline), logging progress. */
export async function driveAll(context: DriverContext, plans: readonly ConnectionPlan[], log: (line: string) => void, label: string): Promise<DriveRecord[]> {
  let ended = 0;
  const progress = setInterval(() => log(`${label}: +${seconds(Date.now() - context.origin)} ${ended}/${plans.length} connections ended`), PROGRESS_EVERY_MS);
  try {
    return await Promise.all(plans.map((plan) => driveConnection(context, plan).finally(() => (ended += 1))));
  } finally {
    clearInterval(progress);
  }
}

export interface Judged {
  readonly outcomes: ConnectionOutcome[];
  readonly duplicates: DuplicateReport;
  readonly summary: Summary;
}

/** Each outcome against its flow, each result's data against the sandbox (directly, never through the proxy), duplicates counted. */
export async function judgeAll(records: readonly DriveRecord[], sandbox: Sandbox, proxy: ChaosProxy): Promise<Judged> {
  const outcomes = await mapLimit(records, DATA_CHECK_CONCURRENCY, async (record): Promise<ConnectionOutcome> => {
    const judgement = judge(record);
    const dataProblems = await checkData(sandbox, record).catch((error: unknown) => [
      `the data check could not run: ${error instanceof Error ? error.message : String(error)}`,
    ]);
    return { record, judgement, dataProblems };
  });
  const duplicates = await countDuplicates(sandbox.url, proxy.stats());
  return { outcomes, duplicates, summary: summarize(outcomes, duplicates) };
}

async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array<R>(items.length);
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await fn(items[index] as T);
    }
  });
  await Promise.all(lanes);
  return results;
}

/** Closes every resource in order, each even if one before it failed; failures are logged, not thrown. */
export async function closeEach(label: string, log: (line: string) => void, closers: readonly (() => Promise<unknown> | undefined)[]): Promise<void> {
  for (const close of closers) {
    try {
      await close();
    } catch (error) {
      log(`${label}: cleanup: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
}
