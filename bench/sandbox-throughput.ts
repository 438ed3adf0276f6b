/**
 * Sandbox throughput: pending-poll answers per second and full one-year accounts retrievals per
 * second, over HTTP with keep-alive from this process. Prints figures; asserts nothing.
 * Run: npx tsx bench/sandbox-throughput.ts [seconds per phase, default 3] [concurrency, default 16]
 * With SANDBOX_URL set, measures that running sandbox (e.g. `npm run sandbox` in another terminal,
 * so client and server do not share one event loop); otherwise starts one in-process.
 */
import { Agent, request as httpRequest } from 'node:http';
import { loadBenchConfig } from '../scripts/lib/bench-settings.js';
import { settingsOrExit } from '../src/settings/load.js';
import { createSandbox } from '../sandbox/server.js';

const seconds = Number(process.argv[2] ?? 3);
const concurrency = Number(process.argv[3] ?? 16);
const external = settingsOrExit('sandbox-throughput', () => loadBenchConfig()).sandboxUrl;
const sandbox = external ? { url: external, close: () => Promise.resolve() } : await createSandbox();
/** One tenant per worker: a LoginId derives from tenant + username, so each worker has its own login. */
const tenantOf = (worker: number) => `bench-${process.pid}-${worker}`;
// node:http with a keep-alive agent: global fetch costs about 1 ms per request of client CPU here,
// which would measure the client rather than the sandbox.
const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
const base = new URL(sandbox.url);
function send(method: string, path: string, body?: unknown): Promise<{ status: number; text: string }> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: base.hostname,
        port: base.port,
        path,
        method,
        agent,
        headers: payload ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } : {},
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}
const post = (path: string, body: unknown) => send('POST', path, body);

async function session(worker: number, username: string): Promise<string> {
  const { text } = await post(`/sandbox/${tenantOf(worker)}/logins`, { username });
  const { LoginId } = JSON.parse(text) as { LoginId: string };
  const authorized = await post(`/v3/${tenantOf(worker)}/BankingServices/Authorize`, { LoginId, MostRecentCached: true });
  return (JSON.parse(authorized.text) as { RequestId: string }).RequestId;
}

async function phase(name: string, expectStatus: number, request: (worker: number) => Promise<{ status: number; text: string }>) {
  const started = performance.now();
  const deadline = started + seconds * 1000;
  let count = 0;
  let bytes = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async (_, worker) => {
      while (performance.now() < deadline) {
        const { status, text } = await request(worker);
        if (status !== expectStatus) throw new Error(`${name}: unexpected HTTP ${status}: ${text.slice(0, 200)}`);
        count += 1;
        bytes += text.length;
      }
    }),
  );
  // Requests in flight at the deadline finish after it: divide by the time actually taken.
  const elapsed = (performance.now() - started) / 1000;
  const rate = count / elapsed;
  console.log(`${name}: ${count} answers in ${elapsed.toFixed(2)}s = ${rate.toFixed(0)}/s, ${(bytes / count / 1024).toFixed(1)} KiB each`);
  return rate;
}

// Pending polls: sessions whose accounts detail stays pending for a million polls.
const workers = Array.from({ length: concurrency }, (_, worker) => worker);
const pendingIds = await Promise.all(workers.map((worker) => session(worker, 'pending_polls_1000000')));
await Promise.all(pendingIds.map((id, worker) => post(`/v3/${tenantOf(worker)}/BankingServices/GetAccountsDetail`, { RequestId: id })));
const pollRate = await phase('pending polls', 202, (worker) =>
  send('GET', `/v3/${tenantOf(worker)}/BankingServices/GetAccountsDetailAsync/${pendingIds[worker] ?? ''}`),
);

// Full one-year retrievals on ready sessions: one login per worker, each generated once and cached.
const readyIds = await Promise.all(workers.map((worker) => session(worker, 'pending_polls_0')));
const yearRate = await phase('one-year accounts detail', 200, (worker) =>
  post(`/v3/${tenantOf(worker)}/BankingServices/GetAccountsDetail`, { RequestId: readyIds[worker] ?? '', DaysOfTransactions: 'Days365' }),
);

agent.destroy();
await sandbox.close();
console.log(
  `summary: ${pollRate.toFixed(0)} pending polls/s (target 1000), ${yearRate.toFixed(0)} one-year retrievals/s (target 100), concurrency ${concurrency}, ${external ? 'external sandbox' : 'in-process sandbox'}`,
);
