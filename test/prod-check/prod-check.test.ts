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
import { describe, it } from 'node:test';
import { postgresBinDir } from '../../scripts/prod-check/postgres.js';
import { findServerBinaries } from '../../scripts/prod-check/temporal-server.js';
import { assertCleanSummary, runHarness, tail } from '../helpers/harness-run.js';

const ENTRY = 'scripts/prod-check/prod-check.ts';
const RUN_TIMEOUT_MS = 270_000;

const missing = [...(postgresBinDir() ? [] : ['PostgreSQL (apt-get install -y postgresql)']), ...findServerBinaries().missing];
if (missing.length > 0 && process.env.CI) throw new Error(`npm run prod:check cannot run in CI: missing ${missing.join('; ')}`);
const skipFullRun = missing.length > 0 ? `missing: ${missing.join('; ')}` : false;

void describe('npm run prod:check', () => {
  void it('refuses a bad argument with exit code 2, naming the argument', async () => {
    const { code, output } = await runHarness(ENTRY, ['--workers', '1'], 60_000);
    assert.equal(code, 2, tail(output));
    assert.match(output, /--workers: must be from 2 to 32/);
  });

  void it(
    'loses, fails, sticks, duplicates and corrupts nothing on PostgreSQL and the Temporal server through a SIGKILL, a SIGTERM drain and a server restart',
    { timeout: RUN_TIMEOUT_MS + 20_000, skip: skipFullRun },
    async () => {
      // SIGTERM first on a timeout: prod-check stops its PostgreSQL (not a child of ours) before it goes.
      const run = await runHarness(ENTRY, [], RUN_TIMEOUT_MS, 'SIGTERM');
      const report = `\n${tail(run.output)}`;
      assert.match(run.stdout, /^Drain: .*: ok$/m, `the SIGTERMed worker drained${report}`);
      assert.match(run.stdout, /Temporal server stopped in .*up again|Temporal server SIGKILLed .*up again/, `the server restarted${report}`);
      assertCleanSummary('prod-check', run);
    },
  );
});
