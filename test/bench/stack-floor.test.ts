/**
 * `npm run bench:stack-floor` at a small size, as a subprocess on the production stack (PostgreSQL,
 * the Temporal server, the product's worker and the SDK floor's): its closing line must parse with a
 * figure for each side. Never a timed assertion: the CPU figures and their ratio are the benchmark's,
 * not verdicts. The arithmetic (bench/stack-floor/figures.ts) is checked here without a server.
 *
 * Without PostgreSQL or the server binaries the run is skipped on a developer's machine, saying why,
 * and fails in CI, where .ci/run and the pretest provide both.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseStackFloorLine, perRun, sideFigures, stackFloorLine, totalOf, type BatchSample } from '../../bench/stack-floor/figures.js';
import { postgresBinDir } from '../../scripts/prod-check/postgres.js';
import { findServerBinaries } from '../../scripts/prod-check/temporal-server.js';
import { loadTestConfig } from '../../scripts/lib/test-settings.js';
import { failureReport, runHarness } from '../helpers/harness-run.js';

const ENTRY = 'bench/stack-floor.ts';
const RUN_TIMEOUT_MS = 240_000;

const missing = [...(postgresBinDir() ? [] : ['PostgreSQL (apt-get install -y postgresql)']), ...findServerBinaries().missing];
if (missing.length > 0 && loadTestConfig().ci) throw new Error(`npm run bench:stack-floor cannot run in CI: missing ${missing.join('; ')}`);
const skipRun = missing.length > 0 ? `missing: ${missing.join('; ')}` : false;

const parts = (workers: number, server: number, postgres: number, sandbox: number) => ({ workers, server, postgres, sandbox });

void describe('stack-floor figures', () => {
  void it("takes the stack's idle over the batch's time out of each part, per run, never below 0", () => {
    const sample: BatchSample = { runs: 10, seconds: 2, cpuMs: parts(600, 500, 300, 20), idleMsPerSecond: parts(50, 25, 10, 20) };
    assert.deepEqual(perRun(sample), parts(50, 45, 28, 0));
    assert.equal(totalOf(perRun(sample)), 123);
  });

  void it('gives each side the median of its batches, and a line that reads back', () => {
    const batch = (workers: number): BatchSample => ({ runs: 1, seconds: 1, cpuMs: parts(workers, 40, 20, 0), idleMsPerSecond: parts(0, 0, 0, 0) });
    const product = sideFigures([batch(60), batch(50), batch(90)]);
    assert.equal(product.totalMs, 120);
    assert.equal(product.parts.workers, 60);
    const floor = sideFigures([batch(20), batch(25), batch(30)]);
    const line = stackFloorLine(product, floor, 20);
    assert.equal(
      line,
      'stack floor: product 120.0 ms, floor 85.0 ms of stack CPU a run (1.41x); workers 60.0 / 25.0, server 40.0 / 40.0, postgres 20.0 / 20.0, sandbox 0.0 / 0.0; medians of 3 batches of 20 a side, alternating',
    );
    assert.deepEqual(parseStackFloorLine(line), { kind: 'floor', productMs: 120, floorMs: 85, ratio: 1.41, batches: 3, perBatch: 20 });
    assert.equal(parseStackFloorLine(`${line} and more`), undefined);
    const withCalls = stackFloorLine(product, sideFigures([batch(40), batch(45), batch(50)]), 20, 'floor with calls');
    assert.match(
      withCalls,
      /^stack floor with the service's calls: product 120\.0 ms, floor with calls 105\.0 ms of stack CPU a run \(1\.14x\); workers 60\.0 \/ 45\.0, /,
    );
    assert.deepEqual(parseStackFloorLine(withCalls), { kind: 'floor with calls', productMs: 120, floorMs: 105, ratio: 1.14, batches: 3, perBatch: 20 });
    assert.equal(
      parseStackFloorLine(withCalls.replace("stack floor with the service's calls:", 'stack floor:')),
      undefined,
      'a title that does not name its floor',
    );
  });
});

void describe('npm run bench:stack-floor', () => {
  void it('refuses a bad argument with exit code 2, naming it', async () => {
    const { code, output } = await runHarness(ENTRY, ['--batches', 'many'], 60_000);
    assert.equal(code, 2, failureReport(output));
    assert.match(output, /--batches must be an integer from 1 to 50, got "many"/);
    const runtime = await runHarness(ENTRY, ['--worker-runtime', 'bun'], 60_000);
    assert.equal(runtime.code, 2, failureReport(runtime.output));
    assert.match(runtime.output, /--worker-runtime must be compiled or tsx, got "bun"/);
  });

  void it(
    'measures both sides on the production stack: the closing line parses, each side above 0',
    { timeout: RUN_TIMEOUT_MS + 20_000, skip: skipRun },
    async () => {
      // The product's worker through tsx: no `npm run build` into dist/ while another test (bench:burst's floor) may build there.
      const { code, stdout, output } = await runHarness(ENTRY, ['--batches', '2', '--per-batch', '4', '--worker-runtime', 'tsx'], RUN_TIMEOUT_MS, 'SIGTERM');
      assert.equal(code, 0, failureReport(output));
      const figures = parseStackFloorLine(stdout.trimEnd().split('\n').at(-1) ?? '');
      assert.ok(figures, `the last line is not the closing line\n${failureReport(output)}`);
      assert.equal(figures.batches, 2);
      assert.equal(figures.perBatch, 4);
      assert.ok(figures.productMs > 0 && figures.floorMs > 0, `each side cost the stack something\n${failureReport(output)}`);
      const events = /^history events a run: product \d+, floor (\d+), floor with calls (\d+)$/m.exec(stdout);
      assert.ok(events, failureReport(output));
      assert.equal(events[2], events[1], "the calls shape's history is the floor's shape");
      const withCalls = parseStackFloorLine(stdout.trimEnd().split('\n').at(-2) ?? '');
      assert.equal(withCalls?.kind, 'floor with calls', `the line before the closing one compares with the floor with calls\n${failureReport(output)}`);
      assert.ok(withCalls.floorMs > 0, failureReport(output));
      assert.match(stdout, /^the service's calls alone: floor with calls [\d.]+ ms against the floor's [\d.]+ ms of stack CPU a run \([\d.]+x\)$/m);
    },
  );
});
