/**
 * The curve of waiting connections (issue 64, item 3): N live connections held awaiting an answer
 * at once on one worker process with the product's defaults (as `npm start` runs it: the compiled
 * worker, the SDK's workflow cache sized from the heap unless WORKER_MAX_CACHED_WORKFLOWS is set in
 * this shell), against the dev server with its history in a SQLite file, the sandbox in its own
 * process behind the service clock (bench/service-clock.ts).
 *
 * For each N, a fresh worker: it starts N live connections of the sandbox's `security_question`
 * user, `--concurrency` at a time, and waits until visibility counts N of them AwaitingAnswer (the
 * start time). While all N wait it reads the worker's RSS (/proc) and heaps (Node's diagnostic
 * report: the main thread and the workflow threads, used and not collected first), and over `--hold` seconds the server's CPU and
 * disk writes (/proc/<pid>/io) and its database's size. Then, one at a time, it answers `--probes`
 * waiting connections spread over the N (the answer's round trip through the client, its query of
 * the challenge set included, minus the service's own Authorize time) and starts `--probes` more
 * live connections, timing each to its first challenge. Last it answers every connection in the
 * order they started and awaits every result: a connection that did not complete is lost, a wait
 * that failed while its connection completed is a failed wait, printed apart.
 *
 * The service forgets an unused session after about 8 minutes (then the connection ends
 * SessionExpired, as it should). Starting 10,000 live connections takes this 2-core machine longer
 * than that (about 11 a second with the server on the same cores), so the sandbox here keeps a
 * session for SESSION_IDLE_S (SANDBOX_SESSION_IDLE_S): the curve measures what the worker and the
 * server hold, and N waiting at once against the real service also means N arriving within 8 minutes.
 * For the same reason its connections keep a challenge open SESSION_IDLE_S instead of the product's
 * 15 minutes (timing.answerTimeoutMs): answering 10,000 in order outlasts starting them.
 *
 *   npm run bench:waiting -- [--sizes 1000,3000,10000] [--probes 50] [--hold 60] [--concurrency 50]
 */
import type { ChildProcess } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client, Connection } from '@temporalio/client';
import { dataConverterFor } from '../src/codec/data-converter.js';
import { loadClientConfig } from '../src/settings/client.js';
import { ConnectionsClient } from '../src/client/index.js';
import { countEndings } from './connection-endings.js';
import { CONNECTION_WORKFLOW_TYPE } from '../src/contract/connection/connection-definitions.js';
import { ConnectionStatusKey } from '../src/contract/search-attributes.js';
import { SANDBOX_PASSWORD } from '../sandbox/scenarios.js';
import { startDevEnvironment } from '../scripts/lib/dev-environment.js';
import { startServiceClock, type ServiceClock } from './service-clock.js';
import {
  benchDynamicConfig,
  cpuMs,
  percentile,
  prepareBenchWorker,
  rssBytes,
  startSandboxProcess,
  stopAllProcesses,
  stopProcess,
  workerNodeArgs,
  workerTuning,
} from './bench-processes.js';
import { heapReportNodeArgs, readHeaps, type HeapReading } from './waiting-curve/heap-report.js';
import { parseWaitingCurveArgs, USAGE, WaitingCurveArgumentError, type WaitingCurveOptions } from './waiting-curve/options.js';

const PROMPT = 'What city were you born in?';
const RIGHT_ANSWER = { responses: { [PROMPT]: ['Montreal'] } };
const MIB = 2 ** 20;
/** How long the sandbox keeps an unused session here (the service: 480 s). */
const SESSION_IDLE_S = 3_600;

function readOptions(): WaitingCurveOptions {
  try {
    const options = parseWaitingCurveArgs(process.argv.slice(2));
    if (options) return options;
    process.stdout.write(USAGE);
    process.exit(0);
  } catch (error) {
    if (!(error instanceof WaitingCurveArgumentError)) throw error;
    process.stderr.write(`bench:waiting: ${error.message}\n\n${USAGE}`);
    process.exit(2);
  }
}

/** Bytes the process has caused to be written to storage so far (/proc/<pid>/io). */
function writtenBytes(pid: number): number {
  const match = /write_bytes:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/io`, 'utf8'));
  return match ? Number(match[1]) : NaN;
}

/** The SQLite database with its write-ahead log. */
function databaseBytes(dbFile: string): number {
  return [dbFile, `${dbFile}-wal`].reduce((sum, path) => {
    try {
      return sum + statSync(path).size;
    } catch {
      return sum;
    }
  }, 0);
}

const fixed = (value: number, digits = 0) => (Number.isFinite(value) ? value.toFixed(digits) : 'n/a');
const sorted = (values: readonly number[]) => [...values].sort((a, b) => a - b);

/** Runs `work` over `items`, `concurrency` at a time, in order; resolves with every outcome. */
async function inBatches<T, R>(items: readonly T[], concurrency: number, work: (item: T) => Promise<R>): Promise<PromiseSettledResult<R>[]> {
  const outcomes: PromiseSettledResult<R>[] = [];
  for (let i = 0; i < items.length; i += concurrency) outcomes.push(...(await Promise.allSettled(items.slice(i, i + concurrency).map(work))));
  return outcomes;
}

interface CurvePoint {
  readonly size: number;
  readonly rssBytes: number;
  readonly answerP99Ms: number;
  readonly lost: number;
  readonly failedWaits: number;
}

async function main(): Promise<void> {
  const options = readOptions();
  const runDir = await mkdtemp(join(tmpdir(), 'bench-waiting-'));
  const reportDir = join(runDir, 'reports');
  await mkdir(reportDir);
  const dbFile = join(runDir, 'temporal.db');
  process.stdout.write(
    `waiting curve: sizes ${options.sizes.join(', ')}, ${options.probes} probes, hold ${options.holdMs / 1000} s, ${options.concurrency} at once, sandbox sessions kept ${SESSION_IDLE_S} s unused (the service: about 480); ` +
      `worker tuning ${JSON.stringify(workerTuning())} ${workerNodeArgs().join(' ')}\n`,
  );
  const benchWorker = await prepareBenchWorker(options.workerRuntime);
  const env = await startDevEnvironment({ dynamicConfig: benchDynamicConfig(), dbFile });
  const serverPid = env.devServer.pid ?? 0;
  let clock: ServiceClock | undefined;
  try {
    const sandboxUrl = await startSandboxProcess({ SANDBOX_SESSION_IDLE_S: String(SESSION_IDLE_S) });
    clock = await startServiceClock(sandboxUrl);
    const serviceClock = clock;
    const client = new Client({
      connection: await Connection.connect({ address: env.address }),
      dataConverter: dataConverterFor(loadClientConfig({ TEMPORAL_ADDRESS: env.address })),
    });
    const customerId = `waiting-${Date.now()}`;
    const liveInput = {
      customerId,
      session: { kind: 'live' as const, institution: 'SandboxBank', username: 'security_question', password: SANDBOX_PASSWORD, save: false },
      products: { accountsDetail: {} },
      // The product gives an unanswered challenge 15 minutes (ChallengeAbandoned after). Answering
      // 10,000 in order here takes longer than starting them, so the last would pass it: held as
      // long as the sandbox's sessions, so the curve counts what the worker holds, not that window.
      timing: { answerTimeoutMs: SESSION_IDLE_S * 1000 },
    };

    const points: CurvePoint[] = [];
    for (const size of options.sizes) {
      const taskQueue = `waiting-${size}-${Date.now()}`;
      const connections = new ConnectionsClient({ client, taskQueue, address: env.address });
      const worker: ChildProcess = await benchWorker.start(
        {
          ...workerTuning(),
          TEMPORAL_ADDRESS: env.address,
          TEMPORAL_TASK_QUEUE: taskQueue,
          AGGREGATOR_BASE_URL: serviceClock.url,
          WORKER_METRICS_PORT: '0',
          LOG_LEVEL: 'INFO',
        },
        heapReportNodeArgs(reportDir),
      );
      const workerPid = worker.pid ?? 0;

      // Warm-up: the bundle loaded, the connections open, the path compiled; not counted.
      const key = (application: string) => `connection-${customerId}:${taskQueue}-${application}`;
      const warm = await connections.startAndAwaitFirstStep(key('warm'), liveInput);
      await connections.answer(warm.workflowId, RIGHT_ANSWER);
      await connections.result(warm.workflowId);
      const idleRss = rssBytes(workerPid);
      const idleHeaps = await readHeaps(workerPid, reportDir);

      const waitingQuery = `WorkflowType = ${JSON.stringify(CONNECTION_WORKFLOW_TYPE)} AND TaskQueue = ${JSON.stringify(taskQueue)} AND ExecutionStatus = "Running" AND ${ConnectionStatusKey.name} = "AwaitingAnswer"`;
      const endedQuery = `WorkflowType = ${JSON.stringify(CONNECTION_WORKFLOW_TYPE)} AND TaskQueue = ${JSON.stringify(taskQueue)} AND ExecutionStatus != "Running"`;
      const count = async (query: string) => Number((await client.workflow.count(query)).count);

      const startedAt = Date.now();
      const startCpuFrom = { worker: cpuMs(workerPid), server: cpuMs(serverPid) };
      const keys = Array.from({ length: size }, (_, index) => key(String(index)));
      const starts = await inBatches(keys, options.concurrency, (business) => connections.start(business, liveInput));
      const startRefusals = starts.filter((outcome) => outcome.status === 'rejected');
      const workflowIds = starts.flatMap((outcome) => (outcome.status === 'fulfilled' ? [outcome.value.workflowId] : []));
      // The warm-up ended before the starts; anything else ended while it should wait is a failure.
      const endedBefore = await count(endedQuery);
      let waiting = 0;
      while ((waiting = await count(waitingQuery)) < workflowIds.length) {
        const ended = (await count(endedQuery)) - endedBefore;
        if (ended > 0) throw new Error(`N=${size}: ${ended} connection(s) ended before they were answered (${waiting} waiting)`);
        if (Date.now() - startedAt > options.startDeadlineMs)
          throw new Error(
            `N=${size}: only ${waiting} of ${workflowIds.length} awaiting an answer after ${options.startDeadlineMs / 1000} s (--start-deadline)`,
          );
        await sleep(500);
      }
      const startSeconds = (Date.now() - startedAt) / 1000;
      // What bounds the start rate: each process's share of a core while they started.
      const startCpu = (pid: number, from: number) => fixed((cpuMs(pid) - from) / 10 / startSeconds);
      const startShares = `worker ${startCpu(workerPid, startCpuFrom.worker)}%, server ${startCpu(serverPid, startCpuFrom.server)}% of a core`;

      // All N wait: the worker's memory, then the server over the hold.
      const waitingRss = rssBytes(workerPid);
      const waitingHeaps: HeapReading = await readHeaps(workerPid, reportDir);
      const holdFrom = { t: Date.now(), serverCpu: cpuMs(serverPid), workerCpu: cpuMs(workerPid), written: writtenBytes(serverPid) };
      await sleep(options.holdMs);
      const holdSeconds = (Date.now() - holdFrom.t) / 1000;
      const serverCpuPercent = ((cpuMs(serverPid) - holdFrom.serverCpu) / 10 / holdSeconds).toFixed(1);
      const workerCpuPercent = ((cpuMs(workerPid) - holdFrom.workerCpu) / 10 / holdSeconds).toFixed(1);
      const writesKiBs = (writtenBytes(serverPid) - holdFrom.written) / 1024 / holdSeconds;
      const dbMiB = databaseBytes(dbFile) / MIB;
      const peakRss = Math.max(waitingRss, rssBytes(workerPid));

      // The answer, one at a time, on waiting connections spread over the N (evicted ones replay).
      const answerMs: number[] = [];
      const answered = new Set<string>();
      for (let probe = 0; probe < options.probes; probe += 1) {
        const workflowId = workflowIds[Math.floor((probe * workflowIds.length) / options.probes)] ?? '';
        const callsFrom = serviceClock.calls.length;
        const sent = performance.now();
        const outcome = await connections.answer(workflowId, RIGHT_ANSWER);
        const roundTrip = performance.now() - sent;
        if (outcome.outcome !== 'accepted') throw new Error(`N=${size}: the answer to ${workflowId} was ${outcome.outcome}: ${JSON.stringify(outcome)}`);
        const authorize = serviceClock.calls.slice(callsFrom).find((call) => call.kind === 'authorize' && call.answer);
        answerMs.push(roundTrip - (authorize ? authorize.end - authorize.start : 0));
        answered.add(workflowId);
      }
      // The first challenge of a live user who arrives while N wait.
      const firstChallengeMs: number[] = [];
      for (let probe = 0; probe < options.probes; probe += 1) {
        const sent = performance.now();
        const first = await connections.startAndAwaitFirstStep(key(`arrives-${probe}`), liveInput);
        firstChallengeMs.push(performance.now() - sent);
        if (first.step !== 'challenge') throw new Error(`N=${size}: a live connection began with ${first.step}, not a challenge`);
        workflowIds.push(first.workflowId);
      }

      // Every connection answered in the order it started, and every result awaited.
      // A connection asked again (a session the service forgot, a rejected answer) is answered again, at most three times.
      let askedAgain = 0;
      const answerUntilAccepted = async (id: string): Promise<void> => {
        for (let attempt = 1; ; attempt += 1) {
          const outcome = await connections.answer(id, RIGHT_ANSWER);
          if (outcome.outcome === 'accepted' || outcome.outcome === 'ended' || !outcome.nextChallengeSet || attempt === 3) {
            if (outcome.outcome !== 'accepted') throw new Error(`the answer to ${id} was ${outcome.outcome} (attempt ${attempt})`);
            return;
          }
          askedAgain += 1;
        }
      };
      const answers = await inBatches(
        workflowIds.filter((id) => !answered.has(id)),
        options.concurrency,
        answerUntilAccepted,
      );
      const answerRefusals = answers.filter((outcome) => outcome.status === 'rejected').length;
      // Why, by reason with the workflow's id taken out, and the first connection of each: a figure
      // of lost connections is only worth its causes.
      const refusalReasons = new Map<string, { count: number; first: string }>();
      const pending = workflowIds.filter((id) => !answered.has(id));
      for (const [index, outcome] of answers.entries()) {
        if (outcome.status !== 'rejected') continue;
        const id = pending[index] ?? '?';
        const reason = (outcome.reason instanceof Error ? `${outcome.reason.name}: ${outcome.reason.message}` : String(outcome.reason)).replaceAll(id, '<id>');
        const seen = refusalReasons.get(reason);
        refusalReasons.set(reason, { count: (seen?.count ?? 0) + 1, first: seen?.first ?? id });
      }
      let transientRetries = 0;
      const results = await inBatches(workflowIds, 500, (id) => connections.result(id, { onRetry: () => (transientRetries += 1) }));
      const endings = await countEndings(connections, workflowIds, results);
      const lost = startRefusals.length + endings.lost;
      const { failedWaits, lostBy: lostStatuses } = endings;
      await stopProcess(worker);

      const answerSorted = sorted(answerMs);
      const firstSorted = sorted(firstChallengeMs);
      const perConnectionKiB = (bytes: number) => fixed(bytes / size / 1024, 1);
      const heapBytes = waitingHeaps.mainBytes + waitingHeaps.threadsBytes;
      const idleHeapBytes = idleHeaps.mainBytes + idleHeaps.threadsBytes;
      const total = workflowIds.length + startRefusals.length;
      process.stdout.write(
        `waiting N=${size}: started in ${fixed(startSeconds, 1)} s (${fixed(size / startSeconds, 1)} a second, ${options.concurrency} at once; ${startShares}) · ` +
          `worker RSS ${fixed(waitingRss / MIB)} MiB (${fixed(idleRss / MIB)} idle, +${perConnectionKiB(waitingRss - idleRss)} KiB a waiting connection; peak ${fixed(peakRss / MIB)}), ` +
          `heap ${fixed(heapBytes / MIB)} MiB (${fixed(idleHeapBytes / MIB)} idle, +${perConnectionKiB(heapBytes - idleHeapBytes)} KiB each; workflow threads ${fixed(waitingHeaps.threadsBytes / MIB)}, main ${fixed(waitingHeaps.mainBytes / MIB)}) · ` +
          `while they wait (${fixed(holdSeconds)} s): server CPU ${serverCpuPercent}% of a core, worker ${workerCpuPercent}%, server disk writes ${fixed(writesKiBs, 1)} KiB/s, database ${fixed(dbMiB)} MiB · ` +
          `answer p50 ${fixed(percentile(answerSorted, 50), 1)} ms p99 ${fixed(percentile(answerSorted, 99), 1)} ms (${answerMs.length} waiting connections, minus the service's time) · ` +
          `first challenge p50 ${fixed(percentile(firstSorted, 50), 1)} ms p99 ${fixed(percentile(firstSorted, 99), 1)} ms (${firstChallengeMs.length} arriving) · ` +
          `completed ${total - lost}/${total} lost ${lost} failed waits ${failedWaits} (transient retries ${transientRetries}) asked again ${askedAgain}, answers not accepted ${answerRefusals}\n`,
      );
      for (const [reason, { count, first }] of refusalReasons)
        process.stdout.write(`waiting N=${size}: answer not accepted ${count}x: ${reason} (first ${first})\n`);
      for (const [why, count] of lostStatuses) process.stdout.write(`waiting N=${size}: lost ${count}x: ${why}\n`);
      points.push({ size, rssBytes: peakRss, answerP99Ms: percentile(answerSorted, 99), lost, failedWaits });
    }

    const first = points[0];
    const last = points.at(-1);
    if (first && last) {
      const lost = points.reduce((sum, point) => sum + point.lost, 0);
      const failedWaits = points.reduce((sum, point) => sum + point.failedWaits, 0);
      process.stdout.write(
        `waiting curve: at N=${last.size} worker peak RSS ${fixed(last.rssBytes / MIB)} MiB, answer p99 ${fixed(last.answerP99Ms / first.answerP99Ms, 2)}x N=${first.size}'s; ` +
          `lost ${lost}, failed waits ${failedWaits}\n`,
      );
    }
    await client.connection.close();
  } finally {
    await stopAllProcesses();
    await clock?.close();
    await env.teardown();
    await benchWorker.remove();
    await rm(runDir, { recursive: true, force: true });
  }
}

await main();
process.exit(0);
