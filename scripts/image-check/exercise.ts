/**
 * Runs the runtime stage's output as the image's containers would, against a real Temporal dev
 * server and the sandbox (run from this checkout: it is not in the image, temporal-compose.yml gives
 * it an image of its own): the console (`node dist/...`, its command in temporal-compose.yml), then
 * the image's CMD (the worker) with the image's ENV. One live connection is started and followed to
 * Completed with the operator CLI from dist/; the image's HEALTHCHECK must pass while the worker runs.
 * Then a second connection's Authorize is held in flight by a delaying proxy (scripts/chaos/proxy.ts)
 * and the worker is sent SIGTERM: the HEALTHCHECK must fail with 503 while it drains, and the worker
 * must exit 0 once the held call is answered.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { Client, Connection } from '@temporalio/client';
import { loadTestConfig } from '../lib/test-settings.js';
import { startChaosProxy } from '../chaos/proxy.js';
import { DevServer } from '../lib/dev-server.js';
import { freePort } from '../lib/free-port.js';
import { PROJECT_ROOT } from '../lib/temporal-binaries.js';
import { ImageProcess, ImageProcessError, runToEnd, unprivileged, writableByImage } from './image-processes.js';

const START_TIMEOUT_MS = 60_000;
const CONNECTION_TIMEOUT_MS = 120_000;
const DRAIN_TIMEOUT_MS = 60_000;
/** How long the proxy holds each Authorize reply: the window in which the draining worker is probed. */
const HOLD_MS = 4_000;
const HOST = '127.0.0.1';

export interface ExerciseOptions {
  /** The runtime stage's directory (the image's WORKDIR). */
  readonly dir: string;
  /** The image's ENV, paths mapped into `dir`. */
  readonly imageEnv: Readonly<Record<string, string>>;
  readonly cmd: readonly string[];
  /** The HEALTHCHECK command; its URL's port is replaced by the worker's. */
  readonly healthcheck: readonly string[];
  readonly healthPort: string;
  readonly logDir: string;
  readonly report: (line: string) => void;
}

export interface ExerciseResult {
  readonly who: string;
  readonly workerUid: number | undefined;
  readonly healthyLine: string;
  readonly connectionMs: number;
  readonly drainStates: readonly string[];
  readonly workerStates: readonly string[];
  readonly workerExit: number | null;
  readonly drainMs: number;
}

interface Temporal {
  readonly address: string;
  /** The server `npm test` shares (TEMPORAL_TEST_ADDRESS), not one of this run. */
  readonly shared: boolean;
  readonly client: Client;
  close(): Promise<void>;
}

/** The Temporal dev server: the one `npm test` shares (TEMPORAL_TEST_ADDRESS), else a private one (our search attributes registered). */
async function temporal(logDir: string): Promise<Temporal> {
  let server: DevServer | undefined;
  let address = loadTestConfig().temporalAddress;
  if (!address) {
    server = await DevServer.start({ dbFile: join(logDir, 'temporal.sqlite'), logPath: join(logDir, 'temporal.log') });
    address = server.address;
  }
  const connection = await Connection.connect({ address });
  return {
    address,
    shared: server === undefined,
    client: new Client({ connection }),
    close: async () => {
      await connection.close();
      await server?.close();
    },
  };
}

export async function exercise(options: ExerciseOptions): Promise<ExerciseResult> {
  const { prefix, who } = unprivileged();
  const started: ImageProcess[] = [];
  const run = (name: string, argv: readonly string[], env: Record<string, string>) => {
    const child = new ImageProcess(name, argv, { cwd: options.dir, env, prefix, logPath: join(options.logDir, `${name}.log`) });
    started.push(child);
    return child;
  };
  let logCount = 0;
  const once = (name: string, argv: readonly string[], env: Record<string, string>, input?: string) =>
    runToEnd(name, argv, {
      cwd: options.dir,
      env,
      prefix,
      logPath: join(options.logDir, `${name}-${++logCount}.log`),
      input,
      timeoutMs: CONNECTION_TIMEOUT_MS,
    });
  // node dist/src/worker/health-check.js, as the HEALTHCHECK names it, against any URL.
  const probe = (url: string) => once('health-check', [...options.healthcheck.slice(0, -1), url], {});

  const env = await temporal(options.logDir);
  const proxyHolder: { close?: () => Promise<void> } = {};
  try {
    const taskQueue = `image-check-${randomBytes(4).toString('hex')}`;
    const shared = {
      TEMPORAL_ADDRESS: env.address,
      TEMPORAL_TASK_QUEUE: taskQueue,
      PAYLOAD_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
      // The runtime directory is not writable by the image's user, as /app is not.
      PAYLOAD_STORE: 'off',
      // So the audit trail goes where a deployment puts it: a place the image's user may write.
      AUDIT_STORE: `file:${join(writableByImage(join(options.logDir, 'audit')), 'audit.jsonl')}`,
    };
    options.report(`Temporal dev server ${env.address}${env.shared ? ' (shared by npm test)' : ''}, task queue ${taskQueue}; image processes run as ${who}`);

    const sandboxPort = String(await freePort());
    // From the checkout, as this user: the stand-in of the service, not a process of the image.
    const sandbox = new ImageProcess('sandbox', [process.execPath, '--import', 'tsx', 'sandbox/main.ts'], {
      cwd: PROJECT_ROOT,
      env: { SANDBOX_HOST: HOST, SANDBOX_PORT: sandboxPort },
      prefix: [],
      logPath: join(options.logDir, 'sandbox.log'),
    });
    started.push(sandbox);
    await sandbox.waitForOutput('sandbox listening on', START_TIMEOUT_MS);
    const sandboxHealth = await probe(`http://${HOST}:${sandboxPort}/sandbox/health`);
    if (sandboxHealth.code !== 0) throw new ImageProcessError(`the sandbox's health check failed: ${sandboxHealth.output.trim()}`);
    options.report(`  sandbox   node --import tsx sandbox/main.ts (the checkout's, not the image's): up; health check ${sandboxHealth.output.trim()}`);

    const consolePort = String(await freePort());
    const token = randomBytes(24).toString('hex');
    const console_ = run('console', ['node', 'dist/src/console/server.js'], { ...shared, CONSOLE_HOST: HOST, CONSOLE_PORT: consolePort, CONSOLE_TOKEN: token });
    await console_.waitForOutput('operator console on', START_TIMEOUT_MS);
    const consoleHealth = await probe(`http://${HOST}:${consolePort}/healthz`);
    if (consoleHealth.code !== 0) throw new ImageProcessError(`the console's health check failed: ${consoleHealth.output.trim()}`);
    for (const page of ['/', '/app.js', '/style.css', '/shared/durations.js', '/shared/images.js']) {
      const response = await fetch(`http://${HOST}:${consolePort}${page}`, { headers: { authorization: `Bearer ${token}` } });
      if (response.status !== 200)
        throw new ImageProcessError(`the console answers ${response.status} to ${page}: its page assets are not where dist/ looks for them`);
    }
    options.report(`  console   node dist/src/console/server.js: up; health check ${consoleHealth.output.trim()}; page, app.js, style.css served from dist`);

    const proxy = await startChaosProxy({ upstream: `http://${HOST}:${sandboxPort}`, replyDelayMs: HOLD_MS });
    proxyHolder.close = () => proxy.close();

    const healthPort = String(await freePort());
    const healthcheck = options.healthcheck.map((word) => word.replace(`:${options.healthPort}/`, `:${healthPort}/`));
    const worker = run('worker', options.cmd, {
      ...options.imageEnv,
      ...shared,
      WORKER_HEALTH_PORT: healthPort,
      WORKER_METRICS_PORT: '0',
      AGGREGATOR_BASE_URL: proxy.urlFor('worker'),
    });
    await worker.waitForOutput('"worker started"', START_TIMEOUT_MS);
    const workerUid = worker.uid();
    let healthy: { code: number | null; output: string } = { code: null, output: '' };
    for (const deadline = Date.now() + START_TIMEOUT_MS; Date.now() < deadline; await delay(200)) {
      healthy = await once('healthcheck', healthcheck, {});
      if (healthy.code === 0) break;
    }
    if (healthy.code !== 0)
      throw new ImageProcessError(`the HEALTHCHECK (${healthcheck.join(' ')}) never passed while the worker ran: ${healthy.output.trim()}\n${worker.tail()}`);
    options.report(`  worker    ${options.cmd.join(' ')} (uid ${workerUid ?? '?'}): started; HEALTHCHECK ${healthy.output.trim()}`);

    const cli = ['node', 'dist/src/cli/main.js'];
    const key = `connection-demo-lender:image-check-${randomBytes(4).toString('hex')}`;
    const connectionStarted = Date.now();
    const start = await once(
      'cli',
      [...cli, 'start', '--key', key, '--institution', 'SandboxBank', '--username', 'no_mfa', '--password-stdin', '--accounts'],
      shared,
      'Everyday\n',
    );
    if (start.code !== 0) throw new ImageProcessError(`cli start exited ${start.code}:\n${start.output}`);
    const watch = await once('cli', [...cli, 'watch', key, '--interval', '500'], shared);
    if (watch.code !== 0) throw new ImageProcessError(`cli watch ${key} exited ${watch.code} (0 is Completed):\n${watch.output}\nworker:\n${worker.tail()}`);
    const connectionMs = Date.now() - connectionStarted;
    options.report(
      `  connection ${key} (live, no_mfa, accounts) via node dist/src/cli/main.js start + watch: Completed in ${(connectionMs / 1000).toFixed(1)} s`,
    );
    options.report(`    ${watch.output.trim().split('\n').at(-1)}`);

    // A second connection whose live Authorize the proxy holds: the worker has an activity in flight.
    const heldKey = `connection-demo-lender:image-check-drain-${randomBytes(4).toString('hex')}`;
    const held = await once(
      'cli',
      [...cli, 'start', '--key', heldKey, '--institution', 'SandboxBank', '--username', 'no_mfa', '--password-stdin', '--accounts', '--no-wait'],
      shared,
      'Everyday\n',
    );
    if (held.code !== 0) throw new ImageProcessError(`cli start --no-wait exited ${held.code}:\n${held.output}`);
    for (const deadline = Date.now() + START_TIMEOUT_MS; (proxy.inFlight().get('worker') ?? 0) === 0; await delay(50)) {
      if (Date.now() > deadline) throw new ImageProcessError(`the worker never called the service for ${heldKey}`);
    }
    const drainStarted = Date.now();
    worker.child.kill('SIGTERM');
    const drainStates: string[] = [];
    while (!worker.hasExited() && Date.now() - drainStarted < DRAIN_TIMEOUT_MS) {
      const result = await once('healthcheck', healthcheck, {});
      const state = /"state":"([A-Z]+)"/.exec(result.output)?.[1];
      drainStates.push(result.code === 0 ? `200 ${state}` : state ? `503 ${state}` : 'no answer');
    }
    const exit = await worker.stop(DRAIN_TIMEOUT_MS);
    const drainMs = Date.now() - drainStarted;
    const workerStates = workerStatesLogged(worker.output());
    options.report(
      `  SIGTERM with ${heldKey}'s Authorize in flight (held ${HOLD_MS} ms by the proxy): worker exited ${exit.signal ?? exit.code} after ${(drainMs / 1000).toFixed(1)} s`,
    );
    options.report(`    HEALTHCHECK during the drain: ${summarize(drainStates)}`);
    options.report(`    worker's own log: state ${workerStates.join(' → ')}`);
    await env.client.workflow
      .getHandle(heldKey)
      .terminate('image-check: done (its worker was drained on purpose)')
      .catch(() => undefined);

    for (const process_ of [console_, sandbox]) {
      const ended = await process_.stop(10_000);
      options.report(`  ${process_.name} stopped by SIGTERM: ${ended.forced ? 'SIGKILLed after 10 s' : `exit ${ended.signal ?? ended.code}`}`);
    }
    return { who, workerUid, healthyLine: healthy.output.trim(), connectionMs, drainStates, workerStates, workerExit: exit.signal ? null : exit.code, drainMs };
  } finally {
    await Promise.all(started.map((process_) => process_.stop(5_000, 'SIGKILL')));
    await proxyHolder.close?.();
    await env.close();
  }
}

/** The states of the SDK's "Worker state changed" lines in the worker's JSON log. */
function workerStatesLogged(output: string): string[] {
  const states: string[] = [];
  for (const line of output.split('\n')) {
    if (!line.includes('Worker state changed')) continue;
    try {
      const entry = JSON.parse(line) as { message?: string; state?: string };
      if (entry.message === 'Worker state changed' && entry.state) states.push(entry.state);
    } catch {
      // not one of its JSON lines
    }
  }
  return states;
}

/** ["503 DRAINING", "503 DRAINING", "no answer"] → "503 DRAINING ×2, no answer". */
function summarize(states: readonly string[]): string {
  const runs: [string, number][] = [];
  for (const state of states) {
    const last = runs.at(-1);
    if (last && last[0] === state) last[1] += 1;
    else runs.push([state, 1]);
  }
  return runs.map(([state, count]) => (count > 1 ? `${state} ×${count}` : state)).join(', ') || '(none: the worker exited before the first probe)';
}
