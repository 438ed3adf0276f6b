/**
 * `npm run chaos`: proves that no connection is lost, fails or answers twice because workers crash,
 * the Temporal server restarts or the service is slow.
 *
 * Starts the dev server on a SQLite file, the sandbox behind a counting proxy that holds Authorize
 * replies, and worker processes; drives every flow of flows.ts through the pipeline client; SIGKILLs
 * workers at random and restarts the server once; then checks each connection's end against its
 * flow and its data against the sandbox's own, and ends with one line:
 *   chaos: <n> connections, <n> completed as expected, <n> unexpected failures, <n> stuck, <n> duplicate answers, <n> data mismatches
 * Exit 0 only when the last four are 0 (and every end is known); 2 for a bad argument; 1 otherwise.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes, randomInt } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { bundleWorkflowCode } from '@temporalio/worker';
import { ConnectionsClient, loadClientConfig } from '../../src/client/index.js';
import { dataConverterFor } from '../../src/codec/data-converter.js';
import { createSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { temporalCliPath } from '../lib/temporal-binaries.js';
import { checkData, countDuplicates, judge } from './checks.js';
import { driveConnection, type DriveRecord } from './driver.js';
import { fetchScenarioListing, FLOWS, planConnections, type RunTiming } from './flows.js';
import { ChaosArgumentError, defaultDeadlineMs, parseChaosArgs, USAGE, type ChaosOptions } from './options.js';
import { DevServer, killAllChildren, WorkerPool } from './processes.js';
import { startChaosProxy, type ChaosProxy } from './proxy.js';
import { seededRandom } from './random.js';
import { passed, renderReport, summarize, type ConnectionOutcome } from './report.js';
import { startChaos } from './schedule.js';
import { seconds, Timeline } from './timeline.js';

const WORKFLOWS_PATH = fileURLToPath(new URL('../../src/workflows/index.ts', import.meta.url));
const POLL_INTERVAL_MS = 1_000;
/** Connections start one after another over this long (at most), so kills meet them at every stage. */
const START_STEP_MS = 400;
const MAX_START_SPREAD_MS = 30_000;
const PROGRESS_EVERY_MS = 15_000;
const DATA_CHECK_CONCURRENCY = 4;

function log(line: string): void {
  process.stdout.write(`${line}\n`);
}

/** Everything started, so that any way out of the run stops it all. */
interface Resources {
  runDir?: string;
  sandbox?: Sandbox;
  proxy?: ChaosProxy;
  server?: DevServer;
  pool?: WorkerPool;
  connection?: Connection;
}

async function release(resources: Resources): Promise<void> {
  const attempts: (() => Promise<unknown> | undefined)[] = [
    () => resources.pool?.close(),
    () => resources.connection?.close(),
    () => resources.server?.close(),
    () => resources.proxy?.close(),
    () => resources.sandbox?.close(),
  ];
  for (const attempt of attempts) {
    try {
      await attempt();
    } catch (error) {
      log(`chaos: cleanup: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
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

async function run(options: ChaosOptions, resources: Resources): Promise<boolean> {
  const timeline = new Timeline();
  const runTag = `${Date.now().toString(36)}${options.seed.toString(36)}`.slice(-10);
  const startSpreadMs = Math.min(MAX_START_SPREAD_MS, START_STEP_MS * Math.max(0, options.connections - 1));
  // Kills while connections start and for two intervals more: two to four kills in the default run.
  const killWindowMs = options.killEveryMs > 0 ? startSpreadMs + 2 * options.killEveryMs : 0;
  const deadlineMs = options.deadlineMs ?? defaultDeadlineMs(killWindowMs, options.connections, options.replyDelayMs);
  const cliPath = temporalCliPath();

  const runDir = await mkdtemp(join(tmpdir(), 'aggregation-chaos-'));
  resources.runDir = runDir;
  const header =
    `chaos: seed ${options.seed}; ${options.connections} connections over ${FLOWS.length} flows, started over ${seconds(startSpreadMs)}; ` +
    `${options.workers} worker(s); Authorize replies held ${options.replyDelayMs} ms; ` +
    (options.killEveryMs > 0 ? `a worker SIGKILL every ~${seconds(options.killEveryMs)} (${options.killTarget}) for ${seconds(killWindowMs)}; ` : 'no kills; ') +
    (options.serverRestartAtMs > 0 ? `server restart (${options.serverStopSignal}) at +${seconds(options.serverRestartAtMs)}; ` : 'no server restart; ') +
    `deadline +${seconds(deadlineMs)}`;
  log(header);
  log(`chaos: run directory ${runDir}`);

  // The service: the sandbox in this process, the proxy in front of it.
  resources.sandbox = await createSandbox({ port: 0 });
  const sandbox = resources.sandbox;
  resources.proxy = await startChaosProxy({ upstream: sandbox.url, replyDelayMs: options.replyDelayMs });
  const proxy = resources.proxy;
  const listing = await fetchScenarioListing(sandbox.url);
  timeline.mark(`sandbox ${sandbox.url}, proxy ${proxy.url}`);

  // One bundle for every worker: a worker then starts in seconds instead of bundling on its own.
  const bundlePath = join(runDir, 'workflow-bundle.js');
  const silent = { info() {}, warn() {}, error() {}, debug() {}, trace() {}, log() {} };
  const { code } = await bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: silent });
  await writeFile(bundlePath, code);
  timeline.mark('workflow bundle built');

  resources.server = await DevServer.create({ cliPath, dbFile: join(runDir, 'temporal.sqlite'), logPath: join(runDir, 'dev-server.log'), timeline });
  const server = resources.server;
  const serverStartMs = await server.start();
  timeline.mark(`dev server up at ${server.address} (SQLite ${join(runDir, 'temporal.sqlite')}) in ${seconds(serverStartMs)}`);

  // Workers and the driver share these settings, as a worker and the pipeline would: the same
  // Temporal, task queue and payload key (one per run, so nothing depends on a key file on disk).
  const sharedEnv = {
    TEMPORAL_ADDRESS: server.address,
    TEMPORAL_NAMESPACE: 'default',
    TEMPORAL_TASK_QUEUE: `chaos-${runTag}`,
    PAYLOAD_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    PAYLOAD_ENCRYPTION_KEY_ID: `chaos-${runTag}`,
    // Large payloads of this run stay in its own directory, shared by the workers and the driver.
    PAYLOAD_STORE: 'local',
    PAYLOAD_STORE_DIRECTORY: join(runDir, 'payloads'),
  };
  const clientConfig = loadClientConfig(sharedEnv);
  const taskQueue = clientConfig.taskQueue;
  resources.pool = new WorkerPool({
    size: options.workers,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      ...sharedEnv,
      WORKER_WORKFLOW_BUNDLE: bundlePath,
      WORKER_METRICS_PORT: '0',
      // A held reply must not look like a dead service to the worker's HTTP client.
      AGGREGATOR_TIMEOUT_MS: String(Math.min(600_000, options.replyDelayMs + 30_000)),
      LOG_LEVEL: 'INFO',
    },
    baseUrlFor: (name) => proxy.urlFor(name),
    logDir: runDir,
    timeline,
  });
  const pool = resources.pool;
  await pool.start();
  timeline.mark(`${options.workers} worker(s) polling task queue ${taskQueue}: ${pool.readyNames().join(', ')}`);

  resources.connection = await Connection.connect({ address: clientConfig.address });
  const connection = resources.connection;
  const client = new Client({ connection, namespace: clientConfig.namespace, dataConverter: dataConverterFor(clientConfig) });
  const connections = new ConnectionsClient({ client, taskQueue, address: clientConfig.address });

  const plans = planConnections(options.connections, runTag, startSpreadMs, seededRandom(options.seed));
  const timing: RunTiming = { pollIntervalMs: POLL_INTERVAL_MS, pollTimeoutMs: deadlineMs + 60_000, answerTimeoutMs: deadlineMs + 60_000 };
  const origin = Date.now();
  const deadline = origin + deadlineMs;
  timeline.mark(`first connection starts (deadline +${seconds(deadlineMs)} from here)`);

  const chaos = startChaos({
    killEveryMs: options.killEveryMs,
    killTarget: options.killTarget,
    killWindowMs,
    serverRestartAtMs: options.serverRestartAtMs,
    serverStopSignal: options.serverStopSignal,
    pool,
    server,
    proxy,
    random: seededRandom(options.seed ^ 0x9e3779b9),
    timeline,
  });

  let ended = 0;
  const progress = setInterval(() => log(`chaos: +${seconds(Date.now() - origin)} ${ended}/${plans.length} connections ended`), PROGRESS_EVERY_MS);
  let records: DriveRecord[];
  try {
    const context = { connections, client, connection, listing, sandboxUrl: sandbox.url, timing, deadline, origin };
    records = await Promise.all(
      plans.map((plan) =>
        driveConnection(context, plan).finally(() => {
          ended += 1;
        }),
      ),
    );
  } finally {
    clearInterval(progress);
  }
  timeline.mark(`every connection ended or passed the deadline (${ended}/${plans.length} driven)`);
  const chaosRecord = await chaos.stop();

  // Data: against the sandbox directly, never through the proxy or a worker.
  const outcomes: ConnectionOutcome[] = await mapLimit(records, DATA_CHECK_CONCURRENCY, async (record) => {
    const judgement = judge(record);
    let dataProblems: string[] = [];
    try {
      dataProblems = await checkData(sandbox, record);
    } catch (error) {
      dataProblems = [`the data check could not run: ${error instanceof Error ? error.message : String(error)}`];
    }
    return { record, judgement, dataProblems };
  });
  const duplicates = await countDuplicates(sandbox.url, proxy.stats());
  const summary = summarize(outcomes, duplicates);
  const ok = passed(summary);

  const lines = renderReport({
    header,
    timeline: timeline.entries(),
    outcomes,
    chaos: chaosRecord,
    proxy: proxy.stats(),
    replyDelayMs: options.replyDelayMs,
    duplicates,
    unexpectedWorkerExits: pool.unexpectedExits,
    failedWorkerStarts: pool.failedStarts,
    summary,
  });
  const last = lines.pop() ?? '';
  lines.forEach((line) => log(line));

  await release(resources);
  if (options.keepLogs || !ok) log(`chaos: logs, bundle and the server's database kept in ${runDir}${options.keepLogs ? '' : ' (the run failed)'}`);
  else await rm(runDir, { recursive: true, force: true });
  log(last);
  return ok;
}

async function main(): Promise<number> {
  let options: ChaosOptions | undefined;
  try {
    options = parseChaosArgs(process.argv.slice(2), () => randomInt(0, 2 ** 31));
  } catch (error) {
    if (error instanceof ChaosArgumentError) {
      process.stderr.write(`chaos: ${error.message}\n\n${USAGE}\n`);
      return 2;
    }
    throw error;
  }
  if (options === undefined) {
    log(USAGE);
    return 0;
  }

  const resources: Resources = {};
  // Interrupted: nothing is worth draining, and closing the Temporal connection under the
  // drivers' retries would only add noise. The sandbox and proxy live in this process.
  const interrupted = (signal: NodeJS.Signals) => {
    process.stderr.write(`\nchaos: ${signal}: killing every process of the run${resources.runDir ? `; logs kept in ${resources.runDir}` : ''}\n`);
    killAllChildren();
    process.exit(130);
  };
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);
  try {
    return (await run(options, resources)) ? 0 : 1;
  } catch (error) {
    const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
    process.stderr.write(`chaos: the run could not complete: ${message}\n`);
    await release(resources);
    if (resources.runDir) process.stderr.write(`chaos: logs kept in ${resources.runDir}\n`);
    return 1;
  }
}

// Whatever happens, no dev server or worker outlives this process.
process.on('exit', killAllChildren);
main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`chaos: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
