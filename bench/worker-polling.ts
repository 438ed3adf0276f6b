/**
 * Worker benchmark: N concurrent connections whose accounts detail stays pending for several polls,
 * on a real dev server, with the sandbox and the worker each in their own process; each polling
 * strategy (timer, activity-retry, heartbeat) in turn, same N, a fresh worker each.
 *
 * Prints per strategy and N: completions (lost connections and failed waits apart), poll lag p50/p99,
 * worker and server CPU per poll after the start burst, worker peak RSS, history events per poll;
 * then the answer round trip (update with an answer → outcome with the next challenge set, minus the
 * service's own time for that Authorize) and the overhead of a cached accounts connection against
 * the same calls made directly, as medians with their spread.
 *
 * Results are awaited with the pipeline client (`ConnectionsClient.result`, which rides out
 * Temporal's transient refusals), and counted honestly: a connection that did not complete is lost;
 * a wait that failed while its connection completed is a failed wait, printed apart.
 *
 * Poll lag and the window after the start burst are read from the service's side (bench/service-clock.ts: a proxy
 * before the sandbox), so strategies whose polls never reach the history are measured like the rest:
 * lag = time from a 202 answer to the next request of that operation, minus the interval. Worker
 * CPU per poll = the worker's CPU time over the polls made after the start burst (from the moment
 * every connection's first request was answered to the last call; completions included); the
 * figure with the starts is printed beside it, and the marginal CPU per poll: (CPU of the N connections
 * with P polls each − CPU of N connections with one poll each) / (N·(P − 1)). Both runs pay the
 * same per-connection costs (start, completion, and the replay of a connection evicted from a small
 * workflow cache), so what remains is the polls' own cost; with --polls 1 the baseline is N
 * connections ready at once, as bench/sdk-floor.ts measures Temporal's own floor.
 *
 *   npx tsx bench/worker-polling.ts [--sizes 2000] [--strategies timer,activity-retry,heartbeat]
 *     [--polls 6] [--interval-ms 10000] [--answers 100] [--overhead-runs 30]
 */
import type { ChildProcess } from 'node:child_process';
import { parseArgs } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import { createAggregatorClient } from '../src/aggregator/client.js';
import { dataConverterFor } from '../src/codec/data-converter.js';
import { loadClientConfig } from '../src/settings/client.js';
import { POLL_STRATEGIES, type PollStrategy } from '../src/contract/connection/connection-input.js';
import { SANDBOX_PASSWORD } from '../sandbox/scenarios.js';
import { pollLags, startServiceClock } from './service-clock.js';
import {
  cpuMs,
  percentile,
  prepareBenchWorker,
  rssBytes,
  startBenchServer,
  startSandboxProcess,
  stopAllProcesses,
  stopProcess,
  workerNodeArgs,
  workerTuning,
} from './bench-processes.js';
import { ConnectionsClient } from '../src/client/index.js';
import { countEndings } from './connection-endings.js';

const { values: args } = parseArgs({
  options: {
    sizes: { type: 'string', default: '2000' },
    strategies: { type: 'string', default: POLL_STRATEGIES.join(',') },
    polls: { type: 'string', default: '6' },
    'interval-ms': { type: 'string', default: '10000' },
    answers: { type: 'string', default: '100' },
    'overhead-runs': { type: 'string', default: '30' },
  },
});
const sizes = args.sizes.split(',').map((size) => Number(size));
const strategies = args.strategies.split(',') as PollStrategy[];
const pendingPolls = Number(args.polls);
const intervalMs = Number(args['interval-ms']);
const answerRuns = Number(args.answers);
const overheadRuns = Number(args['overhead-runs']);
if (
  sizes.some((size) => !Number.isInteger(size) || size < 1 || size > 5000) ||
  strategies.some((strategy) => !POLL_STRATEGIES.includes(strategy)) ||
  !(pendingPolls >= 1 && pendingPolls <= 50) ||
  !(intervalMs >= 100) ||
  !(answerRuns >= 0) ||
  !(overheadRuns >= 0)
) {
  process.stderr.write(
    `usage: worker-polling.ts --sizes 2000 (1..5000 each) --strategies ${POLL_STRATEGIES.join(',')} --polls 6 (1..50) --interval-ms 10000 (>= 100) --answers 100 --overhead-runs 30\n`,
  );
  process.exit(2);
}

/** 0 once the process is gone, so a peak read over its life keeps its last figure. */
function rssMiB(pid: number): number {
  return (rssBytes(pid) || 0) / 2 ** 20;
}

/** CPU at time `t`, interpolated between samples. */
function cpuAt(samples: readonly { t: number; cpu: number }[], t: number): number {
  const after = samples.findIndex((sample) => sample.t >= t);
  if (after <= 0) return samples[Math.max(after, 0)]?.cpu ?? NaN;
  const a = samples[after - 1];
  const b = samples[after];
  if (!a || !b) return NaN;
  return a.cpu + ((b.cpu - a.cpu) * (t - a.t)) / Math.max(b.t - a.t, 1);
}

const fixed = (value: number, digits = 0) => (Number.isFinite(value) ? value.toFixed(digits) : 'n/a');

async function main(): Promise<void> {
  process.stdout.write(
    `worker benchmark: sizes ${sizes.join(', ')}, strategies ${strategies.join(', ')}, ${pendingPolls} pending polls each, interval ${intervalMs} ms, worker tuning ${JSON.stringify(workerTuning())} ${workerNodeArgs().join(' ')}\n`,
  );
  const benchWorker = await prepareBenchWorker();
  process.stdout.write(`worker runtime: ${benchWorker.runtime}\n`);
  const env = await startBenchServer();
  const serverPid = env.devServer.pid ?? 0;
  let clock: Awaited<ReturnType<typeof startServiceClock>> | undefined;
  try {
    const sandboxUrl = await startSandboxProcess();
    clock = await startServiceClock(sandboxUrl);
    const serviceClock = clock;

    /** A fresh worker per strategy: its RSS and CPU are that strategy's alone. SIGTERM drains it afterwards. */
    async function startWorker(taskQueue: string, extraEnv: Record<string, string> = {}): Promise<ChildProcess> {
      return benchWorker.start({
        ...workerTuning(),
        ...extraEnv,
        TEMPORAL_ADDRESS: env.address,
        TEMPORAL_TASK_QUEUE: taskQueue,
        AGGREGATOR_BASE_URL: serviceClock.url,
        WORKER_METRICS_PORT: '0',
        LOG_LEVEL: 'INFO',
      });
    }

    // The product's defaults, as the worker has them: payloads encrypted with the local key, large ones in the local store.
    const client = new Client({
      connection: await Connection.connect({ address: env.address }),
      dataConverter: dataConverterFor(loadClientConfig({ TEMPORAL_ADDRESS: env.address })),
    });
    const connections = new ConnectionsClient({ client, taskQueue: '', address: env.address });
    const customerId = `bench-${Date.now()}`;

    /** A saved login of the sandbox's `username` scenario; every connection of a run shares it. */
    async function savedLogin(username: string): Promise<string> {
      const response = await fetch(`${sandboxUrl}/sandbox/${customerId}/logins`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username }),
      });
      const { LoginId } = (await response.json()) as { LoginId: string };
      return LoginId;
    }

    async function runConnection(taskQueue: string, workflowId: string, loginId: string, timing: { pollIntervalMs: number; pollStrategy?: PollStrategy }) {
      return client.workflow.start('connectionWorkflow', {
        taskQueue,
        workflowId,
        args: [{ customerId, session: { kind: 'cached', loginId }, products: { accountsDetail: {} }, timing }],
      });
    }

    /** Starts one connection per id on `loginId`, 50 starts at a time. */
    async function startConnections(taskQueue: string, ids: readonly string[], loginId: string, pollStrategy: PollStrategy): Promise<void> {
      for (let i = 0; i < ids.length; i += 50) {
        await Promise.all(ids.slice(i, i + 50).map((id) => runConnection(taskQueue, id, loginId, { pollIntervalMs: intervalMs, pollStrategy })));
      }
    }

    const summaries: string[] = [];
    for (const size of sizes) {
      for (const strategy of strategies) {
        const taskQueue = `bench-${strategy}-${size}-${Date.now()}`;
        // A heartbeating poller holds an activity slot for its whole wait: one per pending connection.
        const slots: Record<string, string> =
          strategy === 'heartbeat' && workerTuning().WORKER_MAX_CONCURRENT_ACTIVITIES === undefined
            ? { WORKER_MAX_CONCURRENT_ACTIVITIES: String(size + 100) }
            : {};
        const worker = await startWorker(taskQueue, slots);
        const workerPid = worker.pid ?? 0;
        // Warm-up: bundle loaded, connections open; and the history of a connection that never polls.
        const warm = await runConnection(taskQueue, `warm-${Date.now()}`, await savedLogin('pending_polls_0'), {
          pollIntervalMs: intervalMs,
          pollStrategy: strategy,
        });
        await warm.result();
        const baseEvents = (await warm.fetchHistory()).events?.length ?? 0;

        const login = await savedLogin(`pending_polls_${pendingPolls}`);
        let peakRss = rssMiB(workerPid);
        const samples: { t: number; worker: number; server: number }[] = [];
        const sample = () => {
          peakRss = Math.max(peakRss, rssMiB(workerPid));
          samples.push({ t: Date.now(), worker: cpuMs(workerPid), server: cpuMs(serverPid) });
        };
        sample();
        const sampler = setInterval(sample, 250);
        const callsFrom = serviceClock.calls.length;
        const started = Date.now();
        const ids = Array.from({ length: size }, (_, index) => `bench-${strategy}-${size}-${started}-${index}`);
        await startConnections(taskQueue, ids, login, strategy);
        let transientRetries = 0;
        const results = await Promise.allSettled(ids.map((id) => connections.result(id, { onRetry: () => (transientRetries += 1) })));
        clearInterval(sampler);
        sample();
        // A failed wait is not a lost connection: ask Temporal how each unanswered one actually ended.
        const { lost, failedWaits } = await countEndings(connections, ids, results);
        const completed = size - lost;

        // The service's view: lags, and the window after the start burst.
        const calls = serviceClock.calls.slice(callsFrom).filter((call) => call.kind === 'data');
        const lags = pollLags(calls, intervalMs).sort((a, b) => a - b);
        const firstAnswered = new Map<string, number>();
        for (const call of calls) firstAnswered.set(call.requestId, Math.min(firstAnswered.get(call.requestId) ?? Infinity, call.end));
        // After the start burst: from the last first request's answer to the last call (completions included).
        const windowStart = Math.max(...firstAnswered.values());
        const windowEnd = Math.max(...calls.map((call) => call.end));
        const windowPolls = calls.filter((call) => call.start >= windowStart && call.start < windowEnd).length;
        const windowSeconds = (windowEnd - windowStart) / 1000;
        const afterStarts = (pick: (s: (typeof samples)[number]) => number) => {
          const series = samples.map((s) => ({ t: s.t, cpu: pick(s) }));
          return windowPolls > 0 ? (cpuAt(series, windowEnd) - cpuAt(series, windowStart)) / windowPolls : NaN;
        };
        const workerCpuPerPoll = afterStarts((s) => s.worker);
        const serverCpuPerPoll = afterStarts((s) => s.server);
        const allPolls = calls.length - firstAnswered.size;
        const workerCpuAll = ((samples.at(-1)?.worker ?? NaN) - (samples[0]?.worker ?? NaN)) / Math.max(allPolls, 1);

        let events = 0;
        for (let i = 0; i < ids.length; i += 50) {
          const histories = await Promise.all(ids.slice(i, i + 50).map((id) => client.workflow.getHandle(id).fetchHistory()));
          for (const history of histories) events += history.events?.length ?? 0;
        }
        // A connection with no pending poll costs `baseEvents`; the rest is the polls' cost.
        const perPoll = (events / size - baseEvents) / pendingPolls;

        // Marginal CPU a poll: N connections with one poll each (ready at once when P is 1) pay the
        // same per-connection costs as the run above; the P − 1 polls more cost the rest.
        const baselinePolls = pendingPolls > 1 ? 1 : 0;
        const baselineLogin = await savedLogin(`pending_polls_${baselinePolls}`);
        const baselineCpuFrom = cpuMs(workerPid);
        const baselineIds = ids.map((id) => `${id}-baseline`);
        await startConnections(taskQueue, baselineIds, baselineLogin, strategy);
        const baselineResults = await Promise.allSettled(baselineIds.map((id) => connections.result(id)));
        const baselineCpu = cpuMs(workerPid) - baselineCpuFrom;
        const baselineCompleted = baselineResults.filter((result) => result.status === 'fulfilled').length;
        const pollingCpu = (samples.at(-1)?.worker ?? NaN) - (samples[0]?.worker ?? NaN);
        const marginalCpuPerPoll = (pollingCpu - baselineCpu) / (size * (pendingPolls - baselinePolls));
        const baselineLabel = baselinePolls === 0 ? 'ready at once' : `with ${baselinePolls} poll each`;
        const row =
          `${strategy.padEnd(14)} N=${size}  completed ${completed}/${size}  lost ${lost}  failed waits ${failedWaits} (transient retries ${transientRetries})  ` +
          `poll lag p50 ${fixed(percentile(lags, 50))} ms p99 ${fixed(percentile(lags, 99))} ms (${lags.length} polls)  ` +
          `worker CPU/poll ${fixed(workerCpuPerPoll, 2)} ms after the starts (${windowPolls} polls in ${fixed(windowSeconds, 1)} s; ${fixed(workerCpuAll, 2)} ms with the starts)  server CPU/poll ${fixed(serverCpuPerPoll, 2)} ms  ` +
          `marginal worker CPU/poll ${fixed(marginalCpuPerPoll, 2)} ms (${fixed(pollingCpu)} ms with ${pendingPolls} polls each − ${fixed(baselineCpu)} ms for ${size} connections ${baselineLabel}, ${baselineCompleted}/${size} completed)  ` +
          `worker peak RSS ${fixed(peakRss)} MiB  history events/poll ${fixed(perPoll, 1)}  wall ${fixed((Date.now() - started) / 1000, 1)} s`;
        process.stdout.write(`${row}\n`);
        summaries.push(
          `${strategy} N=${size}: lag p99 ${fixed(percentile(lags, 99))} ms, ${completed}/${size}, worker ${fixed(workerCpuPerPoll, 2)} ms/poll (marginal ${fixed(marginalCpuPerPoll, 2)}), RSS ${fixed(peakRss)} MiB, ${fixed(perPoll, 1)} events/poll`,
        );
        await stopProcess(worker);
      }
    }

    if (answerRuns > 0 || overheadRuns > 0) {
      const taskQueue = `bench-answers-${Date.now()}`;
      const worker = await startWorker(taskQueue);
      const starter = new ConnectionsClient({ client, taskQueue, address: env.address });
      if (answerRuns > 0) {
        // token_code: a 6-digit code, then a security question: answering the first yields the next set.
        const roundTrips: number[] = [];
        const serviceTimes: number[] = [];
        for (let run = -3; run < answerRuns; run += 1) {
          const first = await starter.startAndAwaitFirstStep(`connection-${customerId}:answer-${Date.now()}-${run + 3}`, {
            customerId,
            session: { kind: 'live', institution: 'SandboxTokenBank', username: 'token_code', password: SANDBOX_PASSWORD, save: false },
            products: { accountsDetail: {} },
          });
          if (first.step !== 'challenge') throw new Error(`token_code did not present a challenge: ${first.step}`);
          const prompt = first.challengeSet.challenges[0]?.Prompt ?? '';
          const callsFrom = serviceClock.calls.length;
          const sent = performance.timeOrigin + performance.now();
          const outcome = await starter.answer(first.workflowId, { challengeSetId: first.challengeSet.id, responses: { [prompt]: ['123456'] } });
          const roundTrip = performance.timeOrigin + performance.now() - sent;
          if (outcome.outcome !== 'accepted' || !outcome.nextChallengeSet)
            throw new Error(`the token code was not accepted with a next challenge set: ${JSON.stringify(outcome)}`);
          const authorize = serviceClock.calls.slice(callsFrom).find((call) => call.kind === 'authorize' && call.answer);
          if (!authorize) throw new Error('no Authorize with the answer reached the service');
          // The first runs warm the path up; they are not counted.
          if (run >= 0) {
            roundTrips.push(roundTrip - (authorize.end - authorize.start));
            serviceTimes.push(authorize.end - authorize.start);
          }
          await starter.cancel(first.workflowId);
        }
        roundTrips.sort((a, b) => a - b);
        serviceTimes.sort((a, b) => a - b);
        const line = `answer round trip (update with an answer → outcome with the next challenge set, minus the service's Authorize time): p50 ${fixed(percentile(roundTrips, 50), 1)} ms p99 ${fixed(percentile(roundTrips, 99), 1)} ms (${answerRuns} answers, one at a time; service's own time p50 ${fixed(percentile(serviceTimes, 50), 1)} ms)`;
        process.stdout.write(`${line}\n`);
        summaries.push(`answer round trip p50 ${fixed(percentile(roundTrips, 50), 1)} / p99 ${fixed(percentile(roundTrips, 99), 1)} ms`);
      }

      if (overheadRuns > 0) {
        // Overhead: the same cached accounts retrieval, through a workflow vs directly with the client (both through the clock's proxy).
        const fastLogin = await savedLogin('pending_polls_0');
        const direct = createAggregatorClient({ baseUrl: serviceClock.url, customerId });
        const directTimes: number[] = [];
        const workflowTimes: number[] = [];
        for (let run = -3; run < overheadRuns; run += 1) {
          let t = performance.now();
          const session = await direct.authorizeCached(fastLogin);
          if (session.kind !== 'ready') throw new Error('cached authorize did not open a session');
          const detail = await direct.getAccountsDetail(session.requestId, {});
          if (detail.kind !== 'ready') throw new Error('accounts detail unexpectedly pending');
          const directMs = performance.now() - t;
          t = performance.now();
          await (await runConnection(taskQueue, `overhead-${Date.now()}-${run}`, fastLogin, { pollIntervalMs: intervalMs })).result();
          const workflowMs = performance.now() - t;
          if (run >= 0) {
            directTimes.push(directMs);
            workflowTimes.push(workflowMs);
          }
        }
        directTimes.sort((a, b) => a - b);
        workflowTimes.sort((a, b) => a - b);
        const directMedian = percentile(directTimes, 50);
        const workflowMedian = percentile(workflowTimes, 50);
        const spread = (sorted: number[]) => `p25 ${percentile(sorted, 25).toFixed(1)} / p75 ${percentile(sorted, 75).toFixed(1)}`;
        process.stdout.write(
          `overhead: cached accounts connection median ${workflowMedian.toFixed(1)} ms (${spread(workflowTimes)}) through the workflow vs ${directMedian.toFixed(1)} ms (${spread(directTimes)}) direct (${overheadRuns} runs each): ratio ${(workflowMedian / directMedian).toFixed(1)}x\n`,
        );
        summaries.push(`overhead ${(workflowMedian / directMedian).toFixed(1)}x (${workflowMedian.toFixed(0)} vs ${directMedian.toFixed(0)} ms)`);
      }
      await stopProcess(worker);
    }
    process.stdout.write(`summary: ${summaries.join(' · ')}\n`);
    await client.connection.close();
  } finally {
    await stopAllProcesses();
    await clock?.close();
    await env.teardown();
    await benchWorker.remove();
  }
}

await main();
process.exit(0);
