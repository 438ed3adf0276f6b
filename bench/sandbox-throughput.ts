/**
 * Sandbox throughput: pending-poll answers per second and full one-year accounts retrievals per
 * second, over HTTP with keep-alive from this process. Prints figures; asserts nothing.
 * Run: npx tsx bench/sandbox-throughput.ts [seconds per phase, default 3] [concurrency, default 16]
 * With SANDBOX_URL set, measures that running sandbox (e.g. `npm run sandbox` in another terminal,
 * so client and server do not share one event loop); otherwise starts one in-process.
 */
import { Agent, request as httpRequest } from 'node:http';
import { createSandbox } from '../src/sandbox/server.js';

const seconds = Number(process.argv[2] ?? 3);
const concurrency = Number(process.argv[3] ?? 16);
const external = process.env.SANDBOX_URL;
const sandbox = external ? { url: external, close: () => Promise.resolve() } : await createSandbox();
const tenant = `bench-${process.pid}`;
// node:http with a keep-alive agent: global fetch costs about 1 ms per request of client CPU here,
// which would measure the client rather than the sandbox.
const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
const base = new URL(sandbox.url);
function send(method: string, path: string, body?: unknown): Promise<{ status: number; text: string }> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: base.hostname, port: base.port, path, method, agent, headers: payload ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } : {} },
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

async function session(username: string, pendingPolls: number): Promise<string> {
  const { text } = await post(`/sandbox/${tenant}/logins`, { username, pendingPolls });
  const { LoginId } = JSON.parse(text) as { LoginId: string };
  const authorized = await post(`/v3/${tenant}/BankingServices/Authorize`, { LoginId, MostRecentCached: true });
  return (JSON.parse(authorized.text) as { RequestId: string }).RequestId;
}

async function phase(name: string, expectStatus: number, request: (worker: number) => Promise<{ status: number; text: string }>) {
  const deadline = performance.now() + seconds * 1000;
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
  const rate = count / seconds;
  console.log(`${name}: ${count} answers in ${seconds}s = ${rate.toFixed(0)}/s, ${(bytes / count / 1024).toFixed(1)} KiB each`);
  return rate;
}

// Pending polls: sessions whose accounts detail stays pending for a million polls.
const pendingIds = await Promise.all(Array.from({ length: concurrency }, () => session('pending_polls_1000000', 1_000_000)));
await Promise.all(pendingIds.map((id) => post(`/v3/${tenant}/BankingServices/GetAccountsDetail`, { RequestId: id })));
const pollRate = await phase('pending polls', 202, (worker) =>
  send('GET', `/v3/${tenant}/BankingServices/GetAccountsDetailAsync/${pendingIds[worker] ?? ''}`),
);

// Full one-year retrievals on ready sessions (several logins, so generation is cached per login).
const readyIds = await Promise.all(Array.from({ length: concurrency }, () => session('pending_polls_0', 0)));
const yearRate = await phase('one-year accounts detail', 200, (worker) =>
  post(`/v3/${tenant}/BankingServices/GetAccountsDetail`, { RequestId: readyIds[worker] ?? '', DaysOfTransactions: 'Days365' }),
);

agent.destroy();
await sandbox.close();
console.log(`summary: ${pollRate.toFixed(0)} pending polls/s (target 1000), ${yearRate.toFixed(0)} one-year retrievals/s (target 100), concurrency ${concurrency}, ${external ? 'external sandbox' : 'in-process sandbox'}`);
