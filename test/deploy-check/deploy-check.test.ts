/**
 * `npm run deploy:check` at its smallest, as a subprocess: v1 and v2 of the workflow code on the
 * production stack (PostgreSQL, the Temporal server), one connection of each kind, one worker per
 * build, one SIGKILL during the ramp. Every connection must end where it started, the retention
 * timers move to v2 with their due times, v1 drain and retire, the rollback run on v1, and no history
 * fail replay. Its verdicts (scripts/deploy-check/verdicts.ts) are checked without a server too.
 *
 * Without PostgreSQL or the server binaries the run is skipped on a developer's machine, saying why,
 * and fails in CI, where .ci/run and the pretest provide both.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { withExtraActivity, V2BuildError } from '../../scripts/deploy-check/v2-build.js';
import { connectionProblem, passed, summarize, summaryLine, timerProblem, type ConnectionObservation } from '../../scripts/deploy-check/verdicts.js';
import { postgresBinDir } from '../../scripts/prod-check/postgres.js';
import { findServerBinaries } from '../../scripts/prod-check/temporal-server.js';
import { failureReport, runHarness } from '../helpers/harness-run.js';
import { loadTestConfig } from '../../scripts/lib/test-settings.js';

const ENTRY = 'scripts/deploy-check/deploy-check.ts';
const RUN_TIMEOUT_MS = 420_000;

const missing = [...(postgresBinDir() ? [] : ['PostgreSQL (apt-get install -y postgresql)']), ...findServerBinaries().missing];
if (missing.length > 0 && loadTestConfig().ci) throw new Error(`npm run deploy:check cannot run in CI: missing ${missing.join('; ')}`);
const skipRun = missing.length > 0 ? `missing: ${missing.join('; ')}` : false;

const observation = (fields: Partial<ConnectionObservation>): ConnectionObservation => ({
  workflowId: 'w',
  stage: 'mid-poll',
  expected: 'v1',
  status: 'Completed',
  ranOn: 'v1',
  problems: [],
  ...fields,
});

void describe('deploy-check verdicts', () => {
  void it('counts a connection as expected only when it completed on the build it had to', () => {
    assert.equal(connectionProblem(observation({})), undefined);
    assert.match(connectionProblem(observation({ ranOn: 'v2' })) ?? '', /ran on v2, expected v1/);
    assert.match(connectionProblem(observation({ status: 'Running' })) ?? '', /still running/);
    assert.match(connectionProblem(observation({ status: 'Failed' })) ?? '', /ended Failed/);
    assert.equal(connectionProblem(observation({ expected: 'either', ranOn: 'v2' })), undefined);
    assert.match(connectionProblem(observation({ expected: 'either', ranOn: undefined })) ?? '', /no recorded build/);
  });

  void it('loses a timer that ended, moved its due time or stayed on the old build', () => {
    const timer = { workflowId: 't', forgetAtBefore: '2026-12-25T00:00:00.000Z', forgetAtAfter: '2026-12-25T00:00:00.000Z', running: true, ranOn: 'v2' };
    assert.equal(timerProblem(timer, 'v2'), undefined);
    assert.match(timerProblem({ ...timer, running: false }, 'v2') ?? '', /no longer running/);
    assert.match(timerProblem({ ...timer, forgetAtAfter: '2026-12-26T00:00:00.000Z' }, 'v2') ?? '', /due time changed/);
    assert.match(timerProblem({ ...timer, ranOn: 'v1' }, 'v2') ?? '', /still on v1/);
  });

  void it('prints the one summary line and fails on anything stuck, nondeterministic or lost', () => {
    const summary = summarize([observation({}), observation({ expected: 'v2', ranOn: 'v2' }), observation({ status: 'Running' })], 0, 0);
    assert.equal(
      summaryLine(summary),
      'deploy-check: 3 connections, 2 completed as expected, 2 on v1, 1 on v2, 1 stuck, 0 nondeterminism errors, 0 lost timers',
    );
    assert.equal(passed(summary), false);
    assert.equal(passed(summarize([observation({})], 0, 0)), true);
    assert.equal(passed(summarize([observation({})], 1, 0)), false);
    assert.equal(passed(summarize([observation({})], 0, 1)), false);
  });

  void it("v2's change adds one activity before retrieval, and refuses code that no longer has the place", () => {
    const source = "import { log, setHandler } from '@temporalio/workflow';\n    const result = await retrieveProducts(input, open, recorder);\n";
    const changed = withExtraActivity(source);
    assert.match(changed, /import \{ log, setHandler, proxyActivities \} from '@temporalio\/workflow';/);
    assert.match(changed, /validateConnectionInput\(args\);\n {4}const result = await retrieveProducts/);
    assert.throws(() => withExtraActivity('no such call'), V2BuildError);
    // The product's own workflow still has the place v2 changes.
    assert.match(
      withExtraActivity(readFileSync(new URL('../../src/workflows/connection/connection.ts', import.meta.url), 'utf8')),
      /validateConnectionInput\(args\);\n +result = await retrieveProducts\(/,
    );
  });
});

void describe('npm run deploy:check', () => {
  void it('refuses a bad argument with exit code 2, naming it', async () => {
    const { code, output } = await runHarness(ENTRY, ['--per-stage', '0'], 60_000);
    assert.equal(code, 2, failureReport(output));
    assert.match(output, /--per-stage must be an integer from 1 to 200, got "0"/);
  });

  void it(
    'rolls v2 out while v1 connections wait, answer and poll: each finishes on its build, timers move with their due times, v1 drains, retires and comes back',
    { timeout: RUN_TIMEOUT_MS + 20_000, skip: skipRun },
    async () => {
      const run = await runHarness(ENTRY, ['--per-stage', '1', '--workers', '1'], RUN_TIMEOUT_MS, 'SIGTERM');
      const report = `\n${failureReport(run.output)}`;
      assert.match(run.stdout, /SIGKILLed v1 worker \S+ during the ramp/, `a worker died during the ramp${report}`);
      assert.match(run.stdout, /^Deployment: v1 drained, retired; rollback to v1 1 connection\(s\)$/m, report);
      const summary =
        /^deploy-check: (\d+) connections, (\d+) completed as expected, (\d+) on v1, (\d+) on v2, (\d+) stuck, (\d+) nondeterminism errors, (\d+) lost timers$/m.exec(
          run.stdout,
        );
      assert.ok(summary, `no summary line${report}`);
      const [, total, expected, onV1, onV2, stuck, nondeterminism, lost] = summary.map(Number);
      assert.equal(expected, total, report);
      assert.ok((onV1 ?? 0) > 0 && (onV2 ?? 0) > 0, `connections ran on both builds${report}`);
      assert.deepEqual([stuck, nondeterminism, lost], [0, 0, 0], report);
      assert.equal(run.code, 0, report);
    },
  );
});
