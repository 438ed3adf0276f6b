#!/usr/bin/env node
// `npm test`: runs every test/**/*.test.ts with node:test (through tsx) against ONE shared Temporal
// dev server (scripts/lib/dev-server.ts: in memory, our search attributes registered), exported as
// TEMPORAL_TEST_ADDRESS, and ONE bundle of the product's workflow code, exported as
// TEST_WORKFLOW_BUNDLE (every worker the helpers start runs it instead of bundling again).
//   npm test                      all test files
//   npm test -- helpers sandbox   only files whose path contains one of the arguments
//   npm test -- --changed         only files whose imports reach a file changed against git's HEAD
//   npm run test:unit             (--unit) only files that need no server: no dev server, no bundle
//   npm test -- --dir test/fixtures/run-tests   test files under another directory (the runner's own tests)
// Which files and in what order: scripts/lib/test-plan.ts. Files run TEST_CONCURRENCY at a time
// (default 4 on this project's 2-core machines: docs/development.md has the measurements), slowest
// first by the seconds each took last time (recorded in the cache's test-timings.json); a file
// marked `// npm test: runs alone` runs with nothing beside it, before the others.
// Each file runs in its own node process (through tsx; node --test --test-isolation=none), with the
// spec reporter for people and scripts/lib/test-file-reporter.mjs for this runner, which counts what
// ran. A file fails, named in the closing summary, when it exits non-zero, when a test fails, when it
// ran no test, when it ended before node:test finished (an exit halfway) or when it outlives
// TEST_FILE_TIMEOUT_S (default 20 minutes; an open handle keeps a process alive): then its process
// group is killed. Each test also fails after 5 minutes (--test-timeout).
// TEST_CONCURRENCY, TEST_FILE_TIMEOUT_S and REPLAY_MIN_HISTORIES are parsed by loadTestRunConfig
// (scripts/lib/test-settings.ts, docs/configuration.md).
// Then every history of the product's workflow types the tests wrote on the shared server is replayed
// against this checkout's workflow code (scripts/replay-suite.ts); it ends with
//   replay: <n> histories of the suite replayed, <n> nondeterminism errors, <n> other failures, <n> skipped (<reasons>)
// and fails the run on nondeterminism, on another failure that comes back when the history is
// replayed alone, or when the whole suite left fewer than 50 replayable histories
// (REPLAY_MIN_HISTORIES overrides; a filtered run has no minimum). The replay's failures, and the
// histories it replayed only alone, are repeated in the summary, just above its totals.
// The summary names every failed and skipped test, the ten slowest files (`slowest: <file> <s>`),
// `suite: <n> files, <n> tests, <s> s wall, <s> s summed, concurrency <n>`, and ends with
// `<n> passed, <n> failed, <n> skipped` alone on a line.
/* global process, console, setTimeout, clearTimeout, URL */
import { spawn } from 'node:child_process';
import { chmodSync, createWriteStream, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { tsImport } from 'tsx/esm/api';

const root = fileURLToPath(new URL('..', import.meta.url));
const { TEMPORAL_CACHE_DIR } = await tsImport('./lib/temporal-binaries.ts', import.meta.url);
const { DevServer } = await tsImport('./lib/dev-server.ts', import.meta.url);
const { WORKER_REGISTRY_ENV } = await tsImport('./lib/suite-registry.ts', import.meta.url);
const { loadTestRunConfig } = await tsImport('./lib/test-settings.ts', import.meta.url);
const { settingsOrExit } = await tsImport('../src/settings/load.ts', import.meta.url);
const plan = await tsImport('./lib/test-plan.ts', import.meta.url);
const cpuGroups = await tsImport('./lib/file-cpu.ts', import.meta.url);

const STOP_GRACE_MS = 5_000;

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
const takeFlag = (flag) => {
  const at = args.indexOf(flag);
  if (at !== -1) args.splice(at, 1);
  return at !== -1;
};
const onlyChanged = takeFlag('--changed');
const unitTier = takeFlag('--unit');
const unknownFlag = args.find((arg) => arg.startsWith('--'));
if (unknownFlag) {
  console.error(`run-tests: unknown option ${unknownFlag} (options: --changed, --unit, --dir <directory>; other arguments filter files by path)`);
  process.exit(2);
}
const filters = args;
const display = (file) => relative(root, file).split(sep).join('/');
/** A path as the repository names it, or whole when it lies outside (a cache elsewhere). */
const shown = (path) => (relative(root, path).startsWith('..') ? path : relative(root, path));
const graph = new plan.ImportGraph(root);
let files = plan.findTestFiles(testDir).filter((file) => filters.length === 0 || filters.some((filter) => display(file).includes(filter)));
const chosenBy = [`match ${filters.map((f) => JSON.stringify(f)).join(', ') || '*.test.ts'}`];
if (onlyChanged) {
  const changed = plan.changedFiles(root);
  files = files.filter((file) => changed.includes(display(file)) || graph.affectedBy(file, changed));
  chosenBy.push(`reach one of ${changed.length} changed file(s)`);
  if (files.length === 0) {
    console.log(`run-tests: no test file reaches the ${changed.length} file(s) changed against HEAD${changed.length ? ` (${changed.join(', ')})` : ''}`);
    console.log('0 passed, 0 failed, 0 skipped');
    process.exit(0);
  }
}
if (unitTier) {
  files = files.filter((file) => !graph.needsServer(file));
  chosenBy.push('need no server');
}
if (files.length === 0) {
  console.error(`run-tests: no test files under ${relative(root, testDir) || '.'}/ ${chosenBy.join(' and ')}`);
  process.exit(1);
}
const needsServer = files.some((file) => graph.needsServer(file));

// Several files at once: one file alone leaves the cores idle while it waits on servers and timers.
// Measured on 2 cores (docs/development.md): 3 against 1 before; 4 against 3 on 2026-11-29, a quarter
// faster once the suite waited more than it computed (821-829 s wall against 1085 s).
const concurrency = settings.concurrency ?? 4;
const timingsPath = settings.timingsFile ?? join(TEMPORAL_CACHE_DIR, 'test-timings.json');
// A fresh machine has no figures yet: the seconds recorded in the repository stand in (test-plan.ts).
const timings = { ...plan.readTimings(plan.SEED_TIMINGS_PATH), ...plan.readTimings(timingsPath) };
const alone = files.filter((file) => plan.runsAlone(file));
const needsLater = new Map(files.map((file) => [file, graph.needsServer(file) ? graph.provisionedLater(file) : []]));
const ordered = [
  ...plan.slowestFirst(alone, timings, display),
  ...plan.slowestFirst(
    files.filter((file) => !alone.includes(file)),
    timings,
    display,
  ),
];

mkdirSync(TEMPORAL_CACHE_DIR, { recursive: true });
const serverLogPath = join(TEMPORAL_CACHE_DIR, 'test-dev-server.log');
rmSync(serverLogPath, { force: true });

// The workers the test helpers start, with their payload keys, for the replay at the end (private: 0700).
const workerRegistry = mkdtempSync(join(tmpdir(), 'test-worker-registry-'));
const MIN_REPLAYED = filters.length === 0 && dirAt === -1 && !onlyChanged && !unitTier ? 50 : 0;
// Where each file's machine-readable report goes.
const reportDir = mkdtempSync(join(tmpdir(), 'test-file-reports-'));
// Each file's own temporary directory (its TMPDIR), removed with the run: what a test leaves there
// (key files, audit logs, payload stores, a server's data) outlives the file for the replay at the
// end, and no longer the run. Others may pass through, not list (0711): PostgreSQL, started as its
// own user under root, reaches its data directory here.
const filesTmpDir = mkdtempSync(join(tmpdir(), 'test-files-tmp-'));
chmodSync(filesTmpDir, 0o711);
const REPORTER = join(root, 'scripts/lib/test-file-reporter.mjs');
const TEST_TIMEOUT_MS = 300_000;

let server;
/** The provisioning of what only some files need, done before they start (provisionFirst). */
let later;
/** The shared workflow bundle's directory (made private), when any file needs a server. */
let bundleDir;
/** The test files' processes still running. */
const running = new Set();
let replay;
let stopping = false;

async function shutdown(exitCode) {
  if (stopping) return;
  stopping = true;
  await Promise.all([...running].map((child) => stopGroup(child)));
  await stop(replay);
  await stop(later?.child);
  await server?.close();
  if (bundleDir) rmSync(bundleDir, { recursive: true, force: true });
  rmSync(workerRegistry, { recursive: true, force: true });
  rmSync(reportDir, { recursive: true, force: true });
  try {
    rmSync(filesTmpDir, { recursive: true, force: true, maxRetries: 3 });
  } catch (error) {
    // Something a test left is still writing, or not the runner's to remove: the run's outcome stands.
    console.error(`run-tests: could not remove ${filesTmpDir}: ${error.message}`);
  }
  process.exit(exitCode);
}

/** What every test process is given: the shared server, the registry, the shared bundle; in the unit tier, the refusal to start a server. */
function sharedEnv() {
  return {
    // A runner started from inside a node:test file (the runner's own test) must not hand its files
    // that file's test context: node:test would report to a parent that is not listening.
    NODE_TEST_CONTEXT: undefined,
    [WORKER_REGISTRY_ENV]: workerRegistry,
    ...(server ? { TEMPORAL_TEST_ADDRESS: server.address } : {}),
    ...(bundleDir ? { TEST_WORKFLOW_BUNDLE: join(bundleDir, 'workflow-bundle.js') } : {}),
    ...(unitTier ? { TEST_UNIT_TIER: '1' } : {}),
  };
}

/**
 * Runs `node <args>` in the repository with the shared environment; its output is passed through,
 * and each line of it (standard output and error alike) to `onLine` too. Resolves to its exit code.
 */
function run(args, env, onLine = () => {}) {
  const child = spawn(process.execPath, args, {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...sharedEnv(), ...env },
  });
  for (const [stream, sink] of [
    [child.stdout, process.stdout],
    [child.stderr, process.stderr],
  ]) {
    let pending = '';
    stream.on('data', (chunk) => {
      sink.write(chunk);
      pending += chunk;
      const lines = pending.split('\n');
      pending = lines.pop();
      for (const line of lines) onLine(line);
    });
    stream.on('end', () => pending && onLine(pending));
  }
  const exit = new Promise((resolve) => {
    child.once('close', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
    child.once('error', (error) => {
      console.error(`run-tests: could not start node ${args[args.length - 1]}: ${error.message}`);
      resolve(1);
    });
  });
  return { child, exit };
}

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
  const cpu = cpuGroups.fileCpuGroup(String(process.pid), index);
  const fileTmpDir = join(filesTmpDir, String(index));
  mkdirSync(fileTmpDir);
  chmodSync(fileTmpDir, 0o711);
  const nodeArgs = [
    '--import',
    'tsx',
    // One file, in this process (so the reporters see an exit halfway: no end line), each test
    // failing after 5 minutes; the whole file after TEST_FILE_TIMEOUT_S (below).
    '--test',
    '--test-isolation=none',
    `--test-timeout=${TEST_TIMEOUT_MS}`,
    '--test-reporter=spec',
    '--test-reporter-destination=stdout',
    `--test-reporter=${REPORTER}`,
    `--test-reporter-destination=${reportPath}`,
    display(file),
  ];
  const [command, commandArgs] = cpu ? cpu.wrap(process.execPath, nodeArgs) : [process.execPath, nodeArgs];
  const child = spawn(command, commandArgs, {
    cwd: root,
    detached: true,
    stdio: buffered ? ['ignore', 'pipe', 'pipe'] : ['ignore', 'inherit', 'inherit'],
    env: { ...process.env, ...sharedEnv(), TMPDIR: fileTmpDir, ...(buffered && process.stdout.isTTY ? { FORCE_COLOR: '1' } : {}) },
  });
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
      const cpuSeconds = cpu?.seconds();
      await cpu?.remove(); // and anything that left the process group
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
      for (const suite of report.suiteFailures) {
        const error = suite.error?.split('\n')[0];
        if (!/^\d+ subtests? failed$/.test(error ?? '')) problems.push(`suite ${suite.name} failed${error ? `: ${error}` : ''}`);
      }
      if (problems.length === 0 && (code !== 0 || signal)) problems.push(`exited with ${signal ?? `code ${code}`}`);
      resolvePromise({ file: display(file), ms: Date.now() - startedAt, cpuSeconds, report, problems });
    });
  });
}

/**
 * Runs the files in order, `concurrency` at a time (their provisioning is done: provisionFirst): the
 * next starts when a place is free; a file that runs alone starts only when nothing else runs, and
 * nothing starts beside it. Resolves to their outcomes.
 */
function runFiles(list) {
  return new Promise((resolveAll) => {
    const outcomes = [];
    const queue = [...list];
    let active = 0;
    let aloneRunning = false;
    let index = 0;
    const pump = () => {
      while (!stopping && !aloneRunning && active < concurrency && queue.length > 0) {
        const file = queue[0];
        const isAlone = alone.includes(file);
        if (isAlone && active > 0) break; // it waits for the others to end, and holds the rest back
        queue.shift();
        const failedLanes = needsLater.get(file).filter((lane) => later.lanes.get(lane) === 'failed');
        if (failedLanes.length > 0) {
          outcomes.push(notRun(file, `not run: it needs ${failedLanes.join(', ')}, whose provisioning failed (${shown(later.logPath)})`));
          continue;
        }
        active += 1;
        aloneRunning = isAlone;
        void runFile(file, index++).then((outcome) => {
          outcomes.push(outcome);
          active -= 1;
          if (isAlone) aloneRunning = false;
          pump();
        });
      }
      if (active === 0 && (queue.length === 0 || stopping)) resolveAll(outcomes);
    };
    pump();
  });
}

/** The outcome of a file the runner could not start. */
function notRun(file, problem) {
  return { file: display(file), ms: 0, report: { ended: false, passed: 0, failed: 0, skipped: [], failures: [], suiteFailures: [] }, problems: [problem] };
}

/**
 * `scripts/provision-temporal.sh later <lanes>`: what only some files need (the previous server
 * release, MinIO, Compose, the collector, moto, the CLI), provisioned before the first file starts so
 * that no file shares the cores with a compiler and no file's time limit includes a build. Its lines
 * go to the console as they come (a fresh machine builds for minutes) and to its log. Resolves once
 * the script has ended, each lane 'ready' or 'failed' (a lane the script never said is failed).
 * Cached binaries make it take seconds.
 */
async function provisionFirst(wanted) {
  const state = { lanes: new Map(), logPath: join(TEMPORAL_CACHE_DIR, 'provision-later.log'), child: undefined, ms: 0 };
  later = state; // so that a signal's shutdown stops the script too
  if (wanted.length === 0) return state;
  for (const lane of wanted) state.lanes.set(lane, 'pending');
  const log = createWriteStream(state.logPath);
  const startedAt = Date.now();
  console.log(`run-tests: provisioning what ${wanted.length === 1 ? 'a file needs' : 'the files need'} before the first starts: ${wanted.join(', ')}`);
  const child = spawn('bash', ['scripts/provision-temporal.sh', 'later', ...wanted], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  state.child = child;
  let pending = '';
  child.stdout.pipe(log, { end: false });
  child.stderr.on('data', (chunk) => {
    log.write(chunk);
    pending += chunk;
    const lines = pending.split('\n');
    pending = lines.pop();
    for (const line of lines) {
      // The steps' own closing lines and the lanes' verdicts; a build's downloads stay in the log.
      if (/^\[provision-temporal\] (provisioned|FAILED|ready:|failed:|building|still building|fetching|installing)/.test(line)) console.log(line);
      const said = /^\[provision-temporal\] (ready|failed): (\S+)$/.exec(line);
      if (said && state.lanes.get(said[2]) === 'pending') state.lanes.set(said[2], said[1]);
    }
  });
  await new Promise((resolvePromise) => {
    child.once('exit', resolvePromise);
    child.once('error', (error) => {
      log.write(`could not start: ${error.message}\n`);
      resolvePromise();
    });
  });
  log.end();
  state.child = undefined;
  state.ms = Date.now() - startedAt;
  for (const [lane, to] of state.lanes) {
    if (to === 'pending') state.lanes.set(lane, 'failed');
    if (state.lanes.get(lane) === 'failed')
      console.error(`run-tests: provisioning ${lane} failed; the files that need it are not run (${shown(state.logPath)})`);
  }
  return state;
}

/**
 * Prints each file's verdict, the failed and skipped tests by name, the slowest files, the replay's
 * failures, the suite's figures and the totals; true when a file failed or did not run.
 */
function printSummary(outcomes, { wallMs, replayLine, replayExit, replayFailures, replayTail }) {
  const totals = { passed: 0, failed: 0, skipped: 0 };
  const failedFiles = outcomes.filter((outcome) => outcome.problems.length > 0);
  console.log('\nrun-tests: files');
  for (const { file, ms, report, problems } of [...outcomes].sort((a, b) => (a.file < b.file ? -1 : 1))) {
    totals.passed += report.passed;
    totals.failed += report.failed;
    totals.skipped += report.skipped.length;
    const counts = `${report.passed} passed, ${report.failed} failed, ${report.skipped.length} skipped, ${(ms / 1000).toFixed(1)} s`;
    console.log(problems.length === 0 ? `✔ ${file} (${counts})` : `✖ ${file} (${counts}): ${problems.join('; ')}`);
  }
  const failures = outcomes.flatMap(({ file, report }) => report.failures.map((failure) => ({ file, ...failure })));
  if (failures.length > 0) {
    console.log('\nrun-tests: failed tests');
    // The error's excerpt too (the reporter kept its head and tail): a CI log may keep only the end of the output, where this stands.
    for (const { file, name, error } of failures) {
      const [first = '', ...rest] = String(error ?? '').split('\n');
      console.log(`✖ ${file} › ${name}${first ? `: ${first}` : ''}`);
      for (const line of rest) console.log(`    ${line}`);
    }
  }
  const skipped = outcomes.flatMap(({ file, report }) => report.skipped.map((skip) => ({ file, ...skip })));
  if (skipped.length > 0) {
    console.log('\nrun-tests: skipped tests, and what they need');
    for (const { file, name, reason } of skipped) console.log(`﹣ ${file} › ${name} # ${reason || 'no reason given'}`);
  }
  console.log('');
  for (const { file, ms } of [...outcomes].sort((a, b) => b.ms - a.ms).slice(0, 10)) console.log(`slowest: ${file} ${(ms / 1000).toFixed(1)}`);
  const measured = outcomes.filter((outcome) => outcome.cpuSeconds !== undefined);
  if (measured.length > 0) {
    console.log('');
    for (const { file, cpuSeconds } of [...measured].sort((a, b) => b.cpuSeconds - a.cpuSeconds).slice(0, 10))
      console.log(`cpu: ${file} ${cpuSeconds.toFixed(1)}`);
  }
  // Near the end, where a CI log that keeps only the end of the output still shows them.
  if (replayExit !== 0) {
    console.log(`\nrun-tests: FAILED: the replay of the suite's histories (scripts/replay-suite.ts) exited with code ${replayExit}`);
    for (const line of replayFailures.length > 0 ? replayFailures : replayTail) console.log(`    ${line}`);
  } else if (replayFailures.length > 0) {
    console.log('\nrun-tests: the replay passed, with histories that failed beside others and replayed alone:');
    for (const line of replayFailures) console.log(`    ${line}`);
  }
  const tests = totals.passed + totals.failed + totals.skipped;
  const summedMs = outcomes.reduce((sum, outcome) => sum + outcome.ms, 0);
  console.log(`\nℹ files ${outcomes.length}`);
  console.log(`ℹ failed files ${failedFiles.length}${failedFiles.length ? ` (${failedFiles.map((outcome) => outcome.file).join(', ')})` : ''}`);
  console.log(`ℹ tests ${tests}`);
  console.log(`ℹ pass ${totals.passed}`);
  console.log(`ℹ fail ${totals.failed}`);
  console.log(`ℹ skipped ${totals.skipped}`);
  if (measured.length > 0)
    console.log(
      `ℹ cpu ${Math.round(measured.reduce((sum, outcome) => sum + outcome.cpuSeconds, 0))} s summed over ${measured.length} files (their servers and workers included)`,
    );
  if (replayLine) console.log(replayLine);
  console.log(
    `suite: ${outcomes.length} files, ${tests} tests, ${Math.round(wallMs / 1000)} s wall, ${Math.round(summedMs / 1000)} s summed, concurrency ${concurrency}`,
  );
  console.log(`${totals.passed} passed, ${totals.failed} failed, ${totals.skipped} skipped`);
  return failedFiles.length > 0 || outcomes.length < files.length;
}

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    console.error(`\nrun-tests: ${signal}, stopping tests and the Temporal dev server`);
    void shutdown(130);
  });
}

/** Bundles the product's workflow code once for every worker of the run, into a private directory. */
async function writeSharedBundle() {
  const { productWorkflowBundle } = await tsImport('./lib/workflow-bundle.ts', import.meta.url);
  const code = await productWorkflowBundle();
  const dir = mkdtempSync(join(tmpdir(), 'test-workflow-bundle-'));
  writeFileSync(join(dir, 'workflow-bundle.js'), code, { mode: 0o600 });
  return dir;
}

await provisionFirst(plan.PROVISIONED_LATER.map(({ lane }) => lane).filter((lane) => [...needsLater.values()].some((lanes) => lanes.includes(lane))));
if (later.lanes.size > 0)
  console.log(
    `run-tests: provisioned ${[...later.lanes].map(([lane, to]) => `${lane} ${to}`).join(', ')} in ${Math.round(later.ms / 1000)} s (${shown(later.logPath)})`,
  );
const startedAt = Date.now();
if (needsServer) {
  // The server starts while the bundle is made: neither waits on the other.
  const [started, bundled] = await Promise.allSettled([
    DevServer.start({
      logPath: serverLogPath,
      logLevel: 'error',
      onUnexpectedExit: (how) => console.error(`run-tests: the shared Temporal dev server exited unexpectedly (${how}); see ${relative(root, serverLogPath)}`),
    }),
    writeSharedBundle(),
  ]);
  if (started.status === 'fulfilled') server = started.value;
  else console.error(`run-tests: ${started.reason?.message ?? started.reason} (log: ${relative(root, serverLogPath)})`);
  if (bundled.status === 'fulfilled') bundleDir = bundled.value;
  else console.error(`run-tests: could not bundle the workflow code: ${bundled.reason?.stack ?? bundled.reason}`);
  if (!server || !bundleDir) await shutdown(1);
  console.log(`run-tests: Temporal dev server at ${server.address} and the workflow bundle ready in ${Date.now() - startedAt} ms`);
}
console.log(
  `run-tests: ${files.length} test file(s) that ${chosenBy.join(' and ')}, concurrency ${concurrency}, slowest first${alone.length ? `; ${alone.length} run alone first` : ''}`,
);

const outcomes = await runFiles(ordered);
// A file cut short or killed measured less than its real time: only finished files teach the order.
plan.recordTimings(
  timingsPath,
  Object.fromEntries(outcomes.filter((outcome) => outcome.report.ended).map((outcome) => [outcome.file, Math.round(outcome.ms / 100) / 10])),
);

// Also after failing tests: a history that does not replay may be why they failed. The unit tier wrote none.
let replayExit = 0;
let replayLine;
/** The replay's failures (and the histories it replayed only alone), and its last lines of output, repeated in the summary. */
const replayFailures = [];
const replayTail = [];
if (server && !stopping) {
  const replayRun = run(
    ['--import', 'tsx', 'scripts/replay-suite.ts'],
    { REPLAY_MIN_HISTORIES: String(settings.replayMinHistories ?? MIN_REPLAYED) },
    (line) => {
      if (line.startsWith('replay: ') && / histories of the suite replayed/.test(line)) replayLine = line;
      if (/^replay: (FAILED|NONDETERMINISM|replayed only alone)/.test(line)) replayFailures.push(line);
      replayTail.push(line);
      if (replayTail.length > 20) replayTail.shift();
    },
  );
  replay = replayRun.child;
  replayExit = await replayRun.exit;
}
const summaryFailed = printSummary(outcomes, { wallMs: Date.now() - startedAt, replayLine, replayExit, replayFailures, replayTail });
await shutdown(summaryFailed ? 1 : replayExit);
