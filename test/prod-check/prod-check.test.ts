/**
 * `npm run prod:check` at a small size, as a subprocess: PostgreSQL (Debian's), the Temporal server
 * built from go.temporal.io/server, three workers, one SIGKILLed, one SIGTERMed (it must drain and
 * exit 0), the server restarted once. Nothing may be lost, fail, stick, answer twice or be wrong.
 * Then `--redeploy`: an upgrade's steps with no older release (the server SIGTERMed, the schema
 * tool's update-schema, a new server process on the same databases) while connections run. The
 * upgrade from older releases is `npm run prod:upgrade` (1.29.1 through 1.31.2 to 1.32.2), a
 * rehearsal of its own: the release before the production one costs a whole server build on a fresh
 * machine, and shares the production one's schema (1.19, visibility 1.14), so npm test's small
 * upgrade had no migration to prove (docs/reliability.md). Then `--tls` at a smaller size without chaos: the frontend over mutual TLS with a throwaway CA,
 * workers and the driver connected through the TEMPORAL_TLS_* variables, and the refusals (plain
 * TCP, no client certificate, another CA, another server name) each seen with its message; with
 * `--authorization` in the same run: the server's JWT authorizer on every call, the fleet's 12-s
 * tokens renewed through TEMPORAL_API_KEY_FILE past the first one's expiry, and tokens without the
 * role (none, read-only, another namespace's, expired, another audience's, an unpublished key's)
 * refused by name.
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
import { renderStrandedTasks } from '../../scripts/prod-check/stranded-tasks.js';
import { TEMPORAL_SERVER_VERSION, TEMPORAL_UPGRADE_PATH } from '../../scripts/lib/temporal-versions.js';
import { assertCleanSummary, failureReport, runHarness } from '../helpers/harness-run.js';
import { loadTestConfig } from '../../scripts/lib/test-settings.js';

const ENTRY = 'scripts/prod-check/prod-check.ts';
const RUN_TIMEOUT_MS = 270_000;
const TLS_RUN_TIMEOUT_MS = 180_000;

/** The redeploy: an upgrade's steps on the production release (the upgrade path is npm run prod:upgrade). */
const REDEPLOY_RUN_TIMEOUT_MS = 240_000;

const missing = [...(postgresBinDir() ? [] : ['PostgreSQL (apt-get install -y postgresql)']), ...findServerBinaries().missing];
if (missing.length > 0 && loadTestConfig().ci) throw new Error(`npm run prod:check cannot run in CI: missing ${missing.join('; ')}`);
const skipFullRun = missing.length > 0 ? `missing: ${missing.join('; ')}` : false;

/** The report's stranded-task count ("Stranded workflow tasks: N (...)"), 0 for "none". */
function strandedCount(stdout: string): number {
  const count = /^Stranded workflow tasks: (\d+|none)/m.exec(stdout)?.[1];
  assert.ok(count !== undefined, 'the report has its stranded workflow tasks line');
  return count === 'none' ? 0 : Number(count);
}

void describe('npm run prod:check', () => {
  void it('reports a stranded workflow task, when it was scheduled and refreshed, and how its connection ended', () => {
    assert.deepEqual(renderStrandedTasks([]), ['Stranded workflow tasks: none (no workflow task stayed SCHEDULED 30.0s with workers polling)']);
    const lines = renderStrandedTasks([
      {
        workflowId: 'connection-c-9:app-9',
        runId: 'r',
        attempt: 2,
        scheduledAtMs: 35_100,
        refreshes: [{ atMs: 66_000, ok: true, detail: '' }],
        endStatus: 'COMPLETED',
      },
      {
        workflowId: 'connection-c-3:app-3',
        runId: 'r',
        attempt: 1,
        scheduledAtMs: 36_000,
        refreshes: [{ atMs: 67_000, ok: false, detail: 'exit 1: unavailable' }],
        endStatus: 'RUNNING',
      },
    ]);
    assert.equal(strandedCount(lines.join('\n')), 2);
    assert.equal(lines[1], '  connection-c-9:app-9: attempt 2, scheduled at +35.1s; refreshed at +66.0s; at the end: COMPLETED');
    assert.match(lines[2]!, /refreshed at \+67\.0s \(FAILED: exit 1: unavailable\); at the end: RUNNING$/);
  });

  void it('refuses a bad argument with exit code 2, naming the argument', async () => {
    const { code, output } = await runHarness(ENTRY, ['--workers', '1'], 60_000);
    assert.equal(code, 2, failureReport(output));
    assert.match(output, /--workers: must be from 2 to 32/);
    const upgrade = await runHarness(ENTRY, ['--upgrade-from', '1.28.0'], 60_000);
    assert.equal(upgrade.code, 2, failureReport(upgrade.output));
    assert.match(upgrade.output, /--upgrade-from: must be a release of the upgrade path before \d+\.\d+\.\d+: .* \(got "1\.28\.0"\)/);
    const both = await runHarness(ENTRY, ['--redeploy', '--upgrade-from', TEMPORAL_UPGRADE_PATH.at(-2)!], 60_000);
    assert.equal(both.code, 2, failureReport(both.output));
    assert.match(both.output, /--redeploy: replaces the server with its own release: give it or an upgrade, not both/);
  });

  void it(
    `redeploys the server ${TEMPORAL_SERVER_VERSION} in place as an upgrade does (SIGTERM, the schema tool, a new server on the same databases) while connections run, and loses, sticks or corrupts nothing`,
    { timeout: REDEPLOY_RUN_TIMEOUT_MS + 20_000, skip: skipFullRun },
    async () => {
      const run = await runHarness(
        ENTRY,
        ['--redeploy', '--connections', '12', '--workers', '2', '--reply-delay-ms', '500'],
        REDEPLOY_RUN_TIMEOUT_MS,
        'SIGTERM',
      );
      const report = `\n${failureReport(run.output)}`;
      assert.match(
        run.stdout,
        new RegExp(`Temporal server ${TEMPORAL_SERVER_VERSION.replaceAll('.', '\\.')} → ${TEMPORAL_SERVER_VERSION.replaceAll('.', '\\.')}`),
        `it redeployed the production release${report}`,
      );
      assert.match(
        run.stdout,
        new RegExp(
          `schema migrated with ${TEMPORAL_SERVER_VERSION.replaceAll('.', '\\.')}'s sql tool .*; ${TEMPORAL_SERVER_VERSION.replaceAll('.', '\\.')} up on the same databases`,
        ),
        `the schema tool ran and the new server came up${report}`,
      );
      // A known defect of the in-place upgrade (docs/reliability.md): a workflow task scheduled as the
      // old server stops may never be delivered. The run regenerates such a task as an operator would (tdbg
      // workflow refresh-tasks), and every connection must then end as expected.
      const stranded = strandedCount(run.stdout);
      if (stranded > 0) console.log(`# the redeploy stranded ${stranded} workflow task(s); tdbg workflow refresh-tasks regenerated them (docs/reliability.md)`);
      assertCleanSummary('prod-check', run);
    },
  );

  void it(
    'loses, fails, sticks, duplicates and corrupts nothing on PostgreSQL and the Temporal server through a SIGKILL, a SIGTERM drain and a server restart',
    { timeout: RUN_TIMEOUT_MS + 20_000, skip: skipFullRun },
    async () => {
      // SIGTERM first on a timeout: prod-check stops its PostgreSQL (not a child of ours) before it goes.
      const run = await runHarness(ENTRY, [], RUN_TIMEOUT_MS, 'SIGTERM');
      const report = `\n${failureReport(run.output)}`;
      assert.match(run.stdout, /^Drain: .*: ok$/m, `the SIGTERMed worker drained${report}`);
      assert.match(run.stdout, /Temporal server stopped in .*up again|Temporal server SIGKILLed .*up again/, `the server restarted${report}`);
      assertCleanSummary('prod-check', run);
    },
  );

  void it(
    'runs connections with workers and the pipeline client over mutual TLS behind the JWT authorizer, their short-lived tokens renewed through a file; the frontend refuses plain TCP, no client certificate, another CA and another server name, and the authorizer a missing, read-only, other-namespace, expired, other-audience and unpublished-key token, each saying what to fix',
    { timeout: TLS_RUN_TIMEOUT_MS + 20_000, skip: skipFullRun },
    async () => {
      // Held replies keep the fleet running past its first 12-s token: the renewal is what keeps it working.
      const run = await runHarness(
        ENTRY,
        ['--tls', '--authorization', '--token-ttl-s', '12', '--no-chaos', '--connections', '6', '--workers', '2', '--reply-delay-ms', '2500'],
        TLS_RUN_TIMEOUT_MS,
        'SIGTERM',
      );
      const report = `\n${failureReport(run.output)}`;
      assert.match(run.stdout, /Temporal server .* up at 127\.0\.0\.1:\d+ over mutual TLS/, `the server served mutual TLS${report}`);
      const refusals: [string, RegExp][] = [
        [
          'pipeline client, plain TCP',
          /TemporalUnavailableError: cannot reach Temporal at .*: the server speaks TLS and this client does not: set TEMPORAL_TLS_CA_PATH/,
        ],
        [
          'pipeline client, no client certificate',
          /TemporalUnavailableError: .*TLS: the server requires a client certificate \(mutual TLS\): set TEMPORAL_TLS_CERT_PATH and TEMPORAL_TLS_KEY_PATH \(tlsv13 alert certificate required\)/,
        ],
        [
          'pipeline client, another CA',
          /TemporalUnavailableError: .*TLS: the server's certificate is not signed by the CA in TEMPORAL_TLS_CA_PATH \(\S+other-ca\.pem\)/,
        ],
        [
          'pipeline client, server name temporal.invalid',
          /TemporalUnavailableError: .*TLS: the server's certificate is not valid for temporal\.invalid, taken from TEMPORAL_TLS_SERVER_NAME/,
        ],
        ['worker process, no client certificate', /exit 1: worker stopped: cannot reach Temporal at .*: TLS: the server requires a client certificate/],
        [
          'worker process, another CA',
          /exit 1: worker stopped: cannot reach Temporal at .*: TLS: the server's certificate is not signed by the CA in TEMPORAL_TLS_CA_PATH .*InvalidCertificate\(UnknownIssuer\)/,
        ],
      ];
      for (const [who, reason] of refusals) {
        const line = run.stdout.split('\n').find((text) => text.includes(`  ${who}: `));
        assert.ok(line, `no line for ${who}${report}`);
        assert.match(line, /^ {2}refused {2}/, `${who} was refused${report}`);
        assert.match(line, reason, `${who}: the reason`);
      }
      assert.match(
        run.stdout,
        /^TLS: workers and driver connected with TEMPORAL_TLS_CA_PATH, TEMPORAL_TLS_SERVER_NAME=localhost, TEMPORAL_TLS_CERT_PATH\/KEY_PATH; refusals: ok$/m,
        report,
      );
      // The server's JWT authorizer: each refusal through the product's client, by name; the fleet's tokens renewed past the first's expiry.
      for (const who of [
        'no token',
        'a token that only reads (default:read) cancelling',
        'a token of another namespace only (lender-b:write)',
        'an expired token',
        'a token of another audience',
        'a token signed by a key the provider does not publish',
      ]) {
        const line = run.stdout.split('\n').find((text) => text.includes(`  ${who}: `));
        assert.ok(line, `no line for ${who}${report}`);
        assert.match(
          line,
          /^ {2}refused {2}.*TemporalAccessDeniedError: Temporal at \S+ refused the caller's credentials \(PERMISSION_DENIED/,
          `${who} was refused by the authorizer${report}`,
        );
      }
      assert.match(
        run.stdout,
        /^Authorization: workers and driver held default:write tokens of 12 s in TEMPORAL_API_KEY_FILE, renewed [1-9]\d* time\(s\); the fleet outlived its first token; refusals: ok; renewal: ok$/m,
        report,
      );
      assertCleanSummary('prod-check', run);
    },
  );
});
