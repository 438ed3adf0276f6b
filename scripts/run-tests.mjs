#!/usr/bin/env node
// `npm test`: runs every test/**/*.test.ts with node:test (through tsx) against ONE shared Temporal
// dev server (in-memory, our search attributes registered), exported as TEMPORAL_TEST_ADDRESS.
//   npm test                      all test files
//   npm test -- helpers sandbox   only files whose path contains one of the arguments
// TEST_CONCURRENCY overrides how many test files run at once (default: half the cores, at least 1).
/* global process, console, setTimeout, clearTimeout, URL */
import { spawn } from 'node:child_process';
import { createWriteStream, mkdirSync, readdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { availableParallelism } from 'node:os';
import { join, relative, sep } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { tsImport } from 'tsx/esm/api';

const root = fileURLToPath(new URL('..', import.meta.url));
const { temporalCliPath, devServerSearchAttributeArgs, TEMPORAL_CACHE_DIR } = await tsImport('./lib/temporal-binaries.ts', import.meta.url);
const { devServerDynamicConfigArgs } = await tsImport('./lib/server-dynamic-config.ts', import.meta.url);

const STARTUP_TIMEOUT_MS = 60_000;
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

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
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

/** Starts `temporal server start-dev` and resolves with its address once the default namespace answers. */
async function startDevServer(cliPath, logStream) {
  const { Connection } = await import('@temporalio/client');
  const [port, httpPort, metricsPort] = [await freePort(), await freePort(), await freePort()];
  const address = `127.0.0.1:${port}`;
  const args = [
    'server', 'start-dev', '--headless', '--ip', '127.0.0.1',
    '--port', String(port), '--http-port', String(httpPort), '--metrics-port', String(metricsPort),
    '--log-level', 'error', ...devServerSearchAttributeArgs(), ...devServerDynamicConfigArgs(),
  ];
  const startedAt = Date.now();
  const child = spawn(cliPath, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout.pipe(logStream, { end: false });
  child.stderr.pipe(logStream, { end: false });
  let exitInfo;
  child.once('exit', (code, signal) => { exitInfo = signal ?? `exit code ${code}`; });
  child.once('error', (error) => { exitInfo = error.message; });

  while (Date.now() - startedAt < STARTUP_TIMEOUT_MS) {
    if (exitInfo) return { child, address, failure: `the dev server stopped during start-up (${exitInfo})` };
    try {
      const connection = await Connection.connect({ address, connectTimeout: 1_000 });
      try {
        await connection.workflowService.describeNamespace({ namespace: 'default' });
        return { child, address, startupMs: Date.now() - startedAt };
      } finally {
        await connection.close();
      }
    } catch {
      await delay(100);
    }
  }
  return { child, address, failure: `the dev server did not answer on ${address} within ${STARTUP_TIMEOUT_MS} ms` };
}

const filters = process.argv.slice(2);
const files = findTestFiles(join(root, 'test')).filter((file) => filters.length === 0 || filters.some((filter) => relative(root, file).includes(filter)));
if (files.length === 0) {
  console.error(`run-tests: no test files under test/ match ${filters.map((f) => JSON.stringify(f)).join(', ') || '*.test.ts'}`);
  process.exit(1);
}

// Test files run in child processes. Durability tests spawn workers and servers of their own, and
// workflow bundling is CPU-bound: with 2 cores, one file at a time keeps timing-sensitive tests honest.
const concurrency = Number(process.env.TEST_CONCURRENCY) || Math.max(1, Math.floor(availableParallelism() / 2));

let cliPath;
try {
  cliPath = temporalCliPath();
} catch (error) {
  console.error(`run-tests: ${error.message}`);
  process.exit(1);
}

mkdirSync(TEMPORAL_CACHE_DIR, { recursive: true });
const serverLogPath = join(TEMPORAL_CACHE_DIR, 'test-dev-server.log');
const serverLog = createWriteStream(serverLogPath);

let server;
let tests;
let stopping = false;

async function shutdown(exitCode) {
  if (stopping) return;
  stopping = true;
  await stop(tests);
  await stop(server);
  serverLog.end();
  process.exit(exitCode);
}

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    console.error(`\nrun-tests: ${signal}, stopping tests and the Temporal dev server`);
    void shutdown(130);
  });
}

let started;
for (let attempt = 1; attempt <= 3; attempt++) {
  started = await startDevServer(cliPath, serverLog);
  server = started.child;
  if (!started.failure) break;
  await stop(server);
  console.error(`run-tests: ${started.failure} (attempt ${attempt}; log: ${relative(root, serverLogPath)})`);
}
if (started.failure) {
  await shutdown(1);
}
server.once('exit', (code, signal) => {
  if (!stopping) console.error(`run-tests: the shared Temporal dev server exited unexpectedly (${signal ?? code}); see ${relative(root, serverLogPath)}`);
});
console.log(`run-tests: Temporal dev server ready at ${started.address} in ${started.startupMs} ms; ${files.length} test file(s), concurrency ${concurrency}`);

tests = spawn(
  process.execPath,
  [
    '--import', 'tsx', '--test', '--test-reporter=spec', `--test-concurrency=${concurrency}`,
    // A hung test fails after 5 minutes instead of holding CI to its 90-minute limit.
    '--test-timeout=300000',
    ...files.map((file) => relative(root, file).split(sep).join('/')),
  ],
  { cwd: root, stdio: 'inherit', env: { ...process.env, TEMPORAL_TEST_ADDRESS: started.address } },
);
const testExit = await new Promise((resolve) => {
  tests.once('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  tests.once('error', (error) => {
    console.error(`run-tests: could not start node --test: ${error.message}`);
    resolve(1);
  });
});
await shutdown(testExit);
