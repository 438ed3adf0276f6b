/**
 * The production stack of one burst run, as prod:check starts it: PostgreSQL, the Temporal server
 * (go.temporal.io/server) on it with the project's dynamic config (fairness on, one partition per
 * queue) or, for the "off" run, the same with matching.enableFairness false; the sandbox as its own
 * process; worker processes with the fleet's budget; the pipeline's client with its priority policy.
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { ConnectionsClient, loadClientConfig } from '../../src/client/index.js';
import type { ClientConfig } from '../../src/settings/client.js';
import { dataConverterFor, type PayloadSettings } from '../../src/codec/data-converter.js';
import { DEFAULT_PRIORITY_KEYS, type PriorityPolicy } from '../../src/contract/priority.js';
import type { RateLimitSettings, RateLimitUpdate, RequestRates } from '../../sandbox/rate-limits.js';
import { temporalConnectionOptions } from '../../src/temporal/connection.js';
import { buildWorkflowBundle, closeEach } from '../../scripts/chaos/fleet.js';
import { WorkerPool } from '../../scripts/chaos/processes.js';
import type { Timeline } from '../../scripts/chaos/timeline.js';
import { freePort } from '../../scripts/lib/free-port.js';
import { PostgresCluster } from '../../scripts/prod-check/postgres.js';
import { findServerBinaries, ProdTemporalServer } from '../../scripts/prod-check/temporal-server.js';
import { startProcess, stopProcess, workerTuning } from '../bench-processes.js';
import type { Mode } from './options.js';
import { pinPostgres, pinServer, type CpuSplit } from './cpu-split.js';

/** The tenants (customer ids): A's and B's nightly refreshes, and the live end users' lender. */
export const TENANT_A = 'tenant-a';
export const TENANT_B = 'tenant-b';
export const TENANT_LIVE = 'tenant-live';
/** TENANT_WEIGHTS of the on run: A and B alike, whatever their volume (the live tenant: 1 by default). */
export const TENANT_WEIGHTS = new Map([
  [TENANT_A, 1],
  [TENANT_B, 1],
]);
/** Every key alike: the off run's priority policy (3 is what a start without a key gets). */
const FLAT_KEYS = { live: 3, pipeline: 3, scheduled: 3, maintenance: 3 } as const;

export interface StackSettings {
  readonly mode: Mode;
  readonly workers: number;
  /** Of the workers, the unattended pool's (UNATTENDED_POOL=separate, the last ones started); 0: one shared pool. */
  readonly unattendedWorkers?: number;
  /** Their WORKER_NICE (in process: WORKER_UNATTENDED_NICE of the pool's workflow threads). */
  readonly unattendedNice?: number;
  /** The unattended pool in every worker process beside the service queue's (UNATTENDED_POOL=separate, WORKER_POOL=all). */
  readonly unattendedInProcess?: boolean;
  readonly budgetRps: number;
  readonly tenantBudgetRps: number;
  readonly runDir: string;
  readonly runTag: string;
  readonly timeline: Timeline;
  /** The server and PostgreSQL on cores of their own (the driver, pinned already, keeps the rest). */
  readonly cpuSplit?: CpuSplit;
}

/** What the run releases at the end, set as soon as each exists. */
export interface StackResources {
  postgres?: PostgresCluster;
  server?: ProdTemporalServer;
  sandbox?: ChildProcess;
  pool?: WorkerPool;
  connection?: Connection;
}

export interface Stack {
  readonly serverVersion: string;
  readonly sandboxUrl: string;
  readonly client: Client;
  readonly connections: ConnectionsClient;
  readonly taskQueue: string;
  readonly postgresDataDir: string;
  readonly policy: PriorityPolicy;
  readonly pool: WorkerPool;
  /** What book refreshes get unless they name their own: the client's settings (BOOK_WINDOW_*, BOOK_PAGE_SIZE), defaults here. */
  readonly books: ClientConfig['books'];
  /** The workflow bundle the workers load, and their payload key and store: what a replay of the run's histories needs. */
  readonly bundlePath: string;
  readonly payload: PayloadSettings;
  /** The workers' payload variables (key and store): what another worker on this stack needs to read and write its payloads. */
  readonly payloadEnv: Readonly<Record<string, string>>;
}

export function policyOf(mode: Mode): PriorityPolicy {
  return mode === 'on' ? { keys: DEFAULT_PRIORITY_KEYS, tenantWeights: TENANT_WEIGHTS } : { keys: FLAT_KEYS, tenantWeights: new Map() };
}

/** The server's settings on top of the project's: the off run turns fairness off (partitions stay at 1). */
export function serverSettingsOf(mode: Mode): Record<string, boolean> {
  return mode === 'on' ? {} : { 'matching.enableFairness': false };
}

/** The workers' variables that differ between the runs: weights, or every priority key alike. */
export function workerPriorityEnv(mode: Mode): Record<string, string> {
  if (mode === 'on') return { TENANT_WEIGHTS: [...TENANT_WEIGHTS].map(([tenant, weight]) => `${tenant}:${weight}`).join(',') };
  return { PRIORITY_LIVE: '3', PRIORITY_PIPELINE: '3', PRIORITY_SCHEDULED: '3', PRIORITY_MAINTENANCE: '3' };
}

export async function startStack(settings: StackSettings, resources: StackResources): Promise<Stack> {
  const { timeline, runDir, runTag, mode } = settings;
  const binaries = findServerBinaries().binaries!;
  resources.postgres = await PostgresCluster.create(runDir);
  await resources.postgres.start();
  if (settings.cpuSplit) pinPostgres(settings.cpuSplit, join(resources.postgres.dir, 'data'));
  resources.server = await ProdTemporalServer.create({ binaries, postgres: resources.postgres, dir: runDir, timeline, dynamicConfig: serverSettingsOf(mode) });
  const server = resources.server;
  server.setupSchema();
  await server.start();
  if (settings.cpuSplit) pinServer(settings.cpuSplit, server.pid!);
  await server.registerNamespace('default');
  timeline.mark(`PostgreSQL and Temporal server ${binaries.version} up at ${server.address}, fairness ${mode}`);

  const sandboxPort = await freePort();
  const sandboxUrl = `http://127.0.0.1:${sandboxPort}`;
  resources.sandbox = await startProcess('sandbox', 'sandbox/main.ts', { SANDBOX_PORT: String(sandboxPort) }, sandboxUrl);
  const bundlePath = await buildWorkflowBundle(runDir);
  timeline.mark(`sandbox (its own process) at ${sandboxUrl}; workflow bundle built`);

  const taskQueue = `burst-${mode}-${runTag}`;
  const unattendedWorkers = settings.unattendedWorkers ?? 0;
  const serviceWorkers = settings.workers - unattendedWorkers;
  const payloadKey = randomBytes(32);
  const sharedEnv = {
    TEMPORAL_ADDRESS: server.address,
    TEMPORAL_NAMESPACE: 'default',
    TEMPORAL_TASK_QUEUE: taskQueue,
    PAYLOAD_ENCRYPTION_KEY: payloadKey.toString('base64'),
    PAYLOAD_ENCRYPTION_KEY_ID: `burst-${runTag}`,
    PAYLOAD_STORE: 'local',
    PAYLOAD_STORE_DIRECTORY: join(runDir, 'payloads'),
    // In process: every worker process polls both queues, the unattended pool's with an SDK worker of
    // its own (its own workflow thread and slots).
    UNATTENDED_POOL: unattendedWorkers > 0 || settings.unattendedInProcess ? 'separate' : 'shared',
    // The storm's admission, set the same on the client (which holds unattended starts) and on the workers.
    ...(process.env.UNATTENDED_ADMISSION === undefined ? {} : { UNATTENDED_ADMISSION: process.env.UNATTENDED_ADMISSION }),
  };
  const nice = String(settings.unattendedNice ?? 0);
  // In process: every worker polls both queues, the pool's threads lowered. Otherwise the first ones
  // serve the service queue, the rest (and their replacements) the unattended pool.
  const poolEnvOf = (ordinal: number): Record<string, string> =>
    settings.unattendedInProcess
      ? { WORKER_UNATTENDED_NICE: nice }
      : unattendedWorkers === 0
        ? {}
        : ordinal <= serviceWorkers
          ? { WORKER_POOL: 'service' }
          : { WORKER_POOL: 'unattended', WORKER_NICE: nice };
  const logDir = join(runDir, 'worker-logs');
  await mkdir(logDir, { recursive: true });
  resources.pool = new WorkerPool({
    size: settings.workers,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      ...sharedEnv,
      WORKER_WORKFLOW_BUNDLE: bundlePath,
      WORKER_METRICS_PORT: '0',
      SERVICE_BUDGET_RPS: String(settings.budgetRps),
      SERVICE_BUDGET_TENANT_RPS: String(settings.tenantBudgetRps),
      ...workerPriorityEnv(mode),
      LOG_LEVEL: 'INFO',
      ...workerTuning(),
    },
    envOf: (ordinal) => poolEnvOf(ordinal),
    baseUrlFor: () => sandboxUrl,
    logDir,
    timeline,
  });
  await resources.pool.start();
  const pools =
    unattendedWorkers === 0
      ? `polling ${taskQueue}${settings.unattendedInProcess ? ` and the unattended pool's ${taskQueue}-unattended in each process, its workflow threads at nice ${settings.unattendedNice ?? 0}` : ''}`
      : `: ${serviceWorkers} polling ${taskQueue}, ${unattendedWorkers} the unattended pool's ${taskQueue}-unattended${settings.unattendedNice ? ` at nice ${settings.unattendedNice}` : ''}`;
  timeline.mark(`${settings.workers} worker(s) ${pools} (${resources.pool.readyNames().join(', ')}), logs in ${logDir}`);

  const clientConfig = loadClientConfig(sharedEnv);
  resources.connection = await Connection.connect(await temporalConnectionOptions(clientConfig.temporal));
  const client = new Client({ connection: resources.connection, namespace: clientConfig.temporal.namespace, dataConverter: dataConverterFor(clientConfig) });
  const policy = policyOf(mode);
  const connections = new ConnectionsClient({
    client,
    taskQueue,
    address: server.address,
    deploymentName: clientConfig.deployment.name,
    priority: policy,
    budget: { totalRps: settings.budgetRps, tenantRps: settings.tenantBudgetRps },
    // The product's book defaults, as the pipeline's client reads them: nothing tuned for this machine.
    books: clientConfig.books,
    unattendedTaskQueue: clientConfig.pools.unattendedTaskQueue,
    unattendedAdmission: clientConfig.pools.admission,
  });
  const payload: PayloadSettings = {
    encryption: { keyId: sharedEnv.PAYLOAD_ENCRYPTION_KEY_ID, key: payloadKey },
    payloadStore: { kind: 'local', directory: sharedEnv.PAYLOAD_STORE_DIRECTORY },
  };
  const payloadEnv = {
    PAYLOAD_ENCRYPTION_KEY: sharedEnv.PAYLOAD_ENCRYPTION_KEY,
    PAYLOAD_ENCRYPTION_KEY_ID: sharedEnv.PAYLOAD_ENCRYPTION_KEY_ID,
    PAYLOAD_STORE: sharedEnv.PAYLOAD_STORE,
    PAYLOAD_STORE_DIRECTORY: sharedEnv.PAYLOAD_STORE_DIRECTORY,
  };
  return {
    serverVersion: binaries.version,
    sandboxUrl,
    client,
    connections,
    taskQueue,
    postgresDataDir: join(resources.postgres.dir, 'data'),
    policy,
    pool: resources.pool,
    books: clientConfig.books,
    bundlePath,
    payload,
    payloadEnv,
  };
}

export async function releaseStack(resources: StackResources, log: (line: string) => void): Promise<void> {
  await closeEach('burst', log, [
    () => resources.pool?.close(),
    () => resources.connection?.close(),
    () => resources.server?.close(),
    () => resources.postgres?.stop(),
    () => (resources.sandbox ? stopProcess(resources.sandbox) : undefined),
  ]);
  delete resources.pool;
  delete resources.connection;
  delete resources.server;
  delete resources.postgres;
  delete resources.sandbox;
}

// ---- the sandbox's admin API ------------------------------------------------------------------------

async function sandboxJson<T>(url: string, init?: RequestInit): Promise<T> {
  const response = await fetch(url, init);
  if (!response.ok) throw new Error(`${init?.method ?? 'GET'} ${url}: HTTP ${response.status} ${(await response.text()).slice(0, 300)}`);
  return (await response.json()) as T;
}

export function updateRateLimits(sandboxUrl: string, change: RateLimitUpdate): Promise<RateLimitSettings> {
  return sandboxJson(`${sandboxUrl}/sandbox/rate-limits`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(change) });
}

export function requestRates(sandboxUrl: string, seconds: number): Promise<RequestRates> {
  return sandboxJson(`${sandboxUrl}/sandbox/request-rates?seconds=${seconds}`);
}

/** A saved login whose data is pending for exactly one poll: a refresh is 3 requests (Authorize, request, poll). */
export async function savedLogin(sandboxUrl: string, customerId: string, index: number): Promise<string> {
  const body = await sandboxJson<{ LoginId: string }>(`${sandboxUrl}/sandbox/${customerId}/logins`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: `pending_polls_${index + 1}`, pendingPolls: 1 }),
  });
  return body.LoginId;
}
