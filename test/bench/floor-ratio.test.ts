/**
 * `bench/floor-ratio-run.ts` at a small size, as a subprocess on a dev server: the product's cached
 * connection, the SDK floor's shape and the floor's shape with the service's two calls made for
 * real, alternating, with CPU profiles. Its lines must parse with a figure for each side: never a
 * timed assertion, the ratios are the benchmark's, not verdicts. Beside it, without a server: the
 * floor's service call against a local HTTP server (what it sends, what fails it and how), and the
 * calls side's lines.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { callsLines, type FloorRatio, type SideFigures } from '../../bench/floor-ratio.js';
import { floorServiceActivities, type ServiceCall } from '../../bench/sdk-floor/activities.js';
import { failureReport, runHarness } from '../helpers/harness-run.js';

const ENTRY = 'bench/floor-ratio-run.ts';
const RUN_TIMEOUT_MS = 180_000;
const FIGURE = String.raw`[\d.]+`;

void describe("the floor's service call", () => {
  void it('posts the JSON body and returns the answer parsed; a 429 or 5xx is retried, any other status fails the run at once', async () => {
    const statuses: Record<string, number> = { '/ok': 200, '/busy': 503, '/limited': 429, '/missing': 404, '/pending': 202 };
    const server = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString()));
      request.on('end', () => {
        const status = statuses[request.url ?? ''] ?? 500;
        response.writeHead(status, { 'content-type': 'application/json' });
        response.end(
          status === 200
            ? JSON.stringify({ method: request.method, type: request.headers['content-type'], body: JSON.parse(body) as unknown })
            : `{"ServiceCode":"HTTP_${status}"}`,
        );
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const call = (path: string, body: unknown) =>
      new MockActivityEnvironment().run((input: ServiceCall) => floorServiceActivities.serviceCall(input), { url: `${base}${path}`, body });
    const failureOf = async (path: string): Promise<ApplicationFailure> => {
      try {
        await call(path, {});
      } catch (error) {
        assert.ok(error instanceof ApplicationFailure, String(error));
        return error;
      }
      assert.fail(`${path} did not fail`);
    };
    try {
      assert.deepEqual(await call('/ok', { LoginId: 'L1' }), { method: 'POST', type: 'application/json', body: { LoginId: 'L1' } });
      for (const [path, status, retried] of [
        ['/busy', 503, true],
        ['/limited', 429, true],
        ['/missing', 404, false],
        ['/pending', 202, false],
      ] as const) {
        const failure = await failureOf(path);
        assert.equal(failure.message, `${base}${path} answered HTTP ${status}: {"ServiceCode":"HTTP_${status}"}`);
        assert.equal(failure.nonRetryable, !retried, `${path}: retried ${retried}`);
      }
    } finally {
      server.close();
    }
  });
});

void describe('the lines of the calls side', () => {
  const side = (startToResultMs: number, workerCpuMs: number): SideFigures => ({ startToResultMs, workerCpuMs, steps: new Map(), events: 20 });
  const ratio: FloorRatio = { runs: 4, product: side(60, 36), floor: side(40, 24), latencyRatio: 1.5, cpuRatio: 1.5 };

  void it('says what the calls cost the floor and what the product adds beyond them; nothing without the calls side', () => {
    assert.deepEqual(callsLines(ratio), []);
    const withCalls: FloorRatio = {
      ...ratio,
      calls: {
        floorWithCalls: side(48, 30),
        productOverCallsLatencyRatio: 60 / 48,
        productOverCallsCpuRatio: 36 / 30,
        callsOverFloorLatencyRatio: 48 / 40,
        callsOverFloorCpuRatio: 30 / 24,
      },
    };
    assert.deepEqual(callsLines(withCalls), [
      "floor with the service's calls vs SDK floor: start→result 48.0 / 40.0 ms (1.20x), worker CPU 30.0 / 24.0 ms (1.25x), 4 runs each, alternating",
      "connection vs the floor with the service's calls: start→result 60.0 / 48.0 ms (1.25x), worker CPU 36.0 / 30.0 ms (1.20x), 4 runs each, alternating",
    ]);
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
    const encryption = await runHarness(ENTRY, ['--runs', '3', '--payload-encryption', 'maybe'], 60_000);
    assert.equal(encryption.code, 2, failureReport(encryption.output));
    assert.match(encryption.output, /--payload-encryption maybe/);
    // A product in clear on a KMS says nothing about either: refused, not run.
    const clearTransit = await runHarness(ENTRY, ['--runs', '3', '--payload-encryption', 'off', '--key-provider', 'vault-transit'], 60_000);
    assert.equal(clearTransit.code, 2, failureReport(clearTransit.output));
    assert.match(clearTransit.output, /--key-provider vault-transit --worker-runtime \w+ --payload-encryption off/);
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
    // The floor's shape with the calls: its 20 events (the bench itself refuses a calls run that retrieved no accounts).
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
