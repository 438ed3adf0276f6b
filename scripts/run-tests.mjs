#!/usr/bin/env node
// `npm test`: runs every test/**/*.test.ts with node:test (through tsx) against ONE shared Temporal
// dev server (scripts/lib/dev-server.ts: in memory, our search attributes registered), exported as
// TEMPORAL_TEST_ADDRESS.
//   npm test                      all test files
//   npm test -- helpers sandbox   only files whose path contains one of the arguments
// TEST_CONCURRENCY overrides how many test files run at once (default: half the cores, at least 1);
// it and REPLAY_MIN_HISTORIES are parsed by loadTestRunConfig (src/config.ts, docs/configuration.md).
// Then every history of the product's workflow types the tests wrote on the shared server is replayed
// against this checkout's workflow code (scripts/replay-suite.ts); it ends with
//   replay: <n> histories of the suite replayed, <n> nondeterminism errors, <n> skipped (<reasons>)
// and fails the run on nondeterminism, or when the whole suite left fewer than 50 replayable
// histories (REPLAY_MIN_HISTORIES overrides; a filtered run has no minimum).
/* global process, console, setTimeout, clearTimeout, URL */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { tsImport } from 'tsx/esm/api';

const root = fileURLToPath(new URL('..', import.meta.url));
const { TEMPORAL_CACHE_DIR } = await tsImport('./lib/temporal-binaries.ts', import.meta.url);
const { DevServer } = await tsImport('./lib/dev-server.ts', import.meta.url);
const { WORKER_REGISTRY_ENV } = await tsImport('./lib/suite-registry.ts', import.meta.url);
const { loadTestRunConfig, settingsOrExit } = await tsImport('../src/config.ts', import.meta.url);

const STOP_GRACE_MS = 5_000;

function findTestFiles(dir) {
  const files = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== 'node_modules' && !entry.name.startsWith('.')) files.push(...findTestFiles(path));
    } else if (entry.isFile() && entry.name.endsWith('.test.ts')) {
      files.push(path);
    }
  }
  return files.sort();
}

/** Resolves when `child` exits (immediately if it already has). */
function exited(child) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

async function stop(child) {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
  await exited(child);
  clearTimeout(timer);
}

const settings = settingsOrExit('run-tests', () => loadTestRunConfig());

const filters = process.argv.slice(2);
const files = findTestFiles(join(root, 'test')).filter((file) => filters.length === 0 || filters.some((filter) => relative(root, file).includes(filter)));
if (files.length === 0) {
  console.error(`run-tests: no test files under test/ match ${filters.map((f) => JSON.stringify(f)).join(', ') || '*.test.ts'}`);
  process.exit(1);
}

// Test files run in child processes. Durability tests spawn workers and servers of their own, and
// workflow bundling is CPU-bound: with 2 cores, one file at a time keeps timing-sensitive tests honest.
const concurrency = settings.concurrency ?? Math.max(1, Math.floor(availableParallelism() / 2));

mkdirSync(TEMPORAL_CACHE_DIR, { recursive: true });
const serverLogPath = join(TEMPORAL_CACHE_DIR, 'test-dev-server.log');
rmSync(serverLogPath, { force: true });

// The workers the test helpers start, with their payload keys, for the replay at the end (private: 0700).
const workerRegistry = mkdtempSync(join(tmpdir(), 'test-worker-registry-'));
const MIN_REPLAYED = filters.length === 0 ? 50 : 0;

let server;
let tests;
let replay;
let stopping = false;

async function shutdown(exitCode) {
  if (stopping) return;
  stopping = true;
  await stop(tests);
  await stop(replay);
  await server?.close();
  rmSync(workerRegistry, { recursive: true, force: true });
  process.exit(exitCode);
}

/** Runs `node <args>` in the repository with the shared server's address and the registry; resolves to its exit code. */
function run(args, env) {
  const child = spawn(process.execPath, args, {
    cwd: root,
    stdio: 'inherit',
    env: { ...process.env, TEMPORAL_TEST_ADDRESS: server.address, [WORKER_REGISTRY_ENV]: workerRegistry, ...env },
  });
  const exit = new Promise((resolve) => {
    child.once('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
    child.once('error', (error) => {
      console.error(`run-tests: could not start node ${args[args.length - 1]}: ${error.message}`);
      resolve(1);
    });
  });
  return { child, exit };
}

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    console.error(`\nrun-tests: ${signal}, stopping tests and the Temporal dev server`);
    void shutdown(130);
  });
}

const startedAt = Date.now();
try {
  server = await DevServer.start({
    logPath: serverLogPath,
    logLevel: 'error',
    onUnexpectedExit: (how) => console.error(`run-tests: the shared Temporal dev server exited unexpectedly (${how}); see ${relative(root, serverLogPath)}`),
  });
} catch (error) {
  console.error(`run-tests: ${error.message} (log: ${relative(root, serverLogPath)})`);
}
const startupMs = Date.now() - startedAt;
if (!server) await shutdown(1);
console.log(`run-tests: Temporal dev server ready at ${server.address} in ${startupMs} ms; ${files.length} test file(s), concurrency ${concurrency}`);

const testRun = run([
  '--import', 'tsx', '--test', '--test-reporter=spec', `--test-concurrency=${concurrency}`,
  // A hung test fails after 5 minutes instead of holding CI to its 90-minute limit.
  '--test-timeout=300000',
  ...files.map((file) => relative(root, file).split(sep).join('/')),
]);
tests = testRun.child;
const testExit = await testRun.exit;

// Also after failing tests: a history that does not replay may be why they failed.
const replayRun = run(['--import', 'tsx', 'scripts/replay-suite.ts'], { REPLAY_MIN_HISTORIES: String(settings.replayMinHistories ?? MIN_REPLAYED) });
replay = replayRun.child;
const replayExit = await replayRun.exit;
await shutdown(testExit !== 0 ? testExit : replayExit);
