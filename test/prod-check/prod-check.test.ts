/**
 * `npm run prod:check` at a small size, as a subprocess: PostgreSQL (Debian's), the Temporal server
 * built from go.temporal.io/server, three workers, one SIGKILLed, one SIGTERMed (it must drain and
 * exit 0), the server restarted once. Nothing may be lost, fail, stick, answer twice or be wrong.
 * It ignores the shared dev server (TEMPORAL_TEST_ADDRESS).
 *
 * Without PostgreSQL or the server binaries it is skipped, saying why, on a developer's machine
 * (`apt-get install -y postgresql`; `bash scripts/provision-temporal.sh server`), and fails in CI,
 * where .ci/run and the pretest provide both.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { postgresBinDir } from '../../scripts/prod-check/postgres.js';
import { findServerBinaries } from '../../scripts/prod-check/temporal-server.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const ENTRY = 'scripts/prod-check/prod-check.ts';
const RUN_TIMEOUT_MS = 270_000;
const SUMMARY = /^prod-check: (\d+) connections, (\d+) completed as expected, (\d+) unexpected failures, (\d+) stuck, (\d+) duplicate answers, (\d+) data mismatches$/m;

function runProdCheck(args: readonly string[], timeoutMs: number): Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', ENTRY, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let output = '';
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
      output += chunk.toString('utf8');
    });
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    const timer = setTimeout(() => {
      output += `\n[test] no end after ${timeoutMs} ms: SIGTERM to the prod-check process group\n`;
      // SIGTERM first: prod-check stops its PostgreSQL (not a child of ours) before it goes.
      if (child.pid !== undefined) process.kill(-child.pid, 'SIGTERM');
      setTimeout(() => child.pid !== undefined && child.exitCode === null && process.kill(-child.pid, 'SIGKILL'), 5_000).unref();
    }, timeoutMs);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, output });
    });
  });
}

const tail = (output: string, lines = 100) => output.trimEnd().split('\n').slice(-lines).join('\n');

const missing = [...(postgresBinDir() ? [] : ['PostgreSQL (apt-get install -y postgresql)']), ...findServerBinaries().missing];
if (missing.length > 0 && process.env.CI) throw new Error(`npm run prod:check cannot run in CI: missing ${missing.join('; ')}`);
const skipFullRun = missing.length > 0 ? `missing: ${missing.join('; ')}` : false;

void describe('npm run prod:check', () => {
  void it('refuses a bad argument with exit code 2, naming the argument', async () => {
    const { code, output } = await runProdCheck(['--workers', '1'], 60_000);
    assert.equal(code, 2, tail(output));
    assert.match(output, /--workers: must be from 2 to 32/);
  });

  void it(
    'loses, fails, sticks, duplicates and corrupts nothing on PostgreSQL and the Temporal server through a SIGKILL, a SIGTERM drain and a server restart',
    { timeout: RUN_TIMEOUT_MS + 20_000, skip: skipFullRun },
    async () => {
      const { code, signal, stdout, output } = await runProdCheck([], RUN_TIMEOUT_MS);
      const summary = SUMMARY.exec(stdout);
      assert.ok(summary, `no summary line (exit ${code ?? signal}):\n${tail(output)}`);
      const [, total, expected, unexpected, stuck, duplicates, mismatches] = summary.map(Number);
      const report = `\n${tail(output)}`;
      assert.ok((total ?? 0) > 0, report);
      assert.equal(unexpected, 0, `unexpected failures${report}`);
      assert.equal(stuck, 0, `stuck connections${report}`);
      assert.equal(duplicates, 0, `duplicate answers${report}`);
      assert.equal(mismatches, 0, `data mismatches${report}`);
      assert.equal(expected, total, `every connection completed as expected${report}`);
      assert.match(stdout, /^Drain: .*: ok$/m, `the SIGTERMed worker drained${report}`);
      assert.match(stdout, /Temporal server stopped in .*up again|Temporal server SIGKILLed .*up again/, `the server restarted${report}`);
      assert.equal(stdout.trimEnd().split('\n').at(-1), summary[0], 'the summary line is the last line of stdout');
      assert.equal(code, 0, `exit code${report}`);
    },
  );
});
