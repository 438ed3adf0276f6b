/**
 * `npm run chaos`: proves that no connection is lost, fails or answers twice because workers crash,
 * the Temporal server restarts or the service is slow.
 *
 * Starts the dev server on a SQLite file, the sandbox behind a counting proxy that holds Authorize
 * replies, and worker processes; drives every flow of flows.ts through the pipeline client; SIGKILLs
 * workers at random and restarts the server once; then checks each connection's end against its
 * flow and its data against the sandbox's own; a connection still running at the deadline is
 * diagnosed from the server (diagnosis.ts). With --query-every-ms, every running connection's state
 * is also queried that often (a console's load), failures counted by gRPC code. Last, every history
 * of the run is fetched and replayed against the workflow bundle the workers ran (replay-run.ts),
 * and the run ends with one line:
 *   chaos: <n> connections, <n> completed as expected, <n> unexpected failures, <n> stuck, <n> duplicate answers, <n> data mismatches; replayed <n> histories, <n> nondeterminism, <n> replay errors; failed queries: <CODE n, ...|none>
 * Exit 0 only when unexpected failures, stuck, duplicates, mismatches, nondeterminism and replay
 * errors are all 0 (and every end is known); 2 for a bad argument; 1 otherwise. A kept run directory
 * holds the run's payload key (mode 0600) and its histories, so they can be replayed later.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomInt } from 'node:crypto';
import type { Client } from '@temporalio/client';
import type { PayloadSettings } from '../../src/codec/data-converter.js';
import { isKmsEncryption } from '../../src/codec/key-provider.js';
import { createSandbox } from '../../sandbox/server.js';
import { buildWorkflowBundle, driveAll, judgeAll, releaseRehearsal, startFleet, type RehearsalResources } from './fleet.js';
import { fetchScenarioListing, FLOWS, planConnections, type RunTiming } from './flows.js';
import { ChaosArgumentError, defaultDeadlineMs, parseChaosArgs, USAGE, type ChaosOptions } from './options.js';
import { startDevServer } from './dev-server-start.js';
import { killAllChildren } from './processes.js';
import { startChaosProxy } from './proxy.js';
import { seededRandom } from './random.js';
import { fetchHistories, listExecutions, saveHistories } from './histories.js';
import { replayHistories, replayPassed, type ReplayReport } from './replay-run.js';
import { passed, renderReport, stuckDiagnosisText } from './report.js';
import { replayHint, writeRunKey } from './run-key.js';
import { startChaos } from './schedule.js';
import { seconds, Timeline } from './timeline.js';

const POLL_INTERVAL_MS = 1_000;
/** Connections start one after another over this long (at most), so kills meet them at every stage. */
const START_STEP_MS = 400;
const MAX_START_SPREAD_MS = 30_000;
const STUCK_DIAGNOSIS_FILE = 'stuck-diagnosis.txt';
const HISTORIES_DIR = 'histories';

function log(line: string): void {
  process.stdout.write(`${line}\n`);
}

/** Everything started, so that any way out of the run stops it all. */
interface Resources extends RehearsalResources {
  /** The run's payload key, once written into runDir. */
  keyFile?: string;
}

function release(resources: Resources): Promise<void> {
  return releaseRehearsal('chaos', log, resources);
}

/** Where a kept run directory stands: its path, and its payload key when written. */
function keptNote(resources: Resources): string {
  return `${resources.runDir ?? ''}${resources.keyFile ? ` (payload key: ${resources.keyFile})` : ''}`;
}

/**
 * Every history of the run (connections and whatever they started, listed on the task queue, plus
 * any driven connection visibility missed), kept in the run directory and replayed against the
 * bundle the workers ran, decoded with their key and payload store.
 */
async function replayRun(
  context: { client: Client; taskQueue: string; runDir: string; bundlePath: string; payload: PayloadSettings; runTag: string; timeline: Timeline },
  workflowIds: readonly string[],
): Promise<ReplayReport> {
  const { client, timeline } = context;
  let executions = workflowIds.map((workflowId) => ({ workflowId }));
  let listingError: string | undefined;
  try {
    executions = await listExecutions(client, context.taskQueue, workflowIds);
  } catch (error) {
    // Without the listing, the driven connections are still fetched; what they started is not.
    listingError = error instanceof Error ? error.message : String(error);
  }
  const { histories, failures } = await fetchHistories(client, executions);
  await saveHistories(join(context.runDir, HISTORIES_DIR), histories);
  timeline.mark(
    `${histories.length} histories fetched (${failures.length} could not be)${listingError ? `; listing the task queue failed: ${listingError}` : ''}`,
  );
  const listingFailure = listingError
    ? [{ workflowId: `(task queue ${context.taskQueue})`, message: `the workflows it ran could not be listed: ${listingError}` }]
    : [];
  const report = await replayHistories(histories, [...listingFailure, ...failures], {
    code: { kind: 'bundle', path: context.bundlePath },
    payload: context.payload,
    replayName: `chaos-${context.runTag}`,
  });
  timeline.mark(`histories replayed: ${report.nondeterminism.length} nondeterminism, ${report.errors.length} replay errors`);
  return report;
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
    (options.killEveryMs > 0
      ? `a worker SIGKILL every ~${seconds(options.killEveryMs)} (${options.killTarget}) for ${seconds(killWindowMs)}; `
      : 'no kills; ') +
    (options.serverRestartAtMs > 0 ? `server restart (${options.serverStopSignal}) at +${seconds(options.serverRestartAtMs)}; ` : 'no server restart; ') +
    (options.queryEveryMs > 0 ? `every running connection's state queried every ${options.queryEveryMs} ms; ` : '') +
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

  const { server, serverStartMs } = await startDevServer(runDir, resources, timeline);
  timeline.mark(`dev server up at ${server.address} (SQLite ${join(runDir, 'temporal.sqlite')}) in ${seconds(serverStartMs)}`);

  const { pool, connection, client, connections, taskQueue, payload } = await startFleet(
    {
      name: 'chaos',
      runTag,
      runDir,
      bundlePath,
      temporalAddress: server.address,
      workers: options.workers,
      replyDelayMs: options.replyDelayMs,
      proxy,
      timeline,
    },
    resources,
  );
  // Beside the logs from the start: whatever way the run ends, a kept directory can be read and replayed.
  // Configured keys only: payloads a KMS wrapped are replayed with that KMS, not from a key file.
  if (payload.encryption && !isKmsEncryption(payload.encryption)) resources.keyFile = await writeRunKey(runDir, payload.encryption);

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

  const context = { connections, client, connection, listing, sandboxUrl: sandbox.url, timing, deadline, origin, queryEveryMs: options.queryEveryMs };
  const records = await driveAll(context, plans, log, 'chaos');
  timeline.mark(`every connection ended or passed the deadline (${records.length}/${plans.length} driven)`);
  const chaosRecord = await chaos.stop();

  const { outcomes, duplicates, summary } = await judgeAll(records, sandbox, proxy);
  const stuckText = stuckDiagnosisText(outcomes);
  let stuckDiagnosisFile: string | undefined;
  if (stuckText !== undefined) {
    stuckDiagnosisFile = join(runDir, STUCK_DIAGNOSIS_FILE);
    await writeFile(stuckDiagnosisFile, stuckText);
  }

  const started = records.filter((record) => record.startedAtMs !== undefined).map((record) => record.workflowId);
  const replay = await replayRun({ client, taskQueue, runDir, bundlePath, payload, runTag, timeline }, started);
  const ok = passed(summary) && replayPassed(replay);

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
    stuckDiagnosisFile,
    replay,
    queryEveryMs: options.queryEveryMs,
  });
  const last = lines.pop() ?? '';
  lines.forEach((line) => log(line));

  await release(resources);
  if (options.keepLogs || !ok) {
    log(`chaos: logs, bundle, histories and the server's database kept in ${runDir}${options.keepLogs ? '' : ' (the run failed)'}`);
    log(`chaos: ${replayHint(runDir)}`);
  } else await rm(runDir, { recursive: true, force: true });
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
    process.stderr.write(`\nchaos: ${signal}: killing every process of the run${resources.runDir ? `; logs kept in ${keptNote(resources)}` : ''}\n`);
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
    if (resources.runDir) process.stderr.write(`chaos: logs kept in ${keptNote(resources)}\n`);
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
