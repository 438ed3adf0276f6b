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
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomInt } from 'node:crypto';
import type { Connection } from '@temporalio/client';
import { createSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { buildWorkflowBundle, closeEach, driveAll, judgeAll, startFleet } from './fleet.js';
import { fetchScenarioListing, FLOWS, planConnections, type RunTiming } from './flows.js';
import { ChaosArgumentError, defaultDeadlineMs, parseChaosArgs, USAGE, type ChaosOptions } from './options.js';
import { DevServer } from '../lib/dev-server.js';
import { killAllChildren, type WorkerPool } from './processes.js';
import { startChaosProxy, type ChaosProxy } from './proxy.js';
import { seededRandom } from './random.js';
import { passed, renderReport } from './report.js';
import { startChaos } from './schedule.js';
import { seconds, Timeline } from './timeline.js';

const POLL_INTERVAL_MS = 1_000;
/** Connections start one after another over this long (at most), so kills meet them at every stage. */
const START_STEP_MS = 400;
const MAX_START_SPREAD_MS = 30_000;

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
  await closeEach('chaos', log, [
    () => resources.pool?.close(),
    () => resources.connection?.close(),
    () => resources.server?.close(),
    () => resources.proxy?.close(),
    () => resources.sandbox?.close(),
  ]);
}

async function run(options: ChaosOptions, resources: Resources): Promise<boolean> {
  const timeline = new Timeline();
  const runTag = `${Date.now().toString(36)}${options.seed.toString(36)}`.slice(-10);
  const startSpreadMs = Math.min(MAX_START_SPREAD_MS, START_STEP_MS * Math.max(0, options.connections - 1));
  // Kills while connections start and for two intervals more: two to four kills in the default run.
  const killWindowMs = options.killEveryMs > 0 ? startSpreadMs + 2 * options.killEveryMs : 0;
  const deadlineMs = options.deadlineMs ?? defaultDeadlineMs(killWindowMs, options.connections, options.replyDelayMs);

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

  const bundlePath = await buildWorkflowBundle(runDir);
  timeline.mark('workflow bundle built');

  resources.server = await DevServer.create({
    dbFile: join(runDir, 'temporal.sqlite'),
    logPath: join(runDir, 'dev-server.log'),
    onUnexpectedExit: (how) => timeline.mark(`dev server exited on its own (${how}); see ${join(runDir, 'dev-server.log')}`),
  });
  const server = resources.server;
  const serverStartMs = await server.start();
  timeline.mark(`dev server up at ${server.address} (SQLite ${join(runDir, 'temporal.sqlite')}) in ${seconds(serverStartMs)}`);

  const { pool, connection, client, connections } = await startFleet(
    { name: 'chaos', runTag, runDir, bundlePath, temporalAddress: server.address, workers: options.workers, replyDelayMs: options.replyDelayMs, proxy, timeline },
    resources,
  );

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

  const context = { connections, client, connection, listing, sandboxUrl: sandbox.url, timing, deadline, origin };
  const records = await driveAll(context, plans, log, 'chaos');
  timeline.mark(`every connection ended or passed the deadline (${records.length}/${plans.length} driven)`);
  const chaosRecord = await chaos.stop();

  const { outcomes, duplicates, summary } = await judgeAll(records, sandbox, proxy);
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
