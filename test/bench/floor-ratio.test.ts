/**
 * `bench/floor-ratio-run.ts` at a small size, as a subprocess on a dev server: the product's cached
 * connection, the SDK floor's shape and the floor's shape with the service's two calls made for
 * real, alternating, with CPU profiles. Its lines must parse with a figure for each side: never a
 * timed assertion, the ratios are the benchmark's, not verdicts.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { floorServiceActivities } from '../../bench/sdk-floor/activities.js';
import { failureReport, runHarness } from '../helpers/harness-run.js';

const ENTRY = 'bench/floor-ratio-run.ts';
const RUN_TIMEOUT_MS = 180_000;
const FIGURE = String.raw`[\d.]+`;

void describe("the floor's service call", () => {
  void it('posts the JSON body and returns the answer parsed; an error status fails it, naming the URL and status', async () => {
    const server = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString()));
      request.on('end', () => {
        const refused = request.url === '/refuse';
        response.writeHead(refused ? 503 : 200, { 'content-type': 'application/json' });
        response.end(refused ? '{"ServiceCode":"SERVICE_UNAVAILABLE"}' : JSON.stringify({ method: request.method, type: request.headers['content-type'], body: JSON.parse(body) as unknown }));
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      assert.deepEqual(await floorServiceActivities.serviceCall({ url: `${base}/ok`, body: { LoginId: 'L1' } }), { method: 'POST', type: 'application/json', body: { LoginId: 'L1' } });
      await assert.rejects(floorServiceActivities.serviceCall({ url: `${base}/refuse`, body: {} }), new RegExp(`^Error: ${base}/refuse answered HTTP 503: \\{"ServiceCode":"SERVICE_UNAVAILABLE"\\}$`));
    } finally {
      server.close();
    }
  });
});

void describe('bench/floor-ratio-run.ts', () => {
  const dirs: string[] = [];
  after(async () => Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true }))));

  void it('refuses a bad argument with exit code 2 and its usage, without a stack trace', async () => {
    const unknown = await runHarness(ENTRY, ['--run', '3'], 60_000);
    assert.equal(unknown.code, 2, failureReport(unknown.output));
    assert.match(unknown.output, /Unknown option '--run'/);
    assert.match(unknown.output, /usage: floor-ratio-run\.ts \[--runs 30\]/);
    assert.doesNotMatch(unknown.output, /\n\s+at /, 'no stack trace');
    const runtime = await runHarness(ENTRY, ['--runs', '3', '--worker-runtime', 'bun'], 60_000);
    assert.equal(runtime.code, 2, failureReport(runtime.output));
    assert.match(runtime.output, /got --runs 3 --key-provider static --worker-runtime bun/);
  });

  void it('measures the product, the floor and the floor with the service calls, and profiles each', { timeout: RUN_TIMEOUT_MS + 20_000 }, async () => {
    const dir = await mkdtemp(join(tmpdir(), 'floor-ratio-test-'));
    dirs.push(dir);
    // The product's worker through tsx: no `npm run build` into dist/ while another test may build there.
    const { code, stdout, output } = await runHarness(ENTRY, ['--runs', '2', '--worker-runtime', 'tsx', '--cpu-prof', dir], RUN_TIMEOUT_MS, 'SIGTERM');
    assert.equal(code, 0, failureReport(output));
    for (const side of ['product', 'floor  ', 'calls  ']) {
      assert.match(stdout, new RegExp(`^${side}: \\d+ events; on the worker: workflow task 1 ${FIGURE} ms, activity 1 ${FIGURE} ms`, 'm'), output);
    }
    // The calls side makes them for real: a history of the floor's 20 events, its activities busy.
    assert.match(stdout, /^calls {2}: 20 events;/m, output);
    for (const line of [
      `connection vs SDK floor: start→result ${FIGURE} / ${FIGURE} ms \\(${FIGURE}x\\), worker CPU ${FIGURE} / ${FIGURE} ms \\(${FIGURE}x\\), 2 runs each, alternating`,
      `floor with the service's calls vs SDK floor: start→result ${FIGURE} / ${FIGURE} ms \\(${FIGURE}x\\), worker CPU ${FIGURE} / ${FIGURE} ms \\(${FIGURE}x\\), 2 runs each, alternating`,
      `connection vs the floor with the service's calls: start→result ${FIGURE} / ${FIGURE} ms \\(${FIGURE}x\\), worker CPU ${FIGURE} / ${FIGURE} ms \\(${FIGURE}x\\), 2 runs each, alternating`,
      `profile \\(ms a connection, self time in the measured runs, \\d+ product and \\d+ floor thread profiles\\)`,
      `profile \\(ms a connection, self time in the measured runs, \\d+ product and \\d+ floor with calls thread profiles\\)`,
    ]) {
      assert.match(stdout, new RegExp(`^${line}`, 'm'), output);
    }
    assert.doesNotMatch(stdout, /NaN/, 'every figure measured');
    const profiles = /^profiles: (.+)$/m.exec(stdout)?.[1];
    assert.ok(profiles, output);
    assert.deepEqual((await readdir(profiles)).sort(), ['calls', 'floor', 'product']);
  });
});
