/**
 * `npm run bench:waiting` (bench/waiting-curve.ts): its command line, each mistake refused by name,
 * and a small run as a subprocess on the dev server: every N's line must show each connection
 * completed, none lost, no failed wait, no answer refused, and figures for the memory, the server
 * and the latencies. Never a timed assertion: the figures are the benchmark's, not verdicts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseWaitingCurveArgs, WaitingCurveArgumentError } from '../../bench/waiting-curve/options.js';
import { failureReport, runHarness } from '../helpers/harness-run.js';

const ENTRY = 'bench/waiting-curve.ts';
// A hang guard: the small run takes about a minute and a half alone.
const RUN_TIMEOUT_MS = 420_000;
const FIGURE = '-?\\d+(?:\\.\\d+)?';

const refused = (argv: string[], message: RegExp) =>
  assert.throws(
    () => parseWaitingCurveArgs(argv),
    (error: unknown) => error instanceof WaitingCurveArgumentError && message.test(error.message),
    `${argv.join(' ')} refused with ${String(message)}`,
  );

void describe('npm run bench:waiting: its command line', () => {
  void it("has the issue's curve for its defaults, and reads either form of a value", () => {
    const defaults = parseWaitingCurveArgs([]);
    assert.deepEqual(defaults?.sizes, [1000, 3000, 10000]);
    assert.equal(defaults?.probes, 50);
    assert.deepEqual(
      parseWaitingCurveArgs(['--sizes=20,40', '--probes=5', '--hold=2', '--worker-runtime=tsx']),
      parseWaitingCurveArgs(['--sizes', '20,40', '--probes', '5', '--hold', '2', '--worker-runtime', 'tsx']),
    );
    assert.equal(parseWaitingCurveArgs(['--help']), undefined);
  });

  void it('refuses each mistake by name', () => {
    refused(['--sizes', '1000,lots'], /^--sizes must be an integer from 1 to 20000, got "lots"$/);
    refused(['--sizes', '30000'], /^--sizes must be an integer from 1 to 20000, got "30000"$/);
    refused(['--sizes', '10', '--probes', '20'], /^--probes \(20\) must not exceed the smallest of --sizes \(10\)/);
    refused(['--hold', '0'], /^--hold must be an integer from 1 to 3600, got "0"$/);
    refused(['--worker-runtime', 'bun'], /^--worker-runtime must be compiled or tsx, got "bun"$/);
    refused(['--probes', '5', '--probes', '6'], /^--probes given twice$/);
    refused(['--help=yes'], /^--help takes no value$/);
    refused(['--size', '10'], /^--size unknown option$/);
    refused(['10000'], /^10000 unexpected argument/);
  });
});

void describe('npm run bench:waiting', () => {
  void it('refuses a bad argument with exit code 2 and the usage, no stack trace', async () => {
    const { code, output } = await runHarness(ENTRY, ['--sizes', 'many'], 60_000);
    assert.equal(code, 2, failureReport(output));
    assert.match(output, /--sizes must be an integer from 1 to 20000, got "many"/);
    assert.match(output, /usage: npm run bench:waiting/);
    assert.doesNotMatch(output, /\n\s+at /);
  });

  void it('holds each N awaiting an answer, measures them, and completes every one once answered', { timeout: RUN_TIMEOUT_MS + 20_000 }, async () => {
    // The worker through tsx: no `npm run build` into dist/ while another test may build there.
    const { code, stdout, output } = await runHarness(
      ENTRY,
      ['--sizes', '10,30', '--probes', '3', '--hold', '1', '--worker-runtime', 'tsx'],
      RUN_TIMEOUT_MS,
      'SIGTERM',
    );
    assert.equal(code, 0, failureReport(output));
    for (const [size, total] of [
      [10, 13],
      [30, 33],
    ]) {
      const line = new RegExp(
        `^waiting N=${size}: started in ${FIGURE} s .*worker RSS ${FIGURE} MiB .*heap ${FIGURE} MiB .*server CPU ${FIGURE}% of a core.*database ${FIGURE} MiB .*` +
          `answer p50 ${FIGURE} ms p99 ${FIGURE} ms \\(3 waiting connections.*first challenge p50 ${FIGURE} ms p99 ${FIGURE} ms \\(3 arriving\\) .*` +
          `completed ${total}/${total} lost 0 failed waits 0 .* answers not accepted 0$`,
        'm',
      );
      assert.match(stdout, line, output);
    }
    assert.match(stdout, /^waiting curve: at N=30 worker peak RSS \d+ MiB, answer p99 [\d.]+x N=10's; lost 0, failed waits 0$/m, output);
    assert.doesNotMatch(stdout, /n\/a|NaN/, 'every figure measured');
  });
});
