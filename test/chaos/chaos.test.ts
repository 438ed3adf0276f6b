/**
 * The default chaos run (`npm run chaos`), as a subprocess: its own dev server on a SQLite file and
 * free ports, the sandbox behind the delaying proxy, worker processes SIGKILLed and the server
 * restarted. No connection may be lost, fail, stick, answer twice or come back with wrong data.
 * It ignores the shared test server (TEMPORAL_TEST_ADDRESS): restarting that would hurt other files.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { assertCleanSummary, runHarness, tail } from '../helpers/harness-run.js';

const CHAOS_ENTRY = 'scripts/chaos/chaos.ts';
/** The default run takes 1 to 3 minutes on 2 cores; the runner's per-test limit is 5. */
const RUN_TIMEOUT_MS = 270_000;

void describe('npm run chaos', () => {
  void it('refuses a bad argument with exit code 2, naming the argument', async () => {
    const { code, output } = await runHarness(CHAOS_ENTRY, ['--connections', 'many'], 60_000);
    assert.equal(code, 2, tail(output));
    assert.match(output, /--connections: must be a whole number/);
  });

  void it('loses, fails, sticks, duplicates and corrupts nothing through worker kills, a server restart and slow replies', { timeout: RUN_TIMEOUT_MS + 20_000 }, async () => {
    assertCleanSummary('chaos', await runHarness(CHAOS_ENTRY, [], RUN_TIMEOUT_MS));
  });
});
