/**
 * Worker benchmark: N concurrent connections whose accounts detail stays pending for several polls,
 * on a real dev server, with the sandbox and one worker each in their own process.
 *
 * Prints per N: poll lag p50/p99 (actual minus scheduled poll time), completions, worker peak RSS,
 * worker CPU per poll, history events per connection and per poll; then the end-to-end overhead of a
 * cached accounts connection against the same calls made directly with the client, as a ratio of
 * medians with the quartiles as spread.
 *
 * Results are awaited with the pipeline client (`ConnectionsClient.result`, which rides out
 * Temporal's transient refusals), and counted honestly: a connection that did not complete is lost;
 * a wait that failed while its connection completed is a failed wait, printed apart.
 *
 * Poll lag is read from the server's own history timestamps: scheduled = TimerStarted + its
 * duration; actual = the WorkflowTaskStarted that follows TimerFired (the worker runs the poll's
 * local activity at once in that task). One clock, no worker-side instrumentation.
 *
 *   npx tsx bench/worker-polling.ts [--sizes 100,500,1000] [--polls 3] [--interval-ms 10000]
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import proto from '@temporalio/proto';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { bundleWorkflowCode } from '@temporalio/worker';
import { WORKFLOW_CODE } from '../src/workflow-code.js';
import { createAggregatorClient } from '../src/aggregator/client.js';
import { dataConverterFor } from '../src/codec/data-converter.js';
import { loadClientConfig } from '../src/config.js';
import { CONNECTION_SEARCH_ATTRIBUTES } from '../src/workflows/search-attributes.js';
import { ConnectionsClient, ResultWaitFailedError } from '../src/client/index.js';
import { temporalCliPath } from '../scripts/lib/temporal-binaries.js';

const EventType = proto.temporal.api.enums.v1.EventType;
const root = fileURLToPath(new URL('..', import.meta.url));

const { values: args } = parseArgs({
  options: {
    sizes: { type: 'string', default: '100,500,1000' },
    polls: { type: 'string', default: '3' },
    'interval-ms': { type: 'string', default: '10000' },
    'overhead-runs': { type: 'string', default: '20' },
  },
});
const sizes = args.sizes.split(',').map((size) => Number(size));
const pendingPolls = Number(args.polls);
const intervalMs = Number(args['interval-ms']);
const overheadRuns = Number(args['overhead-runs']);
if (sizes.some((size) => !Number.isInteger(size) || size < 1 || size > 5000) || !(pendingPolls >= 1 && pendingPolls <= 50) || !(intervalMs >= 100) || !(overheadRuns >= 1)) {
  process.stderr.write('usage: worker-polling.ts --sizes 100,500,1000 (1..5000 each) --polls 3 (1..50) --interval-ms 10000 (>= 100) --overhead-runs 20\n');
  process.exit(2);
}

const children: ChildProcess[] = [];
process.on('exit', () => children.forEach((child) => child.kill('SIGKILL')));

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
    server.once('error', reject);
  });
}

/** Spawns a tsx entry point and resolves when its output contains `ready`. */
async function startProcess(name: string, entry: string, env: Record<string, string>, ready: string, nodeArgs: string[] = []): Promise<ChildProcess> {
  const child = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', join(root, entry)], { env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes(ready)) resolve();
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-20_000)));
    child.once('exit', (code) => reject(new Error(`${name} exited with ${code}:\n${output.slice(-2000)}`)));
  });
  child.stdout?.removeAllListeners('data');
  child.stdout?.resume();
  return child;
}

/** WORKER_* settings and NODE_OPTIONS of this shell reach the worker, to compare tunings. */
function workerTuning(): Record<string, string> {
  return Object.fromEntries(Object.entries(process.env).filter((entry): entry is [string, string] => entry[1] !== undefined && (entry[0].startsWith('WORKER_') || entry[0] === 'NODE_OPTIONS')));
}

function rssMiB(pid: number): number {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

/** User + system CPU time of a process so far, in ms (Linux /proc; clock ticks are 100 Hz here). */
function cpuMs(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return NaN;
  }
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

function ms(timestamp: { seconds?: unknown; nanos?: number | null } | null | undefined): number {
  return Number(timestamp?.seconds ?? 0) * 1000 + (timestamp?.nanos ?? 0) / 1e6;
}

async function main(): Promise<void> {
  process.stdout.write(`worker benchmark: sizes ${sizes.join(', ')}, ${pendingPolls} pending polls each, interval ${intervalMs} ms, worker tuning ${JSON.stringify(workerTuning())}\n`);
  const env = await TestWorkflowEnvironment.createLocal({
    server: { executable: { type: 'existing-path', path: temporalCliPath() }, searchAttributes: [...CONNECTION_SEARCH_ATTRIBUTES], ip: '127.0.0.1', log: { format: 'pretty', level: 'error' } },
  });
  const bundleDir = await mkdtemp(join(tmpdir(), 'bench-bundle-'));
  try {
    const bundlePath = join(bundleDir, 'workflow-bundle.js');
    const quiet = { info() {}, warn() {}, error() {}, debug() {}, trace() {}, log() {} };
    await writeFile(bundlePath, (await bundleWorkflowCode({ ...WORKFLOW_CODE, logger: quiet })).code);

    const sandboxPort = await freePort();
    const sandboxUrl = `http://127.0.0.1:${sandboxPort}`;
    await startProcess('sandbox', 'src/sandbox/main.ts', { SANDBOX_PORT: String(sandboxPort) }, sandboxUrl);
    const taskQueue = `bench-${Date.now()}`;
    const worker = await startProcess(
      'worker',
      'src/worker.ts',
      {
        ...workerTuning(),
        TEMPORAL_ADDRESS: env.address,
        TEMPORAL_TASK_QUEUE: taskQueue,
        AGGREGATOR_BASE_URL: sandboxUrl,
        WORKER_WORKFLOW_BUNDLE: bundlePath,
        WORKER_METRICS_PORT: '0',
        LOG_LEVEL: 'INFO',
      },
      '"worker started"',
      // e.g. BENCH_WORKER_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" to profile the worker.
      process.env.BENCH_WORKER_NODE_ARGS?.split(' ').filter(Boolean) ?? [],
    );
    // The product's defaults, as the worker has them: payloads encrypted with the local key, large ones in the local store.
    const client = new Client({ connection: await Connection.connect({ address: env.address }), dataConverter: dataConverterFor(loadClientConfig({ TEMPORAL_ADDRESS: env.address })) });
    const connections = new ConnectionsClient({ client, taskQueue: '', address: env.address });
    const customerId = `bench-${Date.now()}`;

    async function savedLogins(username: string, count: number): Promise<string[]> {
      const response = await fetch(`${sandboxUrl}/sandbox/${customerId}/logins`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username }) });
      const { LoginId } = (await response.json()) as { LoginId: string };
      return Array.from({ length: count }, () => LoginId);
    }

    async function runConnection(workflowId: string, loginId: string, timing: { pollIntervalMs: number }) {
      const handle = await client.workflow.start('connectionWorkflow', {
        taskQueue,
        workflowId,
        args: [{ customerId, session: { kind: 'cached', loginId }, products: { accountsDetail: {} }, timing }],
      });
      return handle;
    }

    // Warm-up: bundle loaded, connections open.
    const [warmLogin] = await savedLogins('pending_polls_0', 1);
    const warm = await runConnection(`warm-${Date.now()}`, warmLogin ?? '', { pollIntervalMs: intervalMs });
    await warm.result();
    const baseEvents = (await warm.fetchHistory()).events?.length ?? 0;

    const rows: string[] = [];
    const summaries: string[] = [];
    let held = true;
    for (const size of sizes) {
      if (!held) break;
      // Each connection needs its own login so the sandbox counts polls per session (one session each anyway).
      const logins = await savedLogins(`pending_polls_${pendingPolls}`, size);
      let peakRss = rssMiB(worker.pid ?? 0);
      const sampler = setInterval(() => (peakRss = Math.max(peakRss, rssMiB(worker.pid ?? 0))), 250);
      const started = Date.now();
      const ids = logins.map((_, index) => `bench-${size}-${started}-${index}`);
      for (let i = 0; i < ids.length; i += 50) {
        await Promise.all(ids.slice(i, i + 50).map((id, j) => runConnection(id, logins[i + j] ?? '', { pollIntervalMs: intervalMs })));
      }
      const cpuBefore = cpuMs(worker.pid ?? 0);
      let transientRetries = 0;
      const results = await Promise.allSettled(ids.map((id) => connections.result(id, { onRetry: () => (transientRetries += 1) })));
      clearInterval(sampler);
      const workerCpuMs = cpuMs(worker.pid ?? 0) - cpuBefore;
      // A failed wait is not a lost connection: ask Temporal how each unanswered one actually ended.
      let failedWaits = 0;
      let lost = 0;
      for (const [index, result] of results.entries()) {
        if (result.status === 'fulfilled') continue;
        if (result.reason instanceof ResultWaitFailedError) {
          const ended = await connections.describe(ids[index] ?? '');
          if (ended.executionStatus === 'COMPLETED') {
            failedWaits += 1;
            continue;
          }
        }
        lost += 1;
      }
      const completed = size - lost;

      const lags: number[] = [];
      /** Lags by poll number: the first polls overlap the start burst; later ones are steady state. */
      const lagsByPoll = new Map<number, number[]>();
      let events = 0;
      let polls = 0;
      for (let i = 0; i < ids.length; i += 50) {
        const histories = await Promise.all(ids.slice(i, i + 50).map((id) => client.workflow.getHandle(id).fetchHistory()));
        for (const history of histories) {
          const list = history.events ?? [];
          events += list.length;
          const scheduled = new Map<string, number>();
          let firedAt: number | undefined;
          let pollNumber = 0;
          for (const event of list) {
            if (event.eventType === EventType.EVENT_TYPE_TIMER_STARTED) {
              scheduled.set(String(event.eventId), ms(event.eventTime) + ms(event.timerStartedEventAttributes?.startToFireTimeout));
            } else if (event.eventType === EventType.EVENT_TYPE_TIMER_FIRED) {
              firedAt = scheduled.get(String(event.timerFiredEventAttributes?.startedEventId));
            } else if (event.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED && firedAt !== undefined) {
              const lag = ms(event.eventTime) - firedAt;
              lags.push(lag);
              pollNumber += 1;
              lagsByPoll.set(pollNumber, [...(lagsByPoll.get(pollNumber) ?? []), lag]);
              polls += 1;
              firedAt = undefined;
            }
          }
        }
      }
      lags.sort((a, b) => a - b);
      const p50 = percentile(lags, 50);
      const p99 = percentile(lags, 99);
      // A connection with no pending poll costs `baseEvents`; the rest is the polls' cost.
      const perPoll = (events / size - baseEvents) / pendingPolls;
      const row = `N=${String(size).padStart(5)}  completed ${completed}/${size}  lost ${lost}  failed waits ${failedWaits} (transient retries ${transientRetries})  worker CPU/poll ${(workerCpuMs / Math.max(polls, 1)).toFixed(2)} ms  poll lag p50 ${p50.toFixed(0)} ms p99 ${p99.toFixed(0)} ms  worker peak RSS ${peakRss.toFixed(0)} MiB  history events/connection ${(events / size).toFixed(1)} (${perPoll.toFixed(1)}/poll)  polls ${polls}  wall ${((Date.now() - started) / 1000).toFixed(1)} s`;
      rows.push(row);
      process.stdout.write(`${row}\n`);
      const byPoll = [...lagsByPoll.entries()].map(([n, values]) => {
        values.sort((a, b) => a - b);
        return `poll ${n}: p50 ${percentile(values, 50).toFixed(0)} / p99 ${percentile(values, 99).toFixed(0)} ms`;
      });
      process.stdout.write(`         lag by poll number: ${byPoll.join(' · ')}\n`);
      summaries.push(`N=${size}: lag p99 ${p99.toFixed(0)} ms, ${completed}/${size}, RSS ${peakRss.toFixed(0)} MiB, ${perPoll.toFixed(1)} events/poll`);
      held = lost === 0 && p99 < 1000 && peakRss < 512;
    }

    // Overhead: the same cached accounts retrieval, through a workflow vs directly with the client.
    const [fastLogin] = await savedLogins('pending_polls_0', 1);
    const direct = createAggregatorClient({ baseUrl: sandboxUrl, customerId });
    const directTimes: number[] = [];
    const workflowTimes: number[] = [];
    for (let run = 0; run < overheadRuns; run += 1) {
      let t = performance.now();
      const session = await direct.authorizeCached(fastLogin ?? '');
      if (session.kind !== 'ready') throw new Error('cached authorize did not open a session');
      const detail = await direct.getAccountsDetail(session.requestId, {});
      if (detail.kind !== 'ready') throw new Error('accounts detail unexpectedly pending');
      directTimes.push(performance.now() - t);
      t = performance.now();
      await (await runConnection(`overhead-${Date.now()}-${run}`, fastLogin ?? '', { pollIntervalMs: intervalMs })).result();
      workflowTimes.push(performance.now() - t);
    }
    directTimes.sort((a, b) => a - b);
    workflowTimes.sort((a, b) => a - b);
    const directMedian = percentile(directTimes, 50);
    const workflowMedian = percentile(workflowTimes, 50);
    const spread = (sorted: number[]) => `p25 ${percentile(sorted, 25).toFixed(1)} / p75 ${percentile(sorted, 75).toFixed(1)}`;
    process.stdout.write(
      `overhead: cached accounts connection median ${workflowMedian.toFixed(1)} ms (${spread(workflowTimes)}) through the workflow vs ${directMedian.toFixed(1)} ms (${spread(directTimes)}) direct (${overheadRuns} runs each): ratio ${(workflowMedian / directMedian).toFixed(1)}x\n`,
    );
    process.stdout.write(`summary: ${summaries.join(' · ')} · overhead ${(workflowMedian / directMedian).toFixed(1)}x (${workflowMedian.toFixed(0)} vs ${directMedian.toFixed(0)} ms)\n`);
    await client.connection.close();
  } finally {
    // SIGTERM drains the worker; wait for it so profiles and logs are flushed.
    await Promise.all(children.map((child) => new Promise((resolve) => (child.exitCode !== null ? resolve(null) : (child.once('exit', resolve), child.kill('SIGTERM'))))));
    await env.teardown();
    await rm(bundleDir, { recursive: true, force: true });
  }
}

await main();
process.exit(0);
