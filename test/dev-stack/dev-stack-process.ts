/**
 * `npm start` (scripts/dev-stack.ts) as the dev-stack tests run it: on ports of its own and a
 * temporary cache directory (its database, log, payload key and OpenBao state), never the
 * developer's own .temporal; started as our child, or under a shell of ours that waits for it as npm
 * runs it, and up once it says its worker polls. `cleanup()` kills what is left and removes the directory.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../../scripts/lib/free-port.js';
import { temporalServerPath, temporalUiServerPath } from '../../scripts/lib/temporal-binaries.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const HOST = '127.0.0.1';
const UP_TIMEOUT_MS = 120_000;
/** Where scripts/dev-stack.ts writes the server's log, in TEMPORAL_CACHE_DIR. */
const SERVER_LOG = 'dev-stack-temporal.log';

export interface RunningStack {
  readonly child: ChildProcess;
  readonly pid: number;
  /** When it printed "dev-stack is up". */
  readonly upAt: number;
  /** When it said its worker polls (the worker bundles the workflow code first: after "up"). */
  readonly workerAt: number;
  output(): string;
  /** SIGINT, as Ctrl-C: resolves once it has exited. */
  stop(): Promise<void>;
}

export class DevStackRunner {
  readonly dir: string;
  private readonly started = new Set<ChildProcess>();
  private variables: NodeJS.ProcessEnv | undefined;
  private address: string | undefined;

  constructor(prefix: string) {
    this.dir = mkdtempSync(join(tmpdir(), prefix));
  }

  /** The stack's environment (after `prepare`). */
  get env(): NodeJS.ProcessEnv {
    return this.variables ?? assert.fail('prepare() first');
  }

  /**
   * The last lines of the Temporal server's log (the stack writes it in our directory, which
   * cleanup() removes): what a failure message needs when the server itself exited.
   */
  serverLogTail(lines = 40): string {
    const file = join(this.dir, SERVER_LOG);
    if (!existsSync(file)) return `(no ${SERVER_LOG})`;
    return `${SERVER_LOG}, its last ${lines} lines:\n${readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n')}`;
  }

  get temporalAddress(): string {
    return this.address ?? assert.fail('prepare() first');
  }

  /** Free ports, and the variables every start uses (`more` on top). */
  async prepare(more: Readonly<Record<string, string>> = {}): Promise<void> {
    const [temporal, ui, sandbox, consolePort, entryPort] = [
      await freePort(HOST),
      await freePort(HOST),
      await freePort(HOST),
      await freePort(HOST),
      await freePort(HOST),
    ];
    this.address = `${HOST}:${temporal}`;
    this.variables = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      // The test run's temporary directory (run-tests gives each file one): what a stack killed with
      // SIGKILL leaves there (its dev server's directory) goes with the run.
      TMPDIR: process.env.TMPDIR,
      // The binaries from where they are; the database, the log and the payload key in our directory.
      TEMPORAL_SERVER_PATH: temporalServerPath(),
      TEMPORAL_UI_SERVER_PATH: temporalUiServerPath(),
      TEMPORAL_CACHE_DIR: this.dir,
      PAYLOAD_ENCRYPTION_KEY_FILE: join(this.dir, 'payload-encryption.key'),
      TEMPORAL_PORT: String(temporal),
      TEMPORAL_UI_PORT: String(ui),
      SANDBOX_PORT: String(sandbox),
      CONSOLE_PORT: String(consolePort),
      PIPELINE_ENTRY_PORT: String(entryPort),
      WORKER_METRICS_PORT: '0',
      ...more,
    };
  }

  /** The stack, as our child; or under a shell of ours that waits for it (`underShell`), as npm runs it. */
  async start(underShell = false): Promise<RunningStack> {
    const command = [process.execPath, '--import', 'tsx', 'scripts/dev-stack.ts'];
    const options = { cwd: ROOT, env: this.env, stdio: ['ignore', 'pipe', 'pipe'] as ('ignore' | 'pipe')[] };
    const child = underShell ? spawn('sh', ['-c', '"$@" & wait', 'sh', ...command], options) : spawn(command[0]!, command.slice(1), options);
    this.started.add(child);
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.once('exit', () => this.started.delete(child));
    let output = '';
    let upAt: number | undefined;
    const workerAt = await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`the stack and its worker were not up within ${UP_TIMEOUT_MS} ms:\n${output}\n${this.serverLogTail()}`)),
        UP_TIMEOUT_MS,
      );
      const onData = (chunk: Buffer) => {
        output += chunk.toString();
        if (upAt === undefined && output.includes('dev-stack is up')) upAt = Date.now();
        if (output.includes('dev-stack: the worker polls')) {
          clearTimeout(timer);
          resolve(Date.now());
        }
      };
      child.stdout?.on('data', onData);
      child.stderr?.on('data', onData);
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`the stack exited during start-up (${signal ?? `code ${code}`}):\n${output}\n${this.serverLogTail()}`));
      });
    });
    assert.ok(child.pid);
    return {
      child,
      pid: child.pid,
      upAt: upAt ?? workerAt,
      workerAt,
      output: () => output,
      stop: async () => {
        child.kill('SIGINT');
        await exited;
      },
    };
  }

  cleanup(): void {
    for (const child of this.started) child.kill('SIGKILL');
    rmSync(this.dir, { recursive: true, force: true });
  }
}
