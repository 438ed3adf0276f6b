/**
 * The default chaos run (`npm run chaos`), as a subprocess: its own dev server on a SQLite file and
 * free ports, the sandbox behind the delaying proxy, worker processes SIGKILLed and the server
 * restarted. No connection may be lost, fail, stick, answer twice or come back with wrong data.
 * It ignores the shared test server (TEMPORAL_TEST_ADDRESS): restarting that would hurt other files.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CHAOS_ENTRY = 'scripts/chaos/chaos.ts';
/** The default run takes 1 to 3 minutes on 2 cores; the runner's per-test limit is 5. */
const RUN_TIMEOUT_MS = 270_000;
const SUMMARY = /^chaos: (\d+) connections, (\d+) completed as expected, (\d+) unexpected failures, (\d+) stuck, (\d+) duplicate answers, (\d+) data mismatches$/m;

interface ChaosExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  /** stdout and stderr as they came, for failure messages. */
  readonly output: string;
}

/** Runs the chaos entry in its own process group, so a timeout kills it with every server and worker it started. */
function runChaos(args: readonly string[], timeoutMs: number): Promise<ChaosExit> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', CHAOS_ENTRY, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let output = '';
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
      output += chunk.toString('utf8');
    });
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    const timer = setTimeout(() => {
      output += `\n[test] no end after ${timeoutMs} ms: SIGKILL to the chaos process group\n`;
      if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
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

function tail(output: string, lines = 80): string {
  return output.trimEnd().split('\n').slice(-lines).join('\n');
}

void describe('npm run chaos', () => {
  void it('refuses a bad argument with exit code 2, naming the argument', async () => {
    const { code, output } = await runChaos(['--connections', 'many'], 60_000);
    assert.equal(code, 2, tail(output));
    assert.match(output, /--connections: must be a whole number/);
  });

  void it('loses, fails, sticks, duplicates and corrupts nothing through worker kills, a server restart and slow replies', { timeout: RUN_TIMEOUT_MS + 20_000 }, async () => {
    const { code, signal, stdout, output } = await runChaos([], RUN_TIMEOUT_MS);
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
    assert.equal(stdout.trimEnd().split('\n').at(-1), summary[0], 'the summary line is the last line of stdout');
    assert.equal(code, 0, `exit code${report}`);
  });
});
