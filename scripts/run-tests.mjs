#!/usr/bin/env node
// `npm test`: runs every test/**/*.test.ts with node:test (through tsx) against ONE shared Temporal
// dev server (scripts/lib/dev-server.ts: in memory, our search attributes registered), exported as
// TEMPORAL_TEST_ADDRESS.
//   npm test                      all test files
//   npm test -- helpers sandbox   only files whose path contains one of the arguments
//   npm test -- --dir test/fixtures/run-tests   test files under another directory (the runner's own tests)
// Each file runs in its own node process (through tsx; node --test --test-isolation=none), with the
// spec reporter for people and scripts/lib/test-file-reporter.mjs for this runner, which counts what
// ran. A file fails, named in the closing summary, when it exits non-zero, when a test fails, when it
// ran no test, when it ended before node:test finished (an exit halfway) or when it outlives
// TEST_FILE_TIMEOUT_S (default 20 minutes; an open handle keeps a process alive): then its process
// group is killed. Each test also
// fails after 5 minutes (--test-timeout). The summary ends with `<n> passed, <n> failed, <n> skipped`
// alone on a line, and names every skipped test with its reason.
// TEST_CONCURRENCY overrides how many test files run at once (default: half the cores, at least 1);
// it, TEST_FILE_TIMEOUT_S and REPLAY_MIN_HISTORIES are parsed by loadTestRunConfig (scripts/lib/test-settings.ts,
// docs/configuration.md).
// Then every history of the product's workflow types the tests wrote on the shared server is replayed
// against this checkout's workflow code (scripts/replay-suite.ts); it ends with
//   replay: <n> histories of the suite replayed, <n> nondeterminism errors, <n> skipped (<reasons>)
// and fails the run on nondeterminism, or when the whole suite left fewer than 50 replayable
// histories (REPLAY_MIN_HISTORIES overrides; a filtered run has no minimum).
/* global process, console, setTimeout, clearTimeout, URL */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { tsImport } from 'tsx/esm/api';

const root = fileURLToPath(new URL('..', import.meta.url));
const { TEMPORAL_CACHE_DIR } = await tsImport('./lib/temporal-binaries.ts', import.meta.url);
const { DevServer } = await tsImport('./lib/dev-server.ts', import.meta.url);
const { WORKER_REGISTRY_ENV } = await tsImport('./lib/suite-registry.ts', import.meta.url);
const { loadTestRunConfig } = await tsImport('./lib/test-settings.ts', import.meta.url);
const { settingsOrExit } = await tsImport('../src/settings/load.ts', import.meta.url);

const STOP_GRACE_MS = 5_000;

function findTestFiles(dir) {
  const files = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      // test/fixtures holds the runner's own fixture files (test/run-tests.test.ts runs them with --dir).
      if (entry.name !== 'node_modules' && entry.name !== 'fixtures' && !entry.name.startsWith('.')) files.push(...findTestFiles(path));
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

/** Ends a test file's process and everything it started (it leads its own process group). */
async function stopGroup(child) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const kill = (signal) => {
    try {
      process.kill(-child.pid, signal);
    } catch {
      child.kill(signal);
    }
  };
  kill('SIGTERM');
  const timer = setTimeout(() => kill('SIGKILL'), STOP_GRACE_MS);
  await exited(child);
  clearTimeout(timer);
  try {
    process.kill(-child.pid, 'SIGKILL'); // what the file started and left behind
  } catch {
    // the group is gone
  }
}

async function stop(child) {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
  await exited(child);
  clearTimeout(timer);
}

const settings = settingsOrExit('run-tests', () => loadTestRunConfig());

const args = process.argv.slice(2);
const dirAt = args.indexOf('--dir');
const testDir = dirAt === -1 ? join(root, 'test') : resolve(args[dirAt + 1] ?? '');
if (dirAt !== -1) args.splice(dirAt, 2);
const filters = args;
const files = findTestFiles(testDir).filter((file) => filters.length === 0 || filters.some((filter) => relative(root, file).includes(filter)));
if (files.length === 0) {
  console.error(`run-tests: no test files under ${relative(root, testDir) || '.'}/ match ${filters.map((f) => JSON.stringify(f)).join(', ') || '*.test.ts'}`);
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
const MIN_REPLAYED = filters.length === 0 && dirAt === -1 ? 50 : 0;
// Where each file's machine-readable report goes.
const reportDir = mkdtempSync(join(tmpdir(), 'test-file-reports-'));
const REPORTER = join(root, 'scripts/lib/test-file-reporter.mjs');
const TEST_TIMEOUT_MS = 300_000;

let server;
/** The test files' processes still running. */
const running = new Set();
let replay;
let stopping = false;

async function shutdown(exitCode) {
  if (stopping) return;
  stopping = true;
  await Promise.all([...running].map((child) => stopGroup(child)));
  await stop(replay);
  await server?.close();
  rmSync(workerRegistry, { recursive: true, force: true });
  rmSync(reportDir, { recursive: true, force: true });
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

const display = (file) => relative(root, file).split(sep).join('/');

/** What a file's report says: counts, the skipped and failed tests by full name, whether node:test finished. */
function readReport(path, fileName) {
  let text = '';
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    // no report: node:test never started
  }
  const report = { ended: false, passed: 0, failed: 0, skipped: [], failures: [], suiteFailures: [] };
  const names = [];
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    let event;
    try {
      event = JSON.parse(line);
    } catch {
      continue; // a line cut by a kill
    }
    if (event.type === 'end') report.ended = true;
    else if (event.type === 'start') names[event.nesting] = event.name;
    else if (event.nesting === 0 && !event.suite && event.name === fileName && event.type === 'pass') {
      // node:test reports a file that defines no test as one passing test named after the file
    } else {
      names[event.nesting] = event.name;
      const fullName = names.slice(0, event.nesting + 1).join(' › ');
      if (event.suite) {
        if (event.type === 'fail') report.suiteFailures.push({ name: fullName, error: event.error });
      } else if (event.skip !== undefined || event.todo !== undefined) {
        report.skipped.push({ name: fullName, reason: event.skip ?? `todo${event.todo ? `: ${event.todo}` : ''}` });
      } else if (event.type === 'pass') report.passed += 1;
      else {
        report.failed += 1;
        report.failures.push({ name: fullName, error: event.error });
      }
    }
  }
  return report;
}

/** Runs one test file in its own process group; resolves to its outcome. */
function runFile(file, index) {
  const reportPath = join(reportDir, `${index}.jsonl`);
  const buffered = concurrency > 1;
  const startedAt = Date.now();
  const child = spawn(
    process.execPath,
    [
      '--import', 'tsx',
      // One file, in this process (so the reporters see an exit halfway: no end line), each test
      // failing after 5 minutes; the whole file after TEST_FILE_TIMEOUT_S (below).
      '--test', '--test-isolation=none', `--test-timeout=${TEST_TIMEOUT_MS}`,
      '--test-reporter=spec', '--test-reporter-destination=stdout',
      `--test-reporter=${REPORTER}`, `--test-reporter-destination=${reportPath}`,
      display(file),
    ],
    {
      cwd: root,
      detached: true,
      stdio: buffered ? ['ignore', 'pipe', 'pipe'] : ['ignore', 'inherit', 'inherit'],
      env: { ...process.env, TEMPORAL_TEST_ADDRESS: server.address, [WORKER_REGISTRY_ENV]: workerRegistry, ...(buffered && process.stdout.isTTY ? { FORCE_COLOR: '1' } : {}) },
    },
  );
  running.add(child);
  let output = '';
  child.stdout?.on('data', (chunk) => (output += chunk));
  child.stderr?.on('data', (chunk) => (output += chunk));
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    console.error(`run-tests: ${display(file)} still running after ${settings.fileTimeoutMs / 1000} s (TEST_FILE_TIMEOUT_S): killing it`);
    void stopGroup(child);
  }, settings.fileTimeoutMs);
  return new Promise((resolvePromise) => {
    let startError;
    child.once('error', (error) => (startError = error));
    child.once('error', () => child.emit('exit', 1, null));
    child.once('exit', async (code, signal) => {
      clearTimeout(timer);
      running.delete(child);
      try {
        process.kill(-child.pid, 'SIGKILL'); // anything the file started and left behind
      } catch {
        // the group is gone
      }
      // Its output, once the pipes drain (a process that left the group may hold them: not for long).
      if (buffered) {
        await new Promise((done) => {
          if (child.stdout.closed && child.stderr.closed) return done();
          const cap = setTimeout(done, STOP_GRACE_MS);
          child.once('close', () => (clearTimeout(cap), done()));
        });
        process.stdout.write(output);
      }
      const report = readReport(reportPath, display(file));
      const problems = [];
      if (startError) problems.push(`could not start: ${startError.message}`);
      if (timedOut) problems.push(`killed after ${settings.fileTimeoutMs / 1000} s (TEST_FILE_TIMEOUT_S): a test or an open handle kept it running`);
      else if (!report.ended) {
        const ran = report.passed + report.failed + report.skipped.length;
        problems.push(
          ran === 0
            ? `ran no test: it defines none, or it ended (${signal ?? `exit code ${code}`}) before node:test reported one`
            : `cut short: it ended (${signal ?? `exit code ${code}`}) after ${ran} test(s), before node:test finished the file`,
        );
      } else if (report.passed + report.failed + report.skipped.length === 0) problems.push('ran no test: it defines none');
      if (report.failed > 0) problems.push(`${report.failed} test(s) failed`);
      // A suite fails with its failed tests (named already), or on its own (a hook: named here).
      for (const suite of report.suiteFailures) if (!/^\d+ subtests? failed$/.test(suite.error ?? '')) problems.push(`suite ${suite.name} failed${suite.error ? `: ${suite.error}` : ''}`);
      if (problems.length === 0 && (code !== 0 || signal)) problems.push(`exited with ${signal ?? `code ${code}`}`);
      resolvePromise({ file: display(file), ms: Date.now() - startedAt, report, problems });
    });
  });
}

/** Runs the files, `concurrency` at a time, in order; resolves to their outcomes. */
async function runFiles(list) {
  const outcomes = new Array(list.length);
  let next = 0;
  const lane = async () => {
    while (next < list.length && !stopping) {
      const index = next++;
      outcomes[index] = await runFile(list[index], index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, list.length) }, lane));
  return outcomes.filter(Boolean);
}

/** Prints each file's verdict, the failed and skipped tests by name, and the totals; true when anything failed. */
function printSummary(outcomes) {
  const totals = { passed: 0, failed: 0, skipped: 0 };
  const failedFiles = outcomes.filter((outcome) => outcome.problems.length > 0);
  console.log('\nrun-tests: files');
  for (const { file, ms, report, problems } of outcomes) {
    totals.passed += report.passed;
    totals.failed += report.failed;
    totals.skipped += report.skipped.length;
    const counts = `${report.passed} passed, ${report.failed} failed, ${report.skipped.length} skipped, ${(ms / 1000).toFixed(1)} s`;
    console.log(problems.length === 0 ? `✔ ${file} (${counts})` : `✖ ${file} (${counts}): ${problems.join('; ')}`);
  }
  const failures = outcomes.flatMap(({ file, report }) => report.failures.map((failure) => ({ file, ...failure })));
  if (failures.length > 0) {
    console.log('\nrun-tests: failed tests');
    for (const { file, name, error } of failures) console.log(`✖ ${file} › ${name}${error ? `: ${error}` : ''}`);
  }
  const skipped = outcomes.flatMap(({ file, report }) => report.skipped.map((skip) => ({ file, ...skip })));
  if (skipped.length > 0) {
    console.log('\nrun-tests: skipped tests, and what they need');
    for (const { file, name, reason } of skipped) console.log(`﹣ ${file} › ${name} # ${reason || 'no reason given'}`);
  }
  console.log(`\nℹ files ${outcomes.length}`);
  console.log(`ℹ failed files ${failedFiles.length}${failedFiles.length ? ` (${failedFiles.map((outcome) => outcome.file).join(', ')})` : ''}`);
  console.log(`ℹ tests ${totals.passed + totals.failed + totals.skipped}`);
  console.log(`ℹ pass ${totals.passed}`);
  console.log(`ℹ fail ${totals.failed}`);
  console.log(`ℹ skipped ${totals.skipped}`);
  console.log(`${totals.passed} passed, ${totals.failed} failed, ${totals.skipped} skipped`);
  return failedFiles.length > 0 || outcomes.length < files.length;
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

const outcomes = await runFiles(files);
const summaryFailed = printSummary(outcomes);

// Also after failing tests: a history that does not replay may be why they failed.
const replayRun = run(['--import', 'tsx', 'scripts/replay-suite.ts'], { REPLAY_MIN_HISTORIES: String(settings.replayMinHistories ?? MIN_REPLAYED) });
replay = replayRun.child;
const replayExit = await replayRun.exit;
await shutdown(summaryFailed ? 1 : replayExit);
