/**
 * The production Temporal server (go.temporal.io/server, not the CLI's dev server) on PostgreSQL:
 * - the binaries `temporal-server` and `temporal-sql-tool` of one release, built by
 *   `bash scripts/provision-temporal.sh server` into $TEMPORAL_CACHE_DIR/temporal-server/v<release>/;
 *   the schema files from the module source in the Go module cache;
 * - the temporal and temporal_visibility databases created, set up (setup-schema -v 0.0) and migrated
 *   (update-schema -d <versioned dir>) with the sql tool;
 * - a config YAML (sql plugin postgres12, one node running frontend, history, matching and worker on
 *   loopback ports) and a dynamic config file;
 * - the `default` namespace registered and our custom search attributes added through the operator
 *   service, then proven usable by starting (and terminating) a workflow that sets all of them;
 * - with `tls` (--tls): the frontend serves TLS and requires a client certificate signed by the run's
 *   CA (mutual TLS); the server's own system worker presents one too. Internode traffic stays plain
 *   (one process, loopback). This module's own connections go through the product's
 *   temporalConnectionOptions with the client certificate, as a worker's would.
 * Restartable on the same database and ports, like the chaos run's dev server.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, readFileSync, statSync, writeFileSync, type WriteStream } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { Connection } from '@temporalio/client';
import { loadToolchainConfig } from '../lib/toolchain-settings.js';
import { temporalConnectionOptions, type TemporalConnectionOptions } from '../../src/temporal/connection.js';
import { freePort, freePortIn } from '../lib/free-port.js';
import { seconds, type Timeline } from '../chaos/timeline.js';
import { isExecutableFile, TEMPORAL_CACHE_DIR } from '../lib/temporal-binaries.js';
import { TEMPORAL_SERVER_VERSION } from '../lib/temporal-versions.js';
import { prepareNamespace } from '../lib/namespace-setup.js';
import { oneNodeServicesYaml } from '../lib/server-config.js';
import { dynamicConfigYamlEntries, serverDynamicConfigFor } from '../lib/server-dynamic-config.js';
import type { PostgresCluster } from './postgres.js';
import { TLS_SERVER_NAME, type ProdCheckPki } from './tls.js';

const HOST = '127.0.0.1';
const READY_TIMEOUT_MS = 120_000;
const STOP_GRACE_MS = 15_000;
export const PROVISION_HINT =
  'run `bash scripts/provision-temporal.sh server` (builds go.temporal.io/server and its sql tool from the Go module proxy, several minutes once)';

export class TemporalServerError extends Error {
  override readonly name = 'TemporalServerError';
}

/**
 * A free port below 32768: the server records membership ports in cluster_membership.rpc_port, a
 * PostgreSQL smallint, so a port above 32767 stops it at start-up. freePortIn never hands out a port
 * twice in this process, so these and freePort's picks stay apart.
 */
async function freeMembershipPort(): Promise<number> {
  try {
    return await freePortIn({ from: 20_000, to: 31_999 }, HOST);
  } catch (error) {
    throw new TemporalServerError(`no free port below 32768 for the membership ring: ${error instanceof Error ? error.message : String(error)}`);
  }
}

export interface ServerBinaries {
  readonly version: string;
  readonly server: string;
  readonly sqlTool: string;
  /** .../schema/postgresql/v12 of the module source. */
  readonly schemaDir: string;
  /** The server's admin tool, beside the production release's server (none for the releases of an upgrade path). */
  readonly tdbg?: string;
}

function goModCache(explicit: string | undefined): string | undefined {
  if (explicit) return explicit;
  const go = spawnSync('go', ['env', 'GOMODCACHE'], { encoding: 'utf8' });
  if (go.status === 0 && go.stdout.trim()) return go.stdout.trim();
  return join(homedir(), 'go', 'pkg', 'mod');
}

/**
 * One release's binaries and schema; what is missing, as sentences (empty when everything is there).
 * TEMPORAL_SERVER_PATH, TEMPORAL_SQL_TOOL_PATH and TEMPORAL_SCHEMA_DIR point the production release elsewhere.
 */
export function findServerBinaries(version: string = TEMPORAL_SERVER_VERSION): { binaries?: ServerBinaries; missing: string[] } {
  const production = version === TEMPORAL_SERVER_VERSION;
  const paths = loadToolchainConfig().paths;
  const dir = join(TEMPORAL_CACHE_DIR, 'temporal-server', `v${version}`);
  const server = (production && paths.server) || join(dir, 'temporal-server');
  const sqlTool = (production && paths.sqlTool) || join(dir, 'temporal-sql-tool');
  const modCache = goModCache(paths.goModCache);
  const schemaDir = (production && paths.schemaDir) || (modCache ? join(modCache, `go.temporal.io/server@v${version}`, 'schema', 'postgresql', 'v12') : '');
  const missing: string[] = [];
  if (!isExecutableFile(server)) missing.push(`no Temporal server ${version} at ${server}`);
  if (!isExecutableFile(sqlTool)) missing.push(`no temporal-sql-tool ${version} at ${sqlTool}`);
  if (!schemaDir || !existsSync(join(schemaDir, 'temporal', 'versioned'))) missing.push(`no PostgreSQL schema at ${schemaDir || '(no Go module cache)'}`);
  const tdbg = production ? join(dirname(server), 'tdbg') : undefined;
  if (tdbg && !isExecutableFile(tdbg)) missing.push(`no tdbg ${version} beside the server, at ${tdbg}`);
  return missing.length > 0 ? { missing } : { binaries: { version, server, sqlTool, schemaDir, ...(tdbg ? { tdbg } : {}) }, missing };
}

interface Ports {
  readonly frontend: number;
  readonly frontendHttp: number;
  readonly frontendMembership: number;
  readonly history: number;
  readonly historyMembership: number;
  readonly matching: number;
  readonly matchingMembership: number;
  readonly worker: number;
  readonly workerMembership: number;
  readonly metrics: number;
  readonly internalFrontend: number;
  readonly internalFrontendHttp: number;
  readonly internalFrontendMembership: number;
}

/** `global.tls`: mTLS on the frontend, and the system worker's client certificate for it. */
function tlsYaml(pki: ProdCheckPki): string {
  return `
  tls:
    frontend:
      server:
        certFile: "${pki.server.cert}"
        keyFile: "${pki.server.key}"
        requireClientAuth: true
        clientCaFiles:
          - "${pki.caCert}"
      client:
        serverName: "${TLS_SERVER_NAME}"
        rootCaFiles:
          - "${pki.caCert}"
    systemWorker:
      certFile: "${pki.systemWorker.cert}"
      keyFile: "${pki.systemWorker.key}"
      client:
        serverName: "${TLS_SERVER_NAME}"
        rootCaFiles:
          - "${pki.caCert}"`;
}

/** Every port the server listens on: gRPC and HTTP where freePort picks, membership below 32768. */
async function pickPorts(): Promise<Ports> {
  return {
    frontend: await freePort(),
    frontendHttp: await freePort(),
    frontendMembership: await freeMembershipPort(),
    history: await freePort(),
    historyMembership: await freeMembershipPort(),
    matching: await freePort(),
    matchingMembership: await freeMembershipPort(),
    worker: await freePort(),
    workerMembership: await freeMembershipPort(),
    metrics: await freePort(),
    internalFrontend: await freePort(),
    internalFrontendHttp: await freePort(),
    internalFrontendMembership: await freeMembershipPort(),
  };
}

function connectionOptionsFor(ports: Ports, options: ProdServerOptions): Promise<TemporalConnectionOptions> {
  // This module's own calls (readiness, the namespace) carry the run's admin token when the server checks tokens.
  const metadata = options.authorization ? { metadata: { authorization: `Bearer ${options.authorization.adminToken}` } } : {};
  return temporalConnectionOptions({
    address: `${HOST}:${ports.frontend}`,
    transport: { ...(options.tls ? tlsTransport(options.tls) : { tls: false }), ...metadata },
  });
}

/** `global.authorization`: the JWT authorizer and claim mapper, keys from a JWKS address, one audience. */
function authorizationYaml(authorization: ServerAuthorization): string {
  return `
  authorization:
    jwtKeyProvider:
      keySourceURIs:
        - "${authorization.jwksUri}"
      refreshInterval: 1m
    permissionsClaimName: permissions
    audience: "${authorization.audience}"
    authorizer: default
    claimMapper: default`;
}

function configYaml(
  pg: PostgresCluster,
  ports: Ports,
  dynamicConfigPath: string,
  pki: ProdCheckPki | undefined,
  authorization: ServerAuthorization | undefined,
): string {
  const datastore = (database: string, maxConns: number) => `      sql:
        pluginName: "postgres12"
        databaseName: "${database}"
        connectAddr: "${pg.host}:${pg.port}"
        connectProtocol: "tcp"
        user: "postgres"
        password: ""
        maxConns: ${maxConns}
        maxIdleConns: ${maxConns}
        maxConnLifetime: "1h"`;
  return `# Written by scripts/prod-check for one run: Temporal on PostgreSQL, one node, loopback only.
log:
  stdout: true
  level: warn

persistence:
  defaultStore: postgres-default
  visibilityStore: postgres-visibility
  numHistoryShards: 4
  datastores:
    postgres-default:
${datastore('temporal', 20)}
    postgres-visibility:
${datastore('temporal_visibility', 10)}

global:
  membership:
    maxJoinDuration: 30s
    broadcastAddress: "${HOST}"
  metrics:
    prometheus:
      framework: "tally"
      timerType: "histogram"
      listenAddress: "${HOST}:${ports.metrics}"${pki ? tlsYaml(pki) : ''}${authorization ? authorizationYaml(authorization) : ''}

${oneNodeServicesYaml(
  HOST,
  {
    frontend: { grpc: ports.frontend, membership: ports.frontendMembership, http: ports.frontendHttp },
    history: { grpc: ports.history, membership: ports.historyMembership },
    matching: { grpc: ports.matching, membership: ports.matchingMembership },
    worker: { grpc: ports.worker, membership: ports.workerMembership },
    ...(authorization
      ? { internalFrontend: { grpc: ports.internalFrontend, membership: ports.internalFrontendMembership, http: ports.internalFrontendHttp } }
      : {}),
  },
  dynamicConfigPath,
)}`;
}

/** The dynamic config of a release (fairness only where it is safe), with the run's own additions. */
function dynamicConfigFor(release: string, extra: Readonly<Record<string, boolean | number | string>> = {}): string {
  return `# Written by scripts/prod-check for server ${release}. A new namespace and its search attributes are seen within a second.
system.namespaceCacheRefreshInterval:
  - value: 1s
frontend.enableUpdateWorkflowExecution:
  - value: true
${dynamicConfigYamlEntries({ ...serverDynamicConfigFor(release), ...extra })}`;
}

export interface ProdServerOptions {
  readonly binaries: ServerBinaries;
  readonly postgres: PostgresCluster;
  /** Config, dynamic config and the server log go here. */
  readonly dir: string;
  readonly timeline: Timeline;
  /** Mutual TLS on the frontend with this PKI (--tls); plain TCP without. */
  readonly tls?: ProdCheckPki;
  /** More dynamic config for this run (deploy-check: versions drain and their pollers expire in seconds). */
  readonly dynamicConfig?: Readonly<Record<string, boolean | number | string>>;
  /** The server checks a JWT on every call (Temporal's default authorizer and claim mapper); none: it checks nothing. */
  readonly authorization?: ServerAuthorization;
}

/** Temporal's JWT authorization: where its keys are, the audience a token must name, and a token of `temporal-system:admin` for this module's own calls. */
export interface ServerAuthorization {
  readonly jwksUri: string;
  readonly audience: string;
  readonly adminToken: string;
}

/** The product's transport settings for a client holding the run's client certificate (what a worker sets). */
function tlsTransport(pki: ProdCheckPki) {
  return { tls: true, tlsCaPath: pki.caCert, tlsServerName: TLS_SERVER_NAME, tlsCertPath: pki.client.cert, tlsKeyPath: pki.client.key };
}

export class ProdTemporalServer {
  private child: ChildProcess | undefined;
  private stopping = false;
  /** Once up, its ports are its own: a restart reuses them (workers and clients know the address). */
  private everStarted = false;
  private readonly log: WriteStream;
  private readonly root: string;
  private binaries: ServerBinaries;

  private constructor(
    private readonly options: ProdServerOptions,
    private ports: Ports,
    /** How this module connects: with the client certificate under --tls. */
    private connectionOptions: TemporalConnectionOptions,
  ) {
    this.binaries = options.binaries;
    this.root = join(options.dir, 'temporal');
    mkdirSync(join(this.root, 'config'), { recursive: true });
    this.log = createWriteStream(this.logPath, { flags: 'a' });
  }

  private get dynamicConfigPath(): string {
    return join(this.root, 'config', 'dynamicconfig.yaml');
  }

  get logPath(): string {
    return join(this.options.dir, 'temporal-server.log');
  }

  /** Picks every port: a restart reuses them (a first start whose port was taken meanwhile picks again). */
  static async create(options: ProdServerOptions): Promise<ProdTemporalServer> {
    const ports = await pickPorts();
    const server = new ProdTemporalServer(options, ports, await connectionOptionsFor(ports, options));
    writeFileSync(server.dynamicConfigPath, dynamicConfigFor(options.binaries.version, options.dynamicConfig));
    server.writeConfig();
    return server;
  }

  /** The frontend's address (its gRPC port may change only before the first start succeeds). */
  /** The running server's process id (undefined while it is not running). */
  get pid(): number | undefined {
    return this.child?.exitCode === null && this.child.signalCode === null ? this.child.pid : undefined;
  }

  get address(): string {
    return `${HOST}:${this.ports.frontend}`;
  }

  /**
   * With `authorization`, the internal frontend's address: the server's own services and its admin
   * tools (tdbg) reach it without a token, in plain TCP on loopback; it is never given to a client.
   */
  get internalAddress(): string | undefined {
    return this.options.authorization ? `${HOST}:${this.ports.internalFrontend}` : undefined;
  }

  private writeConfig(): void {
    writeFileSync(
      join(this.root, 'config', 'prod-check.yaml'),
      configYaml(this.options.postgres, this.ports, this.dynamicConfigPath, this.options.tls, this.options.authorization),
    );
  }

  /** The release running now (the first of an upgrade path until upgradeTo). */
  get version(): string {
    return this.binaries.version;
  }

  /** Creates, sets up and migrates both databases with the sql tool; the versions reached. */
  setupSchema(): string {
    return this.migrateSchema([['create-database'], ['setup-schema', '-v', '0.0']]);
  }

  /** Applies the running release's versioned migrations to both databases (after `steps`); the versions reached. */
  private migrateSchema(steps: readonly string[][]): string {
    const { sqlTool, schemaDir } = this.binaries;
    const pg = this.options.postgres;
    const reached: string[] = [];
    for (const [database, versioned] of [
      ['temporal', join(schemaDir, 'temporal', 'versioned')],
      ['temporal_visibility', join(schemaDir, 'visibility', 'versioned')],
    ] as const) {
      const base = ['--plugin', 'postgres12', '--ep', pg.host, '-p', String(pg.port), '-u', 'postgres', '--db', database];
      for (const command of [...steps, ['update-schema', '-d', versioned]]) {
        const result = spawnSync(sqlTool, [...base, ...command], { encoding: 'utf8', cwd: this.options.dir });
        this.log.write(`$ temporal-sql-tool ${[...base, ...command].join(' ')}\n${result.stdout}${result.stderr}`);
        if (result.status !== 0)
          throw new TemporalServerError(
            `temporal-sql-tool ${command[0]} on ${database} failed (exit ${result.status}):\n${(result.stdout + result.stderr).slice(-2_000)}`,
          );
      }
      const version = spawnSync('sh', ['-c', `ls "${versioned}" | sed 's/^v//' | sort -t. -k1,1n -k2,2n | tail -1`], { encoding: 'utf8' }).stdout.trim();
      reached.push(`${database} v${version}`);
    }
    return reached.join(', ');
  }

  /**
   * Starts the server; resolves once its frontend answers (the namespace may not exist yet). A port
   * picked free can be taken by another process before the server binds it (files run side by side,
   * and outgoing connections draw from the same range): a first start that fails so is tried again on
   * other ports, twice. A restart keeps its ports, which its workers and clients know.
   */
  async start(): Promise<number> {
    for (let attempt = 1; ; attempt++) {
      const logBefore = await this.logSize();
      try {
        const startMs = await this.startOnce();
        this.everStarted = true;
        return startMs;
      } catch (error) {
        const portTaken = error instanceof TemporalServerError && /address already in use/.test(await this.logSince(logBefore));
        if (!portTaken || this.everStarted || attempt === 3) throw error;
        this.ports = await pickPorts();
        this.connectionOptions = await connectionOptionsFor(this.ports, this.options);
        this.writeConfig();
        this.options.timeline.mark(
          `a port picked free was taken before the Temporal server bound it; starting it again on other ports (frontend ${this.address})`,
        );
      }
    }
  }

  /** The log's size once what was written to it has reached the file. */
  private async logSize(): Promise<number> {
    await new Promise<void>((resolve) => this.log.write('', () => resolve()));
    return existsSync(this.logPath) ? statSync(this.logPath).size : 0;
  }

  /** What the log holds after `offset`. */
  private async logSince(offset: number): Promise<string> {
    await this.logSize();
    return readFileSync(this.logPath).subarray(offset).toString('utf8');
  }

  private async startOnce(): Promise<number> {
    const startedAt = Date.now();
    // With an authorizer, the internal frontend starts too (the system worker's way in), and no-auth is not allowed.
    const start = this.options.authorization
      ? ['start', ...['frontend', 'internal-frontend', 'history', 'matching', 'worker'].flatMap((service) => ['--service', service])]
      : ['--allow-no-auth', 'start'];
    const child = spawn(this.binaries.server, ['--root', this.root, '--config', 'config', '--env', 'prod-check', ...start], {
      cwd: this.root,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    this.stopping = false;
    child.stdout?.pipe(this.log, { end: false });
    child.stderr?.pipe(this.log, { end: false });
    const exitHook = () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    };
    process.on('exit', exitHook);
    child.once('exit', (code, signal) => {
      process.off('exit', exitHook);
      if (!this.stopping && this.child === child)
        this.options.timeline.mark(`Temporal server (pid ${child.pid}) exited on its own (${signal ?? `code ${code}`}); see ${this.logPath}`);
    });
    await this.waitFor(child, async (connection) => {
      await connection.workflowService.getSystemInfo({});
      // A frontend that answers may still wait for history shards: the namespace call needs persistence.
      await connection.workflowService.listNamespaces({ pageSize: 1 });
    });
    return Date.now() - startedAt;
  }

  private async waitFor(child: ChildProcess, probe: (connection: Connection) => Promise<void>): Promise<void> {
    const deadline = Date.now() + READY_TIMEOUT_MS;
    let lastError = 'no answer yet';
    while (Date.now() < deadline) {
      if (child.exitCode !== null || child.signalCode !== null)
        throw new TemporalServerError(`the Temporal server stopped during start-up (${child.signalCode ?? `code ${child.exitCode}`}); see ${this.logPath}`);
      try {
        const connection = await Connection.connect({ ...this.connectionOptions, connectTimeout: 1_000 });
        try {
          await probe(connection);
          return;
        } finally {
          await connection.close();
        }
      } catch (error) {
        lastError = error instanceof Error ? error.message : String(error);
        await delay(250);
      }
    }
    throw new TemporalServerError(`the Temporal server did not get ready on ${this.address} within ${READY_TIMEOUT_MS} ms (${lastError}); see ${this.logPath}`);
  }

  /** Registers `namespace` with our search attributes (scripts/lib/namespace-setup.ts); lists them. */
  async registerNamespace(namespace = 'default'): Promise<string> {
    const connection = await Connection.connect(this.connectionOptions);
    try {
      return await prepareNamespace(connection, namespace, READY_TIMEOUT_MS);
    } finally {
      await connection.close();
    }
  }

  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<{ stopMs: number; forced: boolean }> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return { stopMs: 0, forced: false };
    const startedAt = Date.now();
    this.stopping = true;
    let forced = false;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill(signal);
    const timer = setTimeout(() => {
      forced = true;
      child.kill('SIGKILL');
    }, STOP_GRACE_MS);
    await exited;
    clearTimeout(timer);
    return { stopMs: Date.now() - startedAt, forced };
  }

  async restart(signal: NodeJS.Signals = 'SIGTERM'): Promise<{ stopMs: number; forced: boolean; startMs: number }> {
    const { stopMs, forced } = await this.stop(signal);
    const startMs = await this.start();
    this.options.timeline.mark(
      `Temporal server ${forced ? `SIGKILLed ${seconds(stopMs)} after ${signal}` : `stopped in ${seconds(stopMs)}`}; up again on the same databases and ports in ${seconds(startMs)}`,
    );
    return { stopMs, forced, startMs };
  }

  /**
   * A rolling upgrade of this one-node cluster to another release, as an operator does it: stop the
   * server (SIGTERM), apply the new release's schema migrations with its own sql tool, start the new
   * binary on the same databases, config and ports.
   */
  async upgradeTo(binaries: ServerBinaries): Promise<{ from: string; to: string; stopMs: number; forced: boolean; schema: string; startMs: number }> {
    const from = this.binaries.version;
    const { stopMs, forced } = await this.stop('SIGTERM');
    this.binaries = binaries;
    // The next release may turn fairness on (scripts/lib/server-dynamic-config.ts): before it starts.
    writeFileSync(this.dynamicConfigPath, dynamicConfigFor(binaries.version, this.options.dynamicConfig));
    const schema = this.migrateSchema([]);
    const startMs = await this.start();
    this.options.timeline.mark(
      `Temporal server ${from} ${forced ? `SIGKILLed ${seconds(stopMs)} after SIGTERM` : `stopped in ${seconds(stopMs)}`}; schema migrated with ${binaries.version}'s sql tool (${schema}); ` +
        `${binaries.version} up on the same databases and ports in ${seconds(startMs)}`,
    );
    return { from, to: binaries.version, stopMs, forced, schema, startMs };
  }

  async close(): Promise<void> {
    await this.stop('SIGTERM');
    await new Promise<void>((resolve) => this.log.end(() => resolve()));
  }
}
