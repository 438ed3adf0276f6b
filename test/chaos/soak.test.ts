/**
 * `npm run chaos:soak`, small: its command line (the runs it plans, the options it refuses), then
 * two chaos runs of a few connections with kills and a server restart plus the run whose states are
 * queried every 100 ms, as subprocesses: each run's summary line with its seed, the soak's last line,
 * nothing stuck. Then a run made to miss its deadline: the soak fails it and keeps its directory with
 * the stuck connections' diagnosis and the run's output. No timing is asserted.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { ChaosArgumentError } from '../../scripts/chaos/options.js';
import { parseChaosSummaryLine, type ParsedChaosSummary } from '../../scripts/chaos/report.js';
import {
  CHAOS_OUTPUT_FILE,
  isClean,
  parseSoakArgs,
  parseSoakSummaryLine,
  runSeeds,
  soakSummaryLine,
  soakTotals,
  SOAK_DEFAULTS,
} from '../../scripts/chaos/soak-options.js';
import { failureReport, runHarness } from '../helpers/harness-run.js';

const SOAK_ENTRY = 'scripts/chaos/soak.ts';
/** Three small runs take 1 to 3 minutes on 2 shared cores, more beside the suite's heaviest files; this test sets its own limit. */
// A hang detector, not a speed target: a loaded CI machine once took 197 s, a busier one more than 270 s.
const SMALL_SOAK_TIMEOUT_MS = 390_000;
const STUCK_RUN_TIMEOUT_MS = 150_000;
const SMALL = ['--connections', '6', '--reply-delay-ms', '300', '--kill-every-ms', '2000', '--server-restart-at-ms', '3000'];

const keptDirs: string[] = [];
after(async () => {
  for (const dir of keptDirs) await rm(dir, { recursive: true, force: true });
});

/** `soak: run i/n[ (states queried every Q ms)], seed S, <time>[, NOT CLEAN (...)]: <verdict>` lines. */
function runLines(stdout: string): { seed: number; queried: boolean; clean: boolean; summary: ParsedChaosSummary | undefined }[] {
  return [...stdout.matchAll(/^soak: run \d+\/\d+( \(states queried every \d+ ms\))?, seed (\d+), [^:]*?(, NOT CLEAN \([^)]*\))?: (.*)$/gm)].map((match) => ({
    seed: Number(match[2]),
    queried: match[1] !== undefined,
    clean: match[3] === undefined,
    summary: parseChaosSummaryLine(match[4] ?? ''),
  }));
}

void describe('npm run chaos:soak: its command line', () => {
  const parse = (...argv: string[]) => parseSoakArgs(argv, () => 42);

  void it('plans ten runs of 150 connections with 2 s replies and one query run, each with its own seed, keeping logs', () => {
    const options = parse();
    assert.ok(options);
    assert.equal(options.soakSeed, 42);
    assert.equal(options.runs.length, SOAK_DEFAULTS.runs + 1);
    assert.equal(new Set(options.runs.map((run) => run.seed)).size, options.runs.length, 'distinct seeds');
    assert.deepEqual(
      options.runs.map((run) => run.seed),
      runSeeds(42, 11),
      'the soak seed repeats the run seeds',
    );
    for (const run of options.runs.slice(0, -1)) {
      assert.deepEqual(run.args, ['--connections', '150', '--reply-delay-ms', '2000', '--seed', String(run.seed), '--keep-logs']);
      assert.equal(run.queryEveryMs, undefined);
    }
    const queryRun = options.runs.at(-1);
    assert.equal(queryRun?.queryEveryMs, 100);
    assert.deepEqual(queryRun?.args.slice(0, 6), ['--connections', '150', '--reply-delay-ms', '2000', '--query-every-ms', '100']);
  });

  void it('passes other chaos options through, its sizes given or not', () => {
    const options = parse('--runs', '2', '--query-run', 'off', '--connections=12', '--workers', '3', '--seed', '7');
    assert.ok(options);
    assert.equal(options.runs.length, 2);
    assert.deepEqual(options.chaosArgs, ['--reply-delay-ms', '2000', '--connections=12', '--workers', '3']);
    assert.equal(parse('--runs', '0')?.runs.length, 1, 'the query run alone');
    assert.equal(parse('--help'), undefined);
  });

  void it('refuses bad arguments naming the option, its own or a chaos one', () => {
    const refused = (argv: string[], argument: string, problem: RegExp) =>
      assert.throws(
        () => parse(...argv),
        (error: unknown) => error instanceof ChaosArgumentError && error.argument === argument && problem.test(error.problem),
      );
    refused(['--runs', 'ten'], '--runs', /whole number/);
    refused(['--query-run', 'yes'], '--query-run', /on or off/);
    refused(['--query-every-ms', '5'], '--query-every-ms', /from 10/);
    refused(['--query-run', 'off', '--query-every-ms', '50'], '--query-every-ms', /query run/);
    refused(['--runs', '0', '--query-run', 'off'], '--runs', /nothing to run/);
    refused(['--run-timeout-ms', '10'], '--run-timeout-ms', /from 60000/);
    refused(['--workers', '0'], '--workers', /from 1 to 32/);
    refused(['--frobnicate'], '--frobnicate', /unknown option/);
  });

  void it('sums the runs into its last line and reads it back', () => {
    const summary = parseChaosSummaryLine(
      'chaos: 6 connections, 6 completed as expected, 0 unexpected failures, 0 stuck, 0 duplicate answers, 0 data mismatches; replayed 6 histories, 0 nondeterminism, 0 replay errors; failed queries: none',
    );
    const stuck = parseChaosSummaryLine(
      'chaos: 6 connections, 5 completed as expected, 0 unexpected failures, 1 stuck, 0 duplicate answers, 0 data mismatches; replayed 6 histories, 0 nondeterminism, 0 replay errors; failed queries: FAILED_PRECONDITION 3',
    );
    assert.ok(isClean(0, summary));
    assert.ok(!isClean(1, summary));
    assert.ok(!isClean(0, stuck));
    assert.ok(!isClean(0, undefined));
    const line = soakSummaryLine(
      soakTotals([
        { run: { index: 1, seed: 11, args: [] }, summary, clean: true },
        { run: { index: 2, seed: 22, args: [] }, summary: stuck, clean: false },
        { run: { index: 3, seed: 33, queryEveryMs: 100, args: [] }, summary: undefined, clean: false },
      ]),
    );
    assert.equal(
      line,
      'soak: 3 runs, 12 connections, 11 completed as expected, 0 unexpected failures, 1 stuck, 0 duplicate answers, 0 data mismatches, 0 nondeterminism, 0 replay errors, 2 failed runs; seeds 11, 22, 33 (states queried every 100 ms)',
    );
    const parsed = parseSoakSummaryLine(`soak: seed 1\n${line}\n`);
    assert.ok(parsed);
    assert.equal(parsed.runs, 3);
    assert.equal(parsed.stuck, 1);
    assert.equal(parsed.failedRuns, 2);
    assert.deepEqual(parsed.seeds, [11, 22, 33]);
  });
});

void describe('npm run chaos:soak, small', () => {
  void it('refuses a bad argument with exit code 2, naming it', async () => {
    const { code, output } = await runHarness(SOAK_ENTRY, ['--query-every-ms', '5'], 60_000);
    assert.equal(code, 2, failureReport(output));
    assert.match(output, /^soak: --query-every-ms: must be from 10/m);
  });

  void it(
    'runs two seeds and the query run through kills and a restart: every line parses, nothing stuck',
    { timeout: SMALL_SOAK_TIMEOUT_MS + 20_000 },
    async () => {
      const { code, signal, stdout, output } = await runHarness(SOAK_ENTRY, ['--runs', '2', ...SMALL], SMALL_SOAK_TIMEOUT_MS, 'SIGTERM');
      const report = `\n${failureReport(output)}`;
      const runs = runLines(stdout);
      assert.equal(runs.length, 3, `three run lines (exit ${code ?? signal})${report}`);
      assert.deepEqual(
        runs.map((run) => run.queried),
        [false, false, true],
        report,
      );
      for (const run of runs) {
        assert.ok(run.summary, `a chaos summary line for seed ${run.seed}${report}`);
        assert.equal(run.summary.stuck, 0, `stuck connections in seed ${run.seed}${report}`);
      }
      assert.match(stdout, /^soak: {3}State watchers: every running connection's state queried every 100 ms/m, report);
      const soak = parseSoakSummaryLine(stdout);
      assert.ok(soak, `no soak line${report}`);
      assert.equal(stdout.trimEnd().split('\n').at(-1), soak.line, 'the soak line is the last line of stdout');
      assert.equal(soak.runs, 3, report);
      assert.equal(soak.stuck, 0, report);
      assert.deepEqual(
        soak.seeds,
        runs.map((run) => run.seed),
        report,
      );
      assert.equal(new Set(soak.seeds).size, 3, 'distinct seeds');
      assert.equal(soak.connections, 18, report);
      assert.equal(soak.failedRuns, 0, report);
      assert.doesNotMatch(stdout, /run directory kept/, 'a clean run leaves no directory');
      assert.equal(code, 0, `exit code${report}`);
    },
  );

  void it('fails a run with a stuck connection and keeps its directory, diagnosis and output', { timeout: STUCK_RUN_TIMEOUT_MS + 20_000 }, async () => {
    // Replies held 8 s, a deadline 10 s after the first start: both connections are still running then.
    const args = [
      '--runs',
      '1',
      '--query-run',
      'off',
      '--connections',
      '2',
      '--reply-delay-ms',
      '8000',
      '--deadline-ms',
      '10000',
      '--kill-every-ms',
      '0',
      '--server-restart-at-ms',
      '0',
    ];
    const { code, stdout, output } = await runHarness(SOAK_ENTRY, args, STUCK_RUN_TIMEOUT_MS, 'SIGTERM');
    const report = `\n${failureReport(output)}`;
    const kept = /^soak: {3}run directory kept: (\S+) /m.exec(stdout)?.[1];
    if (kept) keptDirs.push(kept);
    const [run] = runLines(stdout);
    assert.ok(run && !run.clean, `the run is not clean${report}`);
    assert.ok((run.summary?.stuck ?? 0) > 0, report);
    assert.ok(kept, `the run directory is kept${report}`);
    assert.ok(existsSync(join(kept, 'stuck-diagnosis.txt')), report);
    assert.match(await readFile(join(kept, CHAOS_OUTPUT_FILE), 'utf8'), /^chaos: \d+ connections, .* stuck/m);
    assert.match(stdout, /^soak: {3}\| Stuck: \d+ connection\(s\) still running at the deadline/m, report);
    const soak = parseSoakSummaryLine(stdout);
    assert.ok(soak, report);
    assert.equal(soak.failedRuns, 1, report);
    assert.ok(soak.stuck > 0, report);
    assert.equal(code, 1, `exit code${report}`);
  });
});
