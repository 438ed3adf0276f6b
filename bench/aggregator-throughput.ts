/**
 * Throughput of OUR aggregation client (ky + zod, what the worker uses) against the sandbox running
 * as a separate process, so client and server do not share one event loop.
 *
 *   npx tsx bench/aggregator-throughput.ts [seconds per phase, 1..10, default 5] [concurrency, default 32]
 *   npm run bench:aggregator
 *
 * Measures (a) pending-poll answers per second (GetAccountsDetailAsync on pending_polls_1000000
 * sessions), (b) full retrievals per second (cached Authorize, then GetAccountsDetail Days365 with
 * transactions until ready, parsed and validated by the client, on pending_polls_0 logins: 200 at
 * once), (c) p50/p99 latency of each, and (d) where the time of one full retrieval goes (HTTP vs
 * JSON.parse vs zod), sequentially. Loopback only, bounded in count and time; the child sandbox is
 * killed on exit. Transport: Node's global fetch (undici), which keeps connections alive by default.
 * Prints figures and a one-line summary; asserts nothing (exit 1 only if the run itself fails).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createAggregatorClient, type AggregatorClient } from '../src/aggregator/client.js';
import { AccountsDetailResponse } from '../src/aggregator/schemas.js';
import { freePort } from '../scripts/lib/free-port.js';
import { createSandboxLogin } from './sandbox-fixtures.js';

const seconds = Math.min(10, Math.max(1, Number(process.argv[2] ?? 5) || 5));
const concurrency = Math.max(1, Math.floor(Number(process.argv[3] ?? 32) || 32));
const WARMUP_MS = 1_000;
const MAX_POLLS = 500_000; // count bound of phase (a)
const MAX_RETRIEVALS = 50_000; // count bound of phase (b)
const BREAKDOWN_ITERATIONS = 200; // phase (d), sequential
const HARD_LIMIT_MS = 120_000; // the whole run, whatever happens
const ROOT = fileURLToPath(new URL('..', import.meta.url));

// --- the sandbox child process ------------------------------------------------------------------

let child: ChildProcess | undefined;
function killChild(): void {
  if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
}
process.on('exit', killChild);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    killChild();
    process.exit(130);
  });
}
const hardLimit = setTimeout(() => {
  console.error(`bench: still running after ${HARD_LIMIT_MS / 1000} s, giving up`);
  killChild();
  process.exit(1);
}, HARD_LIMIT_MS);

async function startSandbox(): Promise<string> {
  const port = await freePort();
  const env: NodeJS.ProcessEnv = { ...process.env, SANDBOX_PORT: String(port), SANDBOX_HOST: '127.0.0.1' };
  delete env.SANDBOX_AUTH_SECRET; // no calling-application auth in the bench
  const started = spawn(process.execPath, ['--import', 'tsx', 'sandbox/main.ts'], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  child = started;
  return new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => reject(new Error(`sandbox did not start within 30 s: ${output}`)), 30_000);
    started.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`sandbox exited early (code ${code}, signal ${signal}): ${output}`));
    });
    started.stdout?.setEncoding('utf8');
    started.stdout?.on('data', (chunk: string) => {
      output += chunk;
      const match = /sandbox listening on (\S+)/.exec(output);
      if (match?.[1]) {
        clearTimeout(timer);
        started.removeAllListeners('exit');
        started.stdout?.removeAllListeners('data');
        started.stdout?.resume(); // keep draining its output
        resolve(match[1]);
      }
    });
  });
}

// --- measuring ----------------------------------------------------------------------------------

interface PhaseResult {
  readonly name: string;
  readonly count: number;
  readonly elapsedMs: number;
  readonly rate: number;
  readonly latencies: number[];
  /** CPU ms spent per operation by this process (the client) and by the sandbox child. */
  readonly clientCpuMs: number;
  readonly sandboxCpuMs: number;
}

/** CPU time (ms) of the sandbox child from /proc (Linux; NaN elsewhere). Clock ticks assumed 100/s. */
function childCpuMs(): number {
  try {
    const stat = readFileSync(`/proc/${child?.pid ?? 0}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10; // utime + stime
  } catch {
    return Number.NaN;
  }
}
const selfCpuMs = () => {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
};

function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? Number.NaN;
}
const median = (values: readonly number[]) =>
  quantile(
    [...values].sort((a, b) => a - b),
    0.5,
  );

/** Runs `concurrency` workers, each repeating `operation`, for `seconds` (after a warm-up) or until `maxCount`. */
async function phase(name: string, maxCount: number, operation: (worker: number) => Promise<void>): Promise<PhaseResult> {
  const warmupEnd = performance.now() + WARMUP_MS;
  await Promise.all(
    Array.from({ length: concurrency }, async (_, worker) => {
      while (performance.now() < warmupEnd) await operation(worker);
    }),
  );
  const latencies: number[] = [];
  const cpuBefore = { client: selfCpuMs(), sandbox: childCpuMs() };
  const start = performance.now();
  const deadline = start + seconds * 1000;
  await Promise.all(
    Array.from({ length: concurrency }, async (_, worker) => {
      while (performance.now() < deadline && latencies.length < maxCount) {
        const began = performance.now();
        await operation(worker);
        latencies.push(performance.now() - began);
      }
    }),
  );
  const elapsedMs = performance.now() - start;
  const count = latencies.length;
  const clientCpuMs = (selfCpuMs() - cpuBefore.client) / count;
  const sandboxCpuMs = (childCpuMs() - cpuBefore.sandbox) / count;
  latencies.sort((a, b) => a - b);
  return { name, count, elapsedMs, rate: (count / elapsedMs) * 1000, latencies, clientCpuMs, sandboxCpuMs };
}

async function cachedRequestId(client: AggregatorClient, loginId: string): Promise<string> {
  const result = await client.authorizeCached(loginId);
  if (result.kind !== 'ready') throw new Error(`cached Authorize answered ${result.kind}`);
  return result.requestId;
}

const DETAIL = { DaysOfTransactions: 'Days365', WithTransactions: true } as const;

/** Cached Authorize, then accounts detail until ready; checks the answer is a real year of data. */
async function fullRetrieval(client: AggregatorClient, loginId: string): Promise<number> {
  const requestId = await cachedRequestId(client, loginId);
  let result = await client.getAccountsDetail(requestId, DETAIL);
  for (let polls = 0; result.kind === 'pending'; polls++) {
    if (polls > 100) throw new Error('accounts detail still pending after 100 polls');
    result = await client.getAccountsDetailAsync(requestId);
  }
  const transactions = result.data.Accounts.reduce((n, a) => n + (a.Transactions?.length ?? 0), 0);
  if (result.data.Accounts.length < 2 || transactions < 100) throw new Error(`unexpectedly small answer: ${transactions} transactions`);
  return transactions;
}

// --- the run ------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const baseUrl = await startSandbox();
  const pid = process.pid;
  console.log(`sandbox child pid ${child?.pid ?? '?'} at ${baseUrl}; ${seconds} s per phase after ${WARMUP_MS} ms warm-up, concurrency ${concurrency}`);

  // (a) pending polls: one session per worker on a login pending for a million polls.
  const pollTenant = `bench-poll-${pid}`;
  const pollClient = createAggregatorClient({ baseUrl, customerId: pollTenant, timeoutMs: 10_000 });
  const pendingLogin = await createSandboxLogin(baseUrl, pollTenant, 'pending_polls_1000000');
  const pendingIds = await Promise.all(
    Array.from({ length: concurrency }, async () => {
      const requestId = await cachedRequestId(pollClient, pendingLogin);
      const first = await pollClient.getAccountsDetail(requestId);
      if (first.kind !== 'pending') throw new Error('expected a pending accounts detail');
      return requestId;
    }),
  );
  const polls = await phase('pending poll (GetAccountsDetailAsync → 202)', MAX_POLLS, async (worker) => {
    const result = await pollClient.getAccountsDetailAsync(pendingIds[worker] ?? '');
    if (result.kind !== 'pending') throw new Error('a pending poll answered ready');
  });

  // (b) full retrievals: one saved pending_polls_0 login per worker, each in its own tenant (so data differs).
  const retrievalClients = await Promise.all(
    Array.from({ length: concurrency }, async (_, worker) => {
      const customerId = `bench-full-${pid}-${worker}`;
      const loginId = await createSandboxLogin(baseUrl, customerId, 'pending_polls_0');
      return { client: createAggregatorClient({ baseUrl, customerId, timeoutMs: 10_000 }), loginId };
    }),
  );
  let transactionsPerRetrieval = 0;
  const retrievals = await phase('full retrieval (cached Authorize + GetAccountsDetail Days365)', MAX_RETRIEVALS, async (worker) => {
    const entry = retrievalClients[worker];
    if (!entry) throw new Error('no client');
    transactionsPerRetrieval = await fullRetrieval(entry.client, entry.loginId);
  });

  // (d) where one full retrieval's time goes, sequentially (no queueing): raw HTTP vs parse vs zod.
  const first =
    retrievalClients[0] ??
    (() => {
      throw new Error('no client');
    })();
  const requestId = await cachedRequestId(first.client, first.loginId);
  await first.client.getAccountsDetail(requestId, DETAIL);
  const detailUrl = `${baseUrl}/v3/bench-full-${pid}-0/BankingServices/GetAccountsDetail`;
  const body = JSON.stringify({ RequestId: requestId, ...DETAIL });
  const http: number[] = [];
  const parse: number[] = [];
  const zod: number[] = [];
  const clientCall: number[] = [];
  const authorize: number[] = [];
  let bytes = 0;
  for (let i = 0; i < BREAKDOWN_ITERATIONS; i++) {
    let began = performance.now();
    const response = await fetch(detailUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    const text = await response.text();
    http.push(performance.now() - began);
    bytes = text.length;

    began = performance.now();
    const parsed: unknown = JSON.parse(text);
    parse.push(performance.now() - began);

    began = performance.now();
    const checked = AccountsDetailResponse.safeParse(parsed);
    zod.push(performance.now() - began);
    if (!checked.success) throw new Error('captured body does not validate');

    began = performance.now();
    const viaClient = await first.client.getAccountsDetail(requestId, DETAIL);
    clientCall.push(performance.now() - began);
    if (viaClient.kind !== 'ready') throw new Error('expected ready');

    began = performance.now();
    await cachedRequestId(first.client, first.loginId);
    authorize.push(performance.now() - began);
  }

  // --- report -----------------------------------------------------------------------------------
  const ms = (value: number) => value.toFixed(2).padStart(8);
  const rows = [polls, retrievals].map((r) => ({
    phase: r.name,
    count: r.count,
    seconds: (r.elapsedMs / 1000).toFixed(2),
    rate: r.rate.toFixed(0),
    p50: ms(quantile(r.latencies, 0.5)),
    p99: ms(quantile(r.latencies, 0.99)),
    max: ms(r.latencies.at(-1) ?? Number.NaN),
    cpu: `${r.clientCpuMs.toFixed(2).padStart(10)} ${r.sandboxCpuMs.toFixed(2).padStart(11)}`,
  }));
  console.log('');
  console.log(
    `${'phase'.padEnd(62)} ${'count'.padStart(7)} ${'secs'.padStart(6)} ${'rate/s'.padStart(7)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)} ${'max ms'.padStart(8)} ${'client cpu'.padStart(10)} ${'sandbox cpu'.padStart(11)}`,
  );
  for (const row of rows) {
    console.log(
      `${row.phase.padEnd(62)} ${String(row.count).padStart(7)} ${row.seconds.padStart(6)} ${row.rate.padStart(7)} ${row.p50} ${row.p99} ${row.max} ${row.cpu}`,
    );
  }
  console.log('(cpu: CPU ms per operation, this process vs the sandbox child; the machine may be shared)');

  const [mHttp, mParse, mZod, mClient, mAuthorize] = [http, parse, zod, clientCall, authorize].map(median) as [number, number, number, number, number];
  const overhead = mClient - mHttp - mParse - mZod;
  const share = (value: number) => `${((value / mClient) * 100).toFixed(0).padStart(3)}%`;
  console.log('');
  console.log(
    `one full retrieval, sequential, medians of ${BREAKDOWN_ITERATIONS} (answer ${(bytes / 1024).toFixed(0)} KiB, ${transactionsPerRetrieval} transactions):`,
  );
  console.log(`  GetAccountsDetail via our client      ${ms(mClient)} ms  100%`);
  console.log(`    HTTP round trip + body (raw fetch)  ${ms(mHttp)} ms  ${share(mHttp)}`);
  console.log(`    JSON.parse                          ${ms(mParse)} ms  ${share(mParse)}`);
  console.log(`    zod AccountsDetailResponse.safeParse${ms(mZod)} ms  ${share(mZod)}`);
  console.log(`    rest (ky, request validation, ...)  ${ms(overhead)} ms  ${share(Math.max(0, overhead))}`);
  console.log(`  cached Authorize via our client       ${ms(mAuthorize)} ms`);

  const verdict = (rate: number, target: number) => `${rate.toFixed(0)}/s (target ≥${target}${rate >= target ? '' : ', BELOW'})`;
  console.log('');
  console.log(
    `summary: pending-poll ${verdict(polls.rate, 1000)} · full retrieval ${verdict(retrievals.rate, 100)} · ` +
      `poll p50 ${quantile(polls.latencies, 0.5).toFixed(1)} ms p99 ${quantile(polls.latencies, 0.99).toFixed(1)} ms · ` +
      `retrieval p50 ${quantile(retrievals.latencies, 0.5).toFixed(1)} ms p99 ${quantile(retrievals.latencies, 0.99).toFixed(1)} ms · ` +
      `retrieval = http ${mHttp.toFixed(1)} + parse ${mParse.toFixed(1)} + zod ${mZod.toFixed(1)} ms · ` +
      `client cpu/op poll ${polls.clientCpuMs.toFixed(2)} ms, retrieval ${retrievals.clientCpuMs.toFixed(2)} ms · concurrency ${concurrency}, sandbox in a separate process`,
  );
}

try {
  await main();
} catch (error) {
  console.error('bench failed:', error);
  process.exitCode = 1;
} finally {
  clearTimeout(hardLimit);
  killChild();
}
