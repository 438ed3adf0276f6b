/**
 * The default chaos run (`npm run chaos`), as a subprocess: its own dev server on a SQLite file and
 * free ports, the sandbox behind the delaying proxy, worker processes SIGKILLed and the server
 * restarted. No connection may be lost, fail, stick, answer twice or come back with wrong data, and
 * every history the run made must replay against the code that made it. Failed queries are counted
 * by gRPC code name. The run keeps its directory (--keep-logs): its payload key must be there,
 * owner-only, and its kept histories must replay again without the server, against today's sources.
 * It ignores the shared test server (TEMPORAL_TEST_ADDRESS): restarting that would hurt other files.
 */
import assert from 'node:assert/strict';
import { readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { parseChaosSummaryLine } from '../../scripts/chaos/report.js';
import { RUN_KEY_FILE, REPLAY_ENTRY } from '../../scripts/chaos/run-key.js';
import { failureReport, runHarness } from '../helpers/harness-run.js';

const CHAOS_ENTRY = 'scripts/chaos/chaos.ts';
/** The default run takes 1 to 3 minutes on 2 cores; the runner's per-test limit is 5. */
const RUN_TIMEOUT_MS = 270_000;
/** Bundling today's sources and replaying ~20 histories. */
const REPLAY_TIMEOUT_MS = 120_000;

let keptDir: string | undefined;

after(async () => {
  if (keptDir) await rm(keptDir, { recursive: true, force: true });
});

void describe('npm run chaos', () => {
  void it('refuses a bad argument with exit code 2, naming the argument', async () => {
    const { code, output } = await runHarness(CHAOS_ENTRY, ['--connections', 'many'], 60_000);
    assert.equal(code, 2, failureReport(output));
    assert.match(output, /--connections: must be a whole number/);
  });

  void it(
    'loses, fails, sticks, duplicates and corrupts nothing through worker kills, a server restart and slow replies, and its histories replay',
    { timeout: RUN_TIMEOUT_MS + 20_000 },
    async () => {
      const { code, signal, stdout, output } = await runHarness(CHAOS_ENTRY, ['--keep-logs'], RUN_TIMEOUT_MS);
      const report = `\n${failureReport(output)}`;
      keptDir = /^chaos: logs, bundle, histories and the server's database kept in (\S+)$/m.exec(stdout)?.[1];
      assert.ok(keptDir, `--keep-logs named no kept directory (exit ${code ?? signal})${report}`);
      const summary = parseChaosSummaryLine(stdout);
      assert.ok(summary, `no summary line (exit ${code ?? signal})${report}`);
      assert.equal(stdout.trimEnd().split('\n').at(-1), summary.line, 'the summary line is the last line of stdout');
      assert.ok(summary.connections > 0, report);
      assert.equal(summary.unexpectedFailures, 0, `unexpected failures${report}`);
      assert.equal(summary.stuck, 0, `stuck connections${report}`);
      assert.equal(summary.duplicateAnswers, 0, `duplicate answers${report}`);
      assert.equal(summary.dataMismatches, 0, `data mismatches${report}`);
      assert.equal(summary.completedAsExpected, summary.connections, `every connection completed as expected${report}`);
      // Every connection's history at least (a connection may start others), each replayed cleanly.
      assert.ok(summary.replayed >= summary.connections, `replayed ${summary.replayed} histories for ${summary.connections} connections${report}`);
      assert.equal(summary.nondeterminism, 0, `nondeterminism${report}`);
      assert.equal(summary.replayErrors, 0, `replay errors${report}`);
      // Failed queries (a restart, a kill) are counted under gRPC code names, never bare numbers.
      for (const [name, count] of summary.failedQueries) {
        assert.match(name, /^[A-Z][A-Z_]+$|^[A-Za-z]+Error$/, `failed-query code ${name}${report}`);
        assert.ok(count > 0, report);
      }
      assert.match(stdout, /^Failed queries by gRPC code: /m, report);
      assert.match(stdout, /^Replay: \d+ histories .* replayed against the run's workflow bundle/m, report);
      assert.equal(code, 0, `exit code${report}`);
    },
  );

  void it(
    'keeps the payload key owner-only beside the kept logs, and the kept histories replay without the server',
    { timeout: REPLAY_TIMEOUT_MS + 20_000 },
    async () => {
      // The run above asserts that it kept a directory: without one this fails, it does not skip.
      assert.ok(keptDir, 'the run above kept no directory (it failed before naming one)');
      const keyFile = join(keptDir, RUN_KEY_FILE);
      assert.equal((await stat(keyFile)).mode & 0o777, 0o600, 'the key file is readable by its owner only');
      assert.match(await readFile(keyFile, 'utf8'), /^chaos-[a-z0-9]+:[A-Za-z0-9+/]{43}=\n$/);
      const kept = await runHarness(REPLAY_ENTRY, [keptDir], REPLAY_TIMEOUT_MS);
      assert.equal(kept.code, 0, failureReport(kept.output));
      assert.match(
        kept.stdout,
        /^Replay: \d+ histories .* against today's workflow sources .*: 0 nondeterminism, 0 replay errors$/m,
        failureReport(kept.output),
      );
    },
  );
});
