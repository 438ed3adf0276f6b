/**
 * The replay phase of `npm test` (scripts/run-tests.mjs runs it after the test files): replays every
 * history of the product's workflow types on the shared dev server (scripts/lib/replay-suite.ts),
 * prints what failed or was skipped and why, and ends with
 *   replay: <n> histories of the suite replayed, <n> nondeterminism errors, <n> other failures, <n> skipped (<reasons>)
 * Exit 1 on any nondeterminism, on another replay failure that comes back when its history is replayed
 * again alone (one that does not is listed: retryAlone in scripts/lib/replay-suite.ts), or when fewer
 * than REPLAY_MIN_HISTORIES were replayed (the runner sets 50 for the whole suite: proof that the
 * mechanism saw the suite's histories).
 * Its variables (loadReplayConfig in scripts/lib/test-settings.ts):
 *   TEMPORAL_TEST_ADDRESS     the shared dev server (required)
 *   TEST_WORKER_REGISTRY_DIR  the workers the helpers registered (scripts/lib/suite-registry.ts)
 *   REPLAY_MIN_HISTORIES      default 0
 *   REPLAY_VERBOSE=1          list every skipped history, not only counts
 */
import { Connection } from '@temporalio/client';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { loadReplayConfig } from './lib/test-settings.js';
import { settingsOrExit } from '../src/settings/load.js';
import { TEST_ENCRYPTION } from '../test/helpers/connection-stack.js';
import { detailLines, replaySuite, summaryLine } from './lib/replay-suite.js';
import { readRegistry, WORKER_REGISTRY_ENV } from './lib/suite-registry.js';
import { productWorkflowBundle } from './lib/workflow-bundle.js';

const { temporalAddress: address, minHistories: minimum, workerRegistryDir: registryDir, verbose } = settingsOrExit('replay', () => loadReplayConfig());
const registry = registryDir ? readRegistry(registryDir) : { workers: [], unreadable: 0 };
if (!registryDir) console.log(`replay: ${WORKER_REGISTRY_ENV} is not set: no worker's keys are known but the tests' fixed key`);
if (registry.unreadable > 0) console.log(`replay: ${registry.unreadable} unreadable line(s) in the worker registry ${registryDir}`);

// The report says what failed; the replay worker's own warnings (each nondeterminism, again) stay out.
Runtime.install({ logger: new DefaultLogger('ERROR') });

const startedAt = Date.now();
const connection = await Connection.connect({ address });
let failed = false;
try {
  const report = await replaySuite({ connection, code: await productWorkflowBundle(), workers: registry.workers, fallbackEncryption: TEST_ENCRYPTION });
  for (const line of detailLines(report, { verbose })) console.log(line);
  console.log(`replay: ${registry.workers.length} workers registered by the helpers; ${Math.round((Date.now() - startedAt) / 1000)} s`);
  console.log(summaryLine(report));
  if (report.nondeterminism.length > 0 || report.replayErrors.length > 0) failed = true;
  if (report.replayed < minimum) {
    console.log(
      `replay: FAILED: only ${report.replayed} histories replayed, fewer than ${minimum}: the suite's histories were not found or not replayable (see the skip reasons above)`,
    );
    failed = true;
  }
} catch (error) {
  console.error(`replay: FAILED: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  failed = true;
} finally {
  await connection.close();
}
process.exit(failed ? 1 : 0);
