/**
 * Large logins (`large_<accounts>x<transactions>`): time to generate and serialize their one-year
 * accounts detail, in-process and over HTTP (first request: generation + serialization + transfer;
 * second: from the data cache), then attributes and memory. Prints figures (median of `runs`);
 * asserts nothing and never runs in tests.
 * Run: npx tsx bench/sandbox-large-logins.ts [runs, default 3] [usernames..., default large_10x5000 large_100x5000]
 */
import { Agent, request as httpRequest } from 'node:http';
import { generateLargeBankData } from '../sandbox/large-bank-data.js';
import { largeAccountsJson } from '../sandbox/large-bank-json.js';
import { DEFAULT_OPTIONS } from '../sandbox/options.js';
import { resolveScenario } from '../sandbox/scenarios.js';
import { createSandbox } from '../sandbox/server.js';

const runs = Number(process.argv[2] ?? 3);
const usernames = process.argv.length > 3 ? process.argv.slice(3) : ['large_10x5000', 'large_100x5000'];
const asOf = DEFAULT_OPTIONS.asOf;

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN;
const ms = (value: number) => `${value.toFixed(0)} ms`;
const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;
async function timed<T>(work: () => T | Promise<T>): Promise<[T, number]> {
  const started = performance.now();
  const value = await work();
  return [value, performance.now() - started];
}

const sandbox = await createSandbox();
const base = new URL(sandbox.url);
const agent = new Agent({ keepAlive: true });
/** Sends a request; counts the answer's bytes, keeping only the first 64 KB (the client's parsing is not measured). */
function send(method: string, path: string, body?: unknown): Promise<{ status: number; bytes: number; text: string }> {
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
        let bytes = 0;
        const head: Buffer[] = [];
        res.on('data', (chunk: Buffer) => {
          if (bytes < 65_536) head.push(chunk);
          bytes += chunk.length;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, bytes, text: Buffer.concat(head).subarray(0, 65_536).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}
async function ok(answer: Promise<{ status: number; bytes: number; text: string }>, what: string) {
  const result = await answer;
  if (result.status !== 200) throw new Error(`${what}: HTTP ${result.status}: ${result.text.slice(0, 300)}`);
  return result;
}

for (const username of usernames) {
  const size = resolveScenario(username)?.large;
  if (!size) throw new Error(`${username} is not a large login`);
  const total = size.accounts * size.transactionsPerAccount;

  // In-process: the data functions alone.
  const generate: number[] = [];
  const serialize: number[] = [];
  // CPU time too: on a busy machine wall time mostly measures the other processes.
  const cpu: number[] = [];
  let jsonBytes = 0;
  for (let run = 0; run < runs; run++) {
    const cpuBefore = process.cpuUsage();
    const [data, generateMs] = await timed(() => generateLargeBankData(`bench-seed-${run}`, asOf, size));
    const [json, serializeMs] = await timed(() => largeAccountsJson(data, asOf, { DaysOfTransactions: 'Days365' }));
    const cpuUsed = process.cpuUsage(cpuBefore);
    generate.push(generateMs);
    serialize.push(serializeMs);
    cpu.push((cpuUsed.user + cpuUsed.system) / 1000);
    jsonBytes = json.reduce((total, chunk) => total + chunk.byteLength, 0);
  }
  const sum = generate.map((g, i) => g + (serialize[i] ?? 0));
  console.log(`${username} (${total.toLocaleString('en-US')} transactions, ${mb(jsonBytes)} of Accounts JSON)`);
  console.log(
    `  in-process generate ${ms(median(generate))} + serialize ${ms(median(serialize))}, generate+serialize ${ms(median(sum))} wall (median of ${runs}: ${sum.map(ms).join(', ')}), ${ms(median(cpu))} CPU`,
  );

  // Over HTTP: a fresh saved login per run, so each first answer generates and serializes.
  const first: number[] = [];
  const second: number[] = [];
  const attributesFirst: number[] = [];
  const attributesSecond: number[] = [];
  let answerBytes = 0;
  for (let run = 0; run < runs; run++) {
    const tenant = `bench-large-${process.pid}-${username}-${run}`;
    const created = await ok(send('POST', `/sandbox/${tenant}/logins`, { username, pendingPolls: 0 }), 'create login');
    const { LoginId } = JSON.parse(created.text) as { LoginId: string };
    const authorized = await ok(send('POST', `/v3/${tenant}/BankingServices/Authorize`, { LoginId, MostRecentCached: true }), 'Authorize');
    const { RequestId } = JSON.parse(authorized.text) as { RequestId: string };
    const detail = { RequestId, DaysOfTransactions: 'Days365' };
    const [one, firstMs] = await timed(() => ok(send('POST', `/v3/${tenant}/BankingServices/GetAccountsDetail`, detail), 'first accounts detail'));
    const [, secondMs] = await timed(() => ok(send('POST', `/v3/${tenant}/BankingServices/GetAccountsDetail`, detail), 'second accounts detail'));
    const attributes = `/v3/${tenant}/insight/login/${LoginId}/attributes/${RequestId}/GetAllAttributes`;
    const [, attributesFirstMs] = await timed(() => ok(send('GET', attributes), 'first attributes'));
    const [, attributesSecondMs] = await timed(() => ok(send('GET', attributes), 'second attributes'));
    first.push(firstMs);
    second.push(secondMs);
    attributesFirst.push(attributesFirstMs);
    attributesSecond.push(attributesSecondMs);
    answerBytes = one.bytes;
  }
  console.log(
    `  HTTP accounts detail Days365 (${mb(answerBytes)}): first ${ms(median(first))} (${first.map(ms).join(', ')}), second from cache ${ms(median(second))} (${second.map(ms).join(', ')})`,
  );
  console.log(`  HTTP GetAllAttributes: first ${ms(median(attributesFirst))} (builds Transaction objects), second ${ms(median(attributesSecond))}`);
  const memory = process.memoryUsage();
  const stats = sandbox.dataCacheStats();
  console.log(
    `  memory: rss ${mb(memory.rss)}, heap used ${mb(memory.heapUsed)}, buffers ${mb(memory.arrayBuffers)}; cache ${stats.logins} logins, ~${mb(stats.bytes)}, ${stats.generated} generated, ${stats.serialized} serialized, ${stats.hits} hits`,
  );
}

agent.destroy();
await sandbox.close();
