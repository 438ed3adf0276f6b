// npm test: needs a server
/**
 * The test runner's judgements (scripts/run-tests.mjs), on the fixture files of test/fixtures/run-tests
 * (which the suite itself leaves out): a file that defines no test, one that exits 0 halfway and one
 * that an open handle keeps alive each fail, named; failed and skipped tests are named, skips with what
 * they need; the totals line counts what ran, and a replay that fails is repeated just above it. One run of
 * the runner, its own dev server included.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { readTimings } from '../scripts/lib/test-plan.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const FIXTURES = 'test/fixtures/run-tests';

let run: { code: number | null; output: string };
const timingsDir = mkdtempSync(join(tmpdir(), 'run-tests-timings-'));
const timingsFile = join(timingsDir, 'test-timings.json');

before(async () => {
  const child = spawn(process.execPath, ['scripts/run-tests.mjs', '--dir', FIXTURES], {
    cwd: root,
    env: {
      ...process.env,
      TEST_FILE_TIMEOUT_S: '3',
      TEST_CONCURRENCY: '2',
      TEST_TIMINGS_FILE: timingsFile,
      // The fixtures run no workflow: requiring one replayed history makes the replay fail, as a CI run's would.
      REPLAY_MIN_HISTORIES: '1',
      FORCE_COLOR: '0',
      NO_COLOR: '1',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('close', (exitCode) => resolve(exitCode)));
  run = { code, output };
});

after(() => rmSync(timingsDir, { recursive: true, force: true }));

/** The runner's closing verdict line on `file`. */
function verdict(file: string): string {
  const summary = run.output.slice(run.output.indexOf('\nrun-tests: files\n'));
  const line = summary.split('\n').find((text) => text.includes(` ${FIXTURES}/${file} (`));
  assert.ok(line, `no verdict on ${file} in:\n${run.output}`);
  return line;
}

void describe('scripts/run-tests.mjs', () => {
  void it('fails the run when a file fails', () => {
    assert.equal(run.code, 1, run.output);
  });

  void it('fails a file that defines no test, naming it', () => {
    assert.match(verdict('no-tests.test.ts'), /^✖ .*: ran no test/);
  });

  void it('fails a file that exits 0 halfway, naming it', () => {
    assert.match(verdict('exits-halfway.test.ts'), /^✖ .*: (ran no test|cut short).*exit code 0/);
  });

  void it('kills a file that an open handle keeps alive at TEST_FILE_TIMEOUT_S, naming it', () => {
    assert.match(verdict('hangs.test.ts'), /^✖ .*: killed after 3 s \(TEST_FILE_TIMEOUT_S\)/);
    assert.match(run.output, /run-tests: test\/fixtures\/run-tests\/hangs\.test\.ts still running after 3 s/);
  });

  void it('names a failed test and its error', () => {
    assert.match(verdict('fails.test.ts'), /^✖ .*\(1 passed, 2 failed, 0 skipped, .*2 test\(s\) failed/);
    assert.match(run.output, /^✖ test\/fixtures\/run-tests\/fails\.test\.ts › fails: one is not two\n {4}what the closing summary repeats$/m);
  });

  void it("repeats a long error's head and tail, saying how many lines lie between", () => {
    const summary = run.output.slice(run.output.indexOf('run-tests: failed tests'));
    assert.match(summary, /^✖ test\/fixtures\/run-tests\/fails\.test\.ts › fails at length: a harness failed\n {4}output line 1\n/m);
    assert.match(summary, /^ {4}… 38 line\(s\) left out \(the file's output above has them all\) …\n {4}output line 50\n/m);
    assert.match(summary, /^ {4}output line 60\n {4}the summary line at its end$/m);
  });

  void it('passes a file whose tests pass, and names each skipped test with what it needs', () => {
    assert.match(verdict('passes.test.ts'), /^✔ .*\(2 passed, 0 failed, 2 skipped, /);
    assert.match(run.output, /^﹣ test\/fixtures\/run-tests\/passes\.test\.ts › a fixture that passes › needs a database # needs PostgreSQL$/m);
    assert.match(run.output, /^﹣ test\/fixtures\/run-tests\/passes\.test\.ts › a fixture that passes › skips itself # needs chromium$/m);
  });

  void it('closes with the totals alone on a line', () => {
    assert.match(run.output, /^5 passed, 2 failed, 2 skipped$/m);
    assert.match(run.output, /^ℹ failed files 4 \(/m);
  });

  void it("repeats the replay's failure just above the totals, where a log that keeps only its end shows it", () => {
    const slowest = run.output.lastIndexOf('\nslowest: ');
    const totals = run.output.indexOf('\nℹ files ');
    assert.ok(slowest >= 0 && totals > slowest, run.output);
    assert.match(
      run.output.slice(slowest, totals),
      /\nrun-tests: FAILED: the replay of the suite's histories \(scripts\/replay-suite\.ts\) exited with code 1\n {4}replay: FAILED: only 0 histories replayed, fewer than 1:/,
    );
    assert.ok(run.output.indexOf('\n5 passed, 2 failed, 2 skipped\n') > totals, 'the totals still close the summary');
  });

  void it("closes with the slowest files and the suite's figures", () => {
    const slowest = run.output.split('\n').filter((line) => line.startsWith('slowest: '));
    assert.equal(slowest.length, 6, run.output);
    assert.match(slowest[0]!, /^slowest: test\/fixtures\/run-tests\/hangs\.test\.ts \d+\.\d$/, 'the file killed at 3 s took longest');
    assert.match(run.output, /^suite: 6 files, 9 tests, \d+ s wall, \d+ s summed, concurrency 2$/m);
    // Each file's CPU, where the machine gives the runner a control group per file (as root on Linux).
    const cpu = run.output.split('\n').filter((line) => line.startsWith('cpu: '));
    if (cpu.length > 0) {
      assert.equal(cpu.length, 6, run.output);
      assert.match(run.output, /^ℹ cpu \d+ s summed over 6 files/m);
    }
  });

  void it('runs a file marked to run alone before the others, and records the seconds of every file that finished', () => {
    assert.match(run.output, /6 test file\(s\) that match \*\.test\.ts, concurrency 2, slowest first; 1 run alone first/);
    const recorded = readTimings(timingsFile);
    assert.deepEqual(
      Object.keys(recorded).sort(),
      ['alone', 'fails', 'no-tests', 'passes'].map((name) => `${FIXTURES}/${name}.test.ts`),
    );
  });

  void it('leaves the fixtures out of the suite', () => {
    const found = spawnSync(process.execPath, ['scripts/run-tests.mjs', 'fixtures/run-tests'], { cwd: root, encoding: 'utf8' });
    assert.equal(found.status, 1, found.stdout + found.stderr);
    assert.match(found.stderr, /run-tests: no test files under test\/ match "fixtures\/run-tests"/);
  });
});
