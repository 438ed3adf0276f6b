/**
 * The settings of the test files and their helpers (loadTestConfig), of `npm test` itself
 * (loadTestRunConfig, scripts/run-tests.mjs) and of its closing replay (loadReplayConfig,
 * scripts/replay-suite.ts).
 */
import { z } from 'zod';
import { ExistingPath } from './toolchain-settings.js';
import { Bool, CountAtLeast, doc, group, HostPort } from '../../src/settings/document.js';
import { parseEnv } from '../../src/settings/load.js';

const TEST_LOG_LEVELS = ['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR'] as const;
const TestAddress = doc(
  HostPort.optional(),
  'The Temporal dev server `npm test` shares with its test files, image:check and the closing replay (scripts/run-tests.mjs sets it).',
  { defaultText: 'each test starts a private dev server' },
);
const WorkerRegistryDir = doc(
  ExistingPath.optional(),
  'The private directory where the test helpers register the workers they start, with their payload keys, for the replay at the end of `npm test` (scripts/run-tests.mjs sets it; scripts/lib/suite-registry.ts).',
  { defaultText: 'no registry: registering does nothing' },
);
const ReplayMinHistories = doc(CountAtLeast(0).optional(), 'The replay at the end of `npm test` fails when it replayed fewer histories than this.', {
  defaultText: '50 for the whole suite, else 0',
});

export const TestVars = group(
  z.object({
    TEMPORAL_TEST_ADDRESS: TestAddress,
    TEST_WORKER_REGISTRY_DIR: WorkerRegistryDir,
    TEMPORAL_TEST_LOG_LEVEL: doc(
      z
        .string()
        .transform((text) => text.trim().toUpperCase())
        .pipe(z.enum(TEST_LOG_LEVELS, { error: `must be one of ${TEST_LOG_LEVELS.join(', ')}` }))
        .default('ERROR'),
      "The Temporal runtime's log level in test processes (worker logs, bundling, expected workflow failures).",
    ),
    RECORD_HISTORIES: doc(
      Bool.default(false),
      'true or 1: the tests that record replay fixtures write them again (e.g. `RECORD_HISTORIES=1 node scripts/run-tests.mjs workflows/connection.test`).',
    ),
    CHROMIUM_PATH: doc(ExistingPath.default('/usr/bin/chromium'), 'The Chromium the browser tests drive (the console and the Web UI codec).'),
    DOCS_SCREENSHOTS: doc(
      Bool.default(false),
      'true or 1 (`npm run docs:screenshots` sets it): the browser tests write their screenshots into docs/images/; otherwise into a temporary folder, checked and removed.',
    ),
    CI: doc(
      z
        .string()
        .transform((text) => text !== 'false' && text !== '0')
        .default(false),
      'Set by CI: a missing prerequisite (PostgreSQL, the server binaries) fails the prod:check, deploy:check and bench:burst tests instead of skipping them.',
      { defaultText: 'unset: skip' },
    ),
    TEST_CONCURRENCY: doc(CountAtLeast(1).optional(), 'How many test files `npm test` runs at once (files marked to run alone still run alone).', {
      defaultText: '4 (measured on 2 cores: docs/development.md)',
    }),
    TEST_TIMINGS_FILE: doc(ExistingPath.optional(), "Where `npm test` records each file's seconds and reads them back to start the slowest files first.", {
      defaultText: 'test-timings.json in TEMPORAL_CACHE_DIR',
    }),
    TEST_FILE_TIMEOUT_S: doc(
      CountAtLeast(1).default(1200),
      'Seconds one test file may run in `npm test` (its process, open handles included) before the runner kills it and fails it by name; each test inside also fails after 5 minutes.',
    ),
    TEST_WORKFLOW_BUNDLE: doc(
      ExistingPath.optional(),
      "The product's workflow code, bundled once by `npm test` (scripts/run-tests.mjs sets it): the helpers' workers and replayers run it instead of bundling again.",
      { defaultText: 'each worker bundles the workflow code itself' },
    ),
    TEST_UNIT_TIER: doc(
      Bool.default(false),
      '`npm run test:unit` sets it: a helper that would start a server (Temporal, OpenBao, MinIO, moto) throws instead, so a file that needs one cannot pass as a unit test.',
    ),
    REPLAY_MIN_HISTORIES: ReplayMinHistories,
    REPLAY_VERBOSE: doc(Bool.default(false), 'true or 1: the closing replay lists every skipped history, not only the counts.'),
  }),
  'Tests and tooling',
  "`npm test` (scripts/run-tests.mjs), the test files and their helpers, and the replay of the suite's histories that closes the run (scripts/replay-suite.ts).",
  { envExample: false },
);

/** The test files and their helpers (and image:check, which shares npm test's server). */
export const TestEnv = z
  .object({
    TEMPORAL_TEST_ADDRESS: TestAddress,
    TEST_WORKER_REGISTRY_DIR: WorkerRegistryDir,
    TEMPORAL_TEST_LOG_LEVEL: TestVars.shape.TEMPORAL_TEST_LOG_LEVEL,
    RECORD_HISTORIES: TestVars.shape.RECORD_HISTORIES,
    CHROMIUM_PATH: TestVars.shape.CHROMIUM_PATH,
    DOCS_SCREENSHOTS: TestVars.shape.DOCS_SCREENSHOTS,
    CI: TestVars.shape.CI,
    TEST_WORKFLOW_BUNDLE: TestVars.shape.TEST_WORKFLOW_BUNDLE,
    TEST_UNIT_TIER: TestVars.shape.TEST_UNIT_TIER,
  })
  .transform((env) =>
    Object.freeze({
      /** undefined: start a private dev server. */
      temporalAddress: env.TEMPORAL_TEST_ADDRESS,
      workerRegistryDir: env.TEST_WORKER_REGISTRY_DIR,
      logLevel: env.TEMPORAL_TEST_LOG_LEVEL,
      recordHistories: env.RECORD_HISTORIES,
      chromiumPath: env.CHROMIUM_PATH,
      docsScreenshots: env.DOCS_SCREENSHOTS,
      ci: env.CI,
      /** The run's shared workflow bundle; undefined: bundle at start. */
      workflowBundlePath: env.TEST_WORKFLOW_BUNDLE,
      unitTier: env.TEST_UNIT_TIER,
    }),
  );

export type TestConfig = z.output<typeof TestEnv>;

/** scripts/run-tests.mjs. */
export const TestRunEnv = z
  .object({
    TEST_CONCURRENCY: TestVars.shape.TEST_CONCURRENCY,
    TEST_TIMINGS_FILE: TestVars.shape.TEST_TIMINGS_FILE,
    TEST_FILE_TIMEOUT_S: TestVars.shape.TEST_FILE_TIMEOUT_S,
    REPLAY_MIN_HISTORIES: ReplayMinHistories,
  })
  .transform((env) =>
    Object.freeze({
      concurrency: env.TEST_CONCURRENCY,
      timingsFile: env.TEST_TIMINGS_FILE,
      fileTimeoutMs: env.TEST_FILE_TIMEOUT_S * 1000,
      replayMinHistories: env.REPLAY_MIN_HISTORIES,
    }),
  );

/** scripts/replay-suite.ts: run by scripts/run-tests.mjs, which gives it the shared server. */
export const ReplayEnv = z
  .object({
    TEMPORAL_TEST_ADDRESS: doc(
      z.string({ message: 'is not set (scripts/run-tests.mjs sets it)' }).pipe(HostPort),
      'The shared dev server whose histories the replay reads.',
    ),
    TEST_WORKER_REGISTRY_DIR: WorkerRegistryDir,
    REPLAY_MIN_HISTORIES: ReplayMinHistories,
    REPLAY_VERBOSE: TestVars.shape.REPLAY_VERBOSE,
  })
  .transform((env) =>
    Object.freeze({
      temporalAddress: env.TEMPORAL_TEST_ADDRESS,
      workerRegistryDir: env.TEST_WORKER_REGISTRY_DIR,
      minHistories: env.REPLAY_MIN_HISTORIES ?? 0,
      verbose: env.REPLAY_VERBOSE,
    }),
  );

/** The settings of the test files and their helpers. */
export function loadTestConfig(env?: NodeJS.ProcessEnv): TestConfig {
  return parseEnv(TestEnv, env);
}

/** scripts/run-tests.mjs: how many files at once, and the closing replay's minimum if given. */
export function loadTestRunConfig(env?: NodeJS.ProcessEnv): z.output<typeof TestRunEnv> {
  return parseEnv(TestRunEnv, env);
}

/** scripts/replay-suite.ts. */
export function loadReplayConfig(env?: NodeJS.ProcessEnv): z.output<typeof ReplayEnv> {
  return parseEnv(ReplayEnv, env);
}
