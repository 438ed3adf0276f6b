/**
 * A throwaway PostgreSQL cluster for `npm run prod:check`: Debian's server binaries
 * (/usr/lib/postgresql/<major>/bin, `apt-get install postgresql`), initdb into a directory of the
 * run, started with pg_ctl on a free loopback port with its unix socket in that directory. Run as
 * the `postgres` user when we are root (PostgreSQL refuses to run as root). Trust authentication:
 * it listens on 127.0.0.1 only and lives as long as the run.
 */
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { loadToolchainConfig } from '../lib/toolchain-settings.js';
import { freePort } from '../lib/free-port.js';

export class PostgresError extends Error {
  override readonly name = 'PostgresError';
}

const DEBIAN_ROOT = '/usr/lib/postgresql';
export const POSTGRES_INSTALL_HINT =
  'PostgreSQL server binaries not found: install them with `apt-get install -y postgresql` (Debian), or set PROD_CHECK_PG_BINDIR to a directory holding initdb and pg_ctl';

/** The newest Debian PostgreSQL bin directory holding initdb and pg_ctl, or PROD_CHECK_PG_BINDIR. */
export function postgresBinDir(explicit: string | undefined = loadToolchainConfig().paths.postgresBinDir): string | undefined {
  const usable = (dir: string) => existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'pg_ctl'));
  if (explicit) return usable(explicit) ? explicit : undefined;
  if (!existsSync(DEBIAN_ROOT)) return undefined;
  const majors = readdirSync(DEBIAN_ROOT)
    .filter((name) => /^\d+$/.test(name))
    .sort((a, b) => Number(b) - Number(a));
  for (const major of majors) {
    const dir = join(DEBIAN_ROOT, major, 'bin');
    if (usable(dir)) return dir;
  }
  return undefined;
}

interface RunAs {
  readonly command: string;
  readonly prefix: string[];
  readonly uid?: number;
  readonly gid?: number;
}

function postgresUser(): RunAs {
  if (userInfo().uid !== 0) return { command: '', prefix: [] };
  const ids = spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' });
  const gids = spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' });
  if (ids.status !== 0 || gids.status !== 0)
    throw new PostgresError('running as root, and there is no `postgres` user to run PostgreSQL as (apt-get install postgresql creates it)');
  return { command: 'runuser', prefix: ['-u', 'postgres', '--'], uid: Number(ids.stdout.trim()), gid: Number(gids.stdout.trim()) };
}

function run(runAs: RunAs, binary: string, args: readonly string[], cwd: string): Promise<{ code: number | null; output: string }> {
  const [command, argv] = runAs.command ? [runAs.command, [...runAs.prefix, binary, ...args]] : [binary, [...args]];
  return new Promise((resolve, reject) => {
    // stdio to pipes only for tools that exit; pg_ctl's server keeps no pipe of ours (it logs to a file).
    const child = spawn(command, argv, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.once('error', reject);
    child.once('exit', (code) => resolve({ code, output }));
  });
}

export class PostgresCluster {
  private running = false;
  private readonly runAs: RunAs;
  private readonly exitHook = () => this.stopSync();

  private constructor(
    private readonly binDir: string,
    /** The cluster's directory: data/, the unix socket and postgres.log. */
    readonly dir: string,
    readonly port: number,
  ) {
    this.runAs = postgresUser();
  }

  get host(): string {
    return '127.0.0.1';
  }

  get logPath(): string {
    return join(this.dir, 'postgres.log');
  }

  /** initdb in `<parent>/postgres` (owned by the postgres user when we are root). */
  static async create(parent: string): Promise<PostgresCluster> {
    const binDir = postgresBinDir();
    if (!binDir) throw new PostgresError(POSTGRES_INSTALL_HINT);
    const dir = join(parent, 'postgres');
    mkdirSync(dir, { recursive: true });
    const cluster = new PostgresCluster(binDir, dir, await freePort());
    if (cluster.runAs.uid !== undefined && cluster.runAs.gid !== undefined) {
      // The postgres user must reach its directory through the run directory (mkdtemp makes it 0700).
      chmodSync(parent, 0o711);
      chownSync(dir, cluster.runAs.uid, cluster.runAs.gid);
    }
    const init = await run(
      cluster.runAs,
      join(binDir, 'initdb'),
      ['-D', join(dir, 'data'), '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--locale=C', '--no-sync'],
      dir,
    );
    if (init.code !== 0) throw new PostgresError(`initdb failed (exit ${init.code}):\n${init.output}`);
    return cluster;
  }

  /** pg_ctl start -w: loopback only, the socket in the cluster's directory. */
  async start(): Promise<void> {
    const options = [
      `-p ${this.port}`,
      `-k ${this.dir}`,
      "-c listen_addresses='127.0.0.1'",
      // Four Temporal services, each with its own pools, plus the schema tool.
      '-c max_connections=300',
    ].join(' ');
    process.once('exit', this.exitHook);
    const started = await run(
      this.runAs,
      join(this.binDir, 'pg_ctl'),
      ['-D', join(this.dir, 'data'), '-l', this.logPath, '-o', options, '-w', '-t', '60', 'start'],
      this.dir,
    );
    if (started.code !== 0) {
      const log = existsSync(this.logPath) ? readFileSync(this.logPath, 'utf8').slice(-2_000) : '';
      throw new PostgresError(`pg_ctl start failed (exit ${started.code}):\n${started.output}\n${log}`);
    }
    this.running = true;
  }

  async stop(): Promise<void> {
    if (!this.running) return;
    const stopped = await run(this.runAs, join(this.binDir, 'pg_ctl'), ['-D', join(this.dir, 'data'), '-m', 'fast', '-w', 'stop'], this.dir);
    this.running = false;
    process.off('exit', this.exitHook);
    if (stopped.code !== 0) throw new PostgresError(`pg_ctl stop failed (exit ${stopped.code}):\n${stopped.output}`);
  }

  /** Runs SQL on one of the cluster's databases with psql (a test removes a server's rows with it); its output. */
  async sql(database: string, statement: string): Promise<string> {
    const result = await run(
      this.runAs,
      join(this.binDir, 'psql'),
      ['-h', this.host, '-p', String(this.port), '-U', 'postgres', '-d', database, '-v', 'ON_ERROR_STOP=1', '-c', statement],
      this.dir,
    );
    if (result.code !== 0) throw new PostgresError(`psql on ${database} failed (exit ${result.code}):\n${result.output}`);
    return result.output;
  }

  /** Last resort on process exit: the postmaster is not our child, nothing else would stop it. */
  stopSync(): void {
    if (!this.running) return;
    this.running = false;
    const [command, argv] = this.runAs.command
      ? [this.runAs.command, [...this.runAs.prefix, join(this.binDir, 'pg_ctl'), '-D', join(this.dir, 'data'), '-m', 'immediate', 'stop']]
      : [join(this.binDir, 'pg_ctl'), ['-D', join(this.dir, 'data'), '-m', 'immediate', 'stop']];
    spawnSync(command, argv, { stdio: 'ignore', cwd: '/' });
  }
}
