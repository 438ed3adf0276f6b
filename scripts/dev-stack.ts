/**
 * `npm start`: the whole stack on one machine, for demos and manual testing.
 *   1. the Temporal dev server (scripts/lib/dev-server.ts: the production server release on SQLite in
 *      .temporal/dev-stack-v<release>.sqlite), its Web UI, our search attributes; its log in .temporal/dev-stack-temporal.log;
 *   2. the sandbox of the aggregation service, in this process, its state (sessions, saved logins) in
 *      .temporal/dev-stack-v<release>-sandbox.json beside the history that names them;
 *   3. the worker (child process: src/worker.ts), both pools in it (UNATTENDED_POOL=separate, the
 *      unattended pool's workflow threads at WORKER_UNATTENDED_NICE=19, unless set);
 *   4. the operator console (child process);
 *   5. the pipeline entry (child process), with a demo key for the demo tenant printed below (scripts/lib/dev-pipeline-entry.ts).
 * Ctrl-C stops everything in reverse order; so does any part dying on its own. When this process dies
 * without stopping them (SIGKILL, a crash, an out-of-memory kill), its children end with it
 * (scripts/lib/parent-lifetime.ts): the next `npm start` finds its ports free and no old worker.
 * Ports (parsed by loadDevStackConfig in scripts/lib/dev-stack-settings.ts): TEMPORAL_PORT (7233), TEMPORAL_UI_PORT (8233),
 * SANDBOX_PORT (4010), CONSOLE_PORT (8080), and the worker's WORKER_METRICS_PORT (9464, 0 = off).
 * CONSOLE_TOKEN is generated when unset; WORKER_BECOME_CURRENT is yes unless set (docs/configuration.md).
 * Payloads are encrypted by default: with PAYLOAD_ENCRYPTION_KEY if set, else with a key generated once
 * into .temporal/payload-encryption.key (PAYLOAD_ENCRYPTION_KEY_FILE), which the worker, console, CLI
 * and demo find the same way; PAYLOAD_ENCRYPTION=off stores them in clear. The console serves the
 * codec endpoint, and the Web UI is started with it (includeCredentials), so a browser that opened the
 * console once shows decoded payloads.
 * DEV_KEY_PROVIDER=openbao starts a local OpenBao first (scripts/lib/dev-openbao.ts) and gives the
 * worker and console PAYLOAD_KEY_PROVIDER=vault-transit on it; the local key then only reads what it wrote.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { devNull } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { loadClientConfig } from '../src/settings/client.js';
import { loadDevStackConfig } from './lib/dev-stack-settings.js';
import { DEFAULT_LOCAL_KEY_FILE } from '../src/settings/encryption-keys.js';
import { readOrCreateLocalKey } from '../src/codec/local-key.js';
import { createSandbox, type Sandbox } from '../sandbox/server.js';
import { DevServer } from './lib/dev-server.js';
import { startDevOpenBao, type DevOpenBao } from './lib/dev-openbao.js';
import { EXIT_WITH_PARENT_IMPORT } from './lib/parent-lifetime.js';
import { PROJECT_ROOT, TEMPORAL_CACHE_DIR } from './lib/temporal-binaries.js';
import { prepareDemoNexusCaller } from './lib/dev-nexus-caller.js';
import { prepareDevPipelineEntry } from './lib/dev-pipeline-entry.js';
import { TEMPORAL_SERVER_VERSION } from './lib/temporal-versions.js';

const STOP_GRACE_MS = 5_000;

class DevStackError extends Error {
  override readonly name = 'DevStackError';
}

function assertPortFree(host: string, port: number, what: string, variable: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', (error: NodeJS.ErrnoException) => {
      reject(
        new DevStackError(
          error.code === 'EADDRINUSE'
            ? `port ${port} (${what}) is already in use on ${host}: stop what holds it or set ${variable} to another port`
            : `cannot listen on ${host}:${port} (${what}): ${error.message}; set ${variable} to another port`,
        ),
      );
    });
    probe.listen(port, host, () => probe.close(() => resolve()));
  });
}

// ---- children ---------------------------------------------------------------------------------

interface Child {
  readonly name: string;
  readonly process: ChildProcess;
  readonly exited: Promise<void>;
}

const children: Child[] = [];
let stopping = false;
let sandbox: Sandbox | undefined;
let temporal: DevServer | undefined;
let openBao: DevOpenBao | undefined;

function prefixLines(stream: NodeJS.ReadableStream | null, prefix: string, out: NodeJS.WriteStream, onLine?: (line: string) => void): void {
  if (!stream) return;
  createInterface({ input: stream, crlfDelay: Infinity }).on('line', (line) => {
    out.write(`${prefix} ${line}\n`);
    onLine?.(line);
  });
}

/**
 * A Node child. It gets its own process group, so Ctrl-C reaches only us and we stop them in order;
 * its stdin is a pipe from us that it watches (scripts/lib/exit-with-parent.ts): it ends when we do.
 */
/**
 * With OpenBao, the histories this stack wrote earlier under its generated local key stay readable:
 * the key is listed for decryption (a KMS process never reads the key file itself, a key the KMS
 * could not revoke). No file yet: nothing was written with it, nothing to list.
 */
function listLocalKeyForDecryption(env: NodeJS.ProcessEnv): void {
  const file = resolve(PROJECT_ROOT, env.PAYLOAD_ENCRYPTION_KEY_FILE ?? DEFAULT_LOCAL_KEY_FILE);
  if (!existsSync(file)) return;
  const local = readOrCreateLocalKey(file);
  const listed = `${local.keyId}:${Buffer.from(local.key).toString('base64')}`;
  env.PAYLOAD_DECRYPTION_KEYS = env.PAYLOAD_DECRYPTION_KEYS ? `${env.PAYLOAD_DECRYPTION_KEYS},${listed}` : listed;
}

function startNodeChild(name: string, script: string, env: NodeJS.ProcessEnv, onLine?: (line: string) => void): Child {
  const args = ['--import', 'tsx', ...EXIT_WITH_PARENT_IMPORT, script];
  const child = spawn(process.execPath, args, { cwd: PROJECT_ROOT, env, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
  const prefix = `[${name}]`.padEnd(10);
  prefixLines(child.stdout, prefix, process.stdout, onLine);
  prefixLines(child.stderr, prefix, process.stderr);
  const exited = new Promise<void>((resolve) => {
    child.once('exit', (code, signal) => {
      resolve();
      if (!stopping) {
        console.error(`dev-stack: ${name} exited on its own (${signal ?? `code ${code}`}); stopping everything`);
        void shutdown(1);
      }
    });
    child.once('error', (error) => {
      resolve();
      if (!stopping) {
        console.error(`dev-stack: could not start ${name}: ${error.message}`);
        void shutdown(1);
      }
    });
  });
  const entry = { name, process: child, exited };
  children.push(entry);
  return entry;
}

async function stopChild({ process: child, exited }: Child, signal: NodeJS.Signals): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
  child.kill(signal);
  const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
  await exited;
  clearTimeout(timer);
}

async function closeSandbox(): Promise<void> {
  const open = sandbox;
  sandbox = undefined;
  await open?.close().catch((error: unknown) => console.error('dev-stack: error closing the sandbox', error));
}

let shuttingDown: Promise<never> | undefined;
/** Stops everything once; later calls (a second Ctrl-C, tsx relaying the signal) wait for the first. */
function shutdown(exitCode: number): Promise<never> {
  shuttingDown ??= stopAll().then(() => process.exit(exitCode));
  return shuttingDown;
}

async function stopAll(): Promise<void> {
  stopping = true;
  const started = children.length > 0 || sandbox !== undefined || temporal !== undefined || openBao !== undefined;
  if (started) console.log('dev-stack: stopping');
  // Reverse order of start: console, worker (SIGINT lets it drain), sandbox, Temporal.
  for (const child of [...children].reverse()) await stopChild(child, child.name === 'worker' ? 'SIGINT' : 'SIGTERM');
  await closeSandbox();
  await temporal?.close().catch((error: unknown) => console.error('dev-stack: error stopping Temporal', error));
  await openBao?.revokeToken().catch((error: unknown) => console.error('dev-stack: error revoking the OpenBao token', error));
  await openBao?.server.stop().catch((error: unknown) => console.error('dev-stack: error stopping OpenBao', error));
  if (started) console.log('dev-stack: stopped');
}

// Last resort if we exit without shutdown() (an uncaught error): no orphaned server or worker.
process.on('exit', () => {
  for (const { process: child } of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});
process.on('SIGINT', () => void shutdown(0));
process.on('SIGTERM', () => void shutdown(0));

// Our own parent (npm, a shell, tsx) killed leaves us running, reparented: the stack stops then too,
// rather than serve on unseen. (Our children end with us however we end: parent-lifetime.ts.)
const parentPid = process.ppid;
setInterval(() => {
  if (process.ppid === parentPid || stopping) return;
  console.error(`dev-stack: its parent process (${parentPid}) has ended; stopping everything`);
  void shutdown(1);
}, 1_000).unref();

// ---- start ------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const stack = loadDevStackConfig();
  const { ports, host, sandboxUrl } = stack;
  await assertPortFree(host, ports.temporal, 'Temporal gRPC', 'TEMPORAL_PORT');
  await assertPortFree(host, ports.ui, 'Temporal Web UI', 'TEMPORAL_UI_PORT');
  await assertPortFree(host, ports.sandbox, 'sandbox', 'SANDBOX_PORT');
  if (ports.workerMetrics) await assertPortFree(host, ports.workerMetrics, 'worker metrics', 'WORKER_METRICS_PORT');
  await assertPortFree(host, ports.console, 'operator console', 'CONSOLE_PORT');

  mkdirSync(TEMPORAL_CACHE_DIR, { recursive: true });
  // One file per server release: a release's schema may differ from the one that wrote an older file.
  const dbFile = join(TEMPORAL_CACHE_DIR, `dev-stack-v${TEMPORAL_SERVER_VERSION}.sqlite`);
  // Beside the history and one with it: its connections name the sandbox's RequestIds and LoginIds,
  // so a stop and start keeps both, and a new release's fresh history starts with a fresh sandbox.
  const sandboxStateFile = join(TEMPORAL_CACHE_DIR, `dev-stack-v${TEMPORAL_SERVER_VERSION}-sandbox.json`);
  const temporalLog = join(TEMPORAL_CACHE_DIR, 'dev-stack-temporal.log');
  const address = `${host}:${ports.temporal}`;
  // The whole environment goes to the children (the encryption settings included).
  const appEnv: NodeJS.ProcessEnv = {
    // One worker process with both pools (unless the shell says otherwise): book refreshes, their
    // logins and connections on the unattended pool's queue, their workflow threads at the lowest CPU
    // priority, so a night's workflow tasks neither queue ahead of a live answer's on the worker nor
    // take the cores it needs (docs/fleet.md#both-pools-in-one-process).
    UNATTENDED_POOL: 'separate',
    // Threads are told apart through /proc: elsewhere the setting would only warn at every start.
    ...(process.platform === 'linux' ? { WORKER_UNATTENDED_NICE: '19' } : {}),
    ...process.env,
    // Its one worker serves every queue: a shell's WORKER_POOL=service or unattended would strand the other's work.
    WORKER_POOL: 'all',
    TEMPORAL_ADDRESS: address,
    // The stack is local: a developer's own temporal.toml profile (their cluster's namespace, API key
    // or certificates) must not reach its server. An empty file has no profiles.
    TEMPORAL_CONFIG_FILE: devNull,
    TEMPORAL_PROFILE: '',
    AGGREGATOR_BASE_URL: sandboxUrl,
    WORKER_METRICS_PORT: String(ports.workerMetrics),
    // The only build on this machine: new connections start on it even when the persisted history
    // made an older build current (connections pinned to that one wait for its workers).
    WORKER_BECOME_CURRENT: stack.workerBecomeCurrent,
  };
  if (stack.keyProvider === 'openbao') {
    const openedAt = Date.now();
    openBao = await startDevOpenBao(TEMPORAL_CACHE_DIR);
    Object.assign(appEnv, openBao.env);
    listLocalKeyForDecryption(appEnv);
    console.log(`dev-stack: OpenBao ready at ${openBao.server.address} in ${Date.now() - openedAt} ms`);
  }
  // What the children will read, parsed here too: a bad value stops the stack before they start, and
  // the local payload key is created once, here, before the children race to read it.
  const app = loadClientConfig(appEnv);
  const pipelineEntry = prepareDevPipelineEntry(TEMPORAL_CACHE_DIR, app.customerId, appEnv);
  await assertPortFree(host, pipelineEntry.port, 'pipeline entry', 'PIPELINE_ENTRY_PORT');
  Object.assign(appEnv, pipelineEntry.sharedEnv);
  const generatedToken = stack.consoleToken === undefined;
  const consoleToken = stack.consoleToken ?? randomBytes(18).toString('base64url');
  // The Web UI's browser calls the codec with the console's cookie (includeCredentials): no token in its settings.
  const codecUrl = `http://${host}:${ports.console}/codec`;

  const startedAt = Date.now();
  temporal = await DevServer.create({
    dbFile,
    port: ports.temporal,
    ui: { port: ports.ui, codecEndpoint: app.encryption ? codecUrl : undefined },
    logPath: temporalLog,
    logLevel: 'error',
    namespace: app.temporal.namespace,
    onUnexpectedExit: (how) => {
      console.error(`dev-stack: the Temporal server exited on its own (${how}); see ${temporalLog}; stopping everything`);
      void shutdown(1);
    },
  });
  await temporal.start();
  console.log(`dev-stack: Temporal ${TEMPORAL_SERVER_VERSION} ready in ${Date.now() - startedAt} ms`);

  // The `connections` Nexus service's demo caller namespace and endpoint (docs/nexus.md).
  const nexusDemo = await prepareDemoNexusCaller({
    address,
    productNamespace: app.temporal.namespace,
    taskQueue: app.temporal.taskQueue,
    customerId: app.customerId,
    cacheDir: TEMPORAL_CACHE_DIR,
    encrypted: app.encryption !== undefined,
    env: appEnv,
  });
  Object.assign(appEnv, nexusDemo.env);

  sandbox = await createSandbox({ port: ports.sandbox, host: host, stateFile: sandboxStateFile });
  // The worker bundles the workflow code before it polls (seconds): until then a connection started
  // waits for it. Say when that wait is over.
  let workerPolling = false;
  startNodeChild('worker', 'src/worker.ts', appEnv, (line) => {
    if (workerPolling || !line.includes('"worker started"')) return;
    workerPolling = true;
    console.log(
      `dev-stack: the worker polls task queue ${app.temporal.taskQueue} (${process.uptime().toFixed(1)} s after npm start): connections start at once from now on`,
    );
  });
  startNodeChild('console', 'src/console/server.ts', {
    ...appEnv,
    CONSOLE_PORT: String(ports.console),
    CONSOLE_TOKEN: consoleToken,
    // The Web UI of this stack may call the codec endpoint.
    CONSOLE_CODEC_CORS_ORIGINS: (stack.consoleCodecCorsOrigins ?? [`http://${host}:${ports.ui}`, `http://localhost:${ports.ui}`]).join(','),
  });

  startNodeChild('pipeline', 'src/pipeline-entry/server.ts', { ...appEnv, ...pipelineEntry.entryEnv });

  const lines = [
    '',
    `dev-stack is up (Ctrl-C stops everything; workflow history persists in ${dbFile})`,
    `  Temporal Web UI   http://${host}:${ports.ui}`,
    `  Temporal gRPC     ${address}  (server ${TEMPORAL_SERVER_VERSION}, namespace ${app.temporal.namespace}; log ${temporalLog})`,
    `  Sandbox           ${sandbox.url}/v3/${app.customerId}/  (state ${sandboxStateFile})`,
    `  Scenarios         ${sandbox.url}/sandbox/scenarios`,
    `  Worker            src/worker.ts, task queue ${app.temporal.taskQueue}` +
      (app.pools.unattended === 'separate' ? ` (book refreshes on ${app.pools.unattendedTaskQueue}, in the same process)` : '') +
      (ports.workerMetrics ? `, metrics http://127.0.0.1:${ports.workerMetrics}/metrics` : '') +
      (workerPolling
        ? ''
        : '\n                    starting: it bundles the workflow code first; connections started before it polls wait for it (a line below says when)'),
    nexusDemo.line,
    `  Operator console  http://${host}:${ports.console}/?token=${consoleToken}` +
      (generatedToken ? '  (token generated for this run; set CONSOLE_TOKEN to choose one)' : ''),
    pipelineEntry.line,
    app.encryption
      ? `  Payloads          encrypted (key id ${app.encryption.keyId}); the Web UI decodes them through ${codecUrl}\n` +
        "                    with the console's cookie: open the console link above once in the same browser"
      : '  Payloads          stored in clear text (PAYLOAD_ENCRYPTION=off)',
    ...(openBao
      ? [
          `  OpenBao           ${openBao.server.address}  (transit key ${openBao.env.PAYLOAD_VAULT_TRANSIT_KEY}; state ${openBao.dir}; log ${openBao.server.logPath}; audit log ${openBao.server.auditLog})`,
          `                    unseal key and root token in ${openBao.secretsFile} (0600, a dev machine only); for the CLI: set -a; . ${openBao.envFile}; set +a`,
        ]
      : []),
    '',
  ];
  console.log(lines.join('\n'));
}

main().catch(async (error: unknown) => {
  console.error(`dev-stack: ${error instanceof Error ? error.message : String(error)}`);
  await shutdown(1);
});
