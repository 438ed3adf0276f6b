/**
 * The worker processes a chaos run starts, kills and restarts: a pool of `node --import tsx
 * src/worker.ts`, each SIGKILLed on demand and replaced at once. Every process writes to its own log
 * file in the run directory; every start, kill and unexpected exit goes on the timeline. (The dev
 * server on a SQLite file, restartable on the same file and ports, is scripts/lib/dev-server.ts.)
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { exitOf, hasExited } from '../lib/child-exit.js';
import { PROJECT_ROOT } from '../lib/temporal-binaries.js';
import { seconds, type Timeline } from './timeline.js';

const WORKER_READY_TIMEOUT_MS = 90_000;
const WORKER_STOP_GRACE_MS = 10_000;
/** A worker that died before it started (e.g. Temporal down for the restart) is started again after this. */
const WORKER_RESPAWN_DELAY_MS = 1_000;
const WORKER_ENTRY = fileURLToPath(new URL('../../src/worker.ts', import.meta.url));

export class ProcessError extends Error {
  override readonly name = 'ProcessError';
}

/** Every child a run started, so an unexpected end of the run still kills them (see killAllChildren). */
const children = new Set<ChildProcess>();

export function track(child: ChildProcess): ChildProcess {
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

/** Last resort (process exit, a signal): no dev server or worker outlives the run. */
export function killAllChildren(): void {
  for (const child of children) if (!hasExited(child)) child.kill('SIGKILL');
}

// ---- workers ----------------------------------------------------------------------------------

export interface WorkerPoolOptions {
  readonly size: number;
  /** Environment of every worker (Temporal address, task queue, bundle, ...), without its base URL. */
  readonly env: NodeJS.ProcessEnv;
  /** Variables of the n-th worker started (1-based, replacements counted), beyond `env`: e.g. which pool it serves. */
  readonly envOf?: (ordinal: number) => NodeJS.ProcessEnv;
  /** The aggregation service base URL a worker of this name uses (the proxy tells workers apart by it). */
  readonly baseUrlFor: (name: string) => string;
  readonly logDir: string;
  readonly timeline: Timeline;
}

interface WorkerProcess {
  readonly name: string;
  readonly child: ChildProcess;
  readonly startedAt: number;
  ready: boolean;
  /** Set when we kill or stop it: its exit is then expected. */
  ending: boolean;
  readonly readyPromise: Promise<void>;
}

export interface KillRecord {
  readonly name: string;
  readonly pid: number | undefined;
  readonly replacement: string;
  readonly replacementReadyMs: number;
}

export interface TerminateRecord {
  readonly name: string;
  readonly pid: number | undefined;
  /** "code 0", "code 1", "SIGKILL", ... */
  readonly exit: string;
  /** It did not exit within the grace period and was SIGKILLed. */
  readonly forced: boolean;
  readonly drainMs: number;
  readonly replacement: string;
}

export class WorkerPool {
  private readonly workers = new Map<string, WorkerProcess>();
  private counter = 0;
  private closed = false;
  /** Polling workers that exited without being asked to (a worker crashing on its own is a finding of the run). */
  unexpectedExits = 0;
  /** Workers that exited before they polled (e.g. started while the server was down for its restart). */
  failedStarts = 0;

  constructor(private readonly options: WorkerPoolOptions) {}

  /** Starts the pool and resolves once every worker polls its task queue. */
  async start(): Promise<void> {
    await Promise.all(Array.from({ length: this.options.size }, () => this.spawnWorker().readyPromise));
  }

  /** Names of workers polling now. */
  readyNames(): string[] {
    return [...this.workers.values()].filter((worker) => worker.ready && !worker.ending).map((worker) => worker.name);
  }

  private spawnWorker(): WorkerProcess {
    this.counter += 1;
    const name = `w${this.counter}`;
    const logPath = join(this.options.logDir, `worker-${name}.log`);
    const log = createWriteStream(logPath, { flags: 'a' });
    const child = track(
      spawn(process.execPath, ['--import', 'tsx', WORKER_ENTRY], {
        cwd: PROJECT_ROOT,
        env: { ...this.options.env, ...this.options.envOf?.(this.counter), AGGREGATOR_BASE_URL: this.options.baseUrlFor(name) },
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    );
    child.stdout?.pipe(log, { end: false });
    child.stderr?.pipe(log, { end: false });
    const startedAt = Date.now();
    let seen = '';
    const readyPromise = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(new ProcessError(`worker ${name} did not start within ${WORKER_READY_TIMEOUT_MS} ms; see ${logPath}`));
        child.kill('SIGKILL');
      }, WORKER_READY_TIMEOUT_MS);
      child.stdout?.on('data', (chunk: Buffer) => {
        if (worker.ready) return;
        // Only the tail matters: the marker may straddle two chunks.
        seen = (seen + chunk.toString('utf8')).slice(-4_096);
        if (seen.includes('"worker started"')) {
          worker.ready = true;
          clearTimeout(timer);
          resolve();
        }
      });
      void exitOf(child).then((how) => {
        clearTimeout(timer);
        log.end();
        this.workers.delete(name);
        if (!worker.ready) reject(new ProcessError(`worker ${name} exited before it started (${how}); see ${logPath}`));
        if (worker.ending || this.closed) return;
        // Nobody asked it to stop: note it, and keep the pool at its size.
        if (worker.ready) this.unexpectedExits += 1;
        else this.failedStarts += 1;
        this.options.timeline.mark(`worker ${name} (pid ${child.pid}) exited on its own (${how})${worker.ready ? '' : ' before it started'}; replacing it`);
        void delay(WORKER_RESPAWN_DELAY_MS).then(() => {
          if (!this.closed) this.spawnWorker().readyPromise.catch(() => undefined);
        });
      });
    });
    const worker: WorkerProcess = { name, child, startedAt, ready: false, ending: false, readyPromise };
    this.workers.set(name, worker);
    // A worker that never starts is reported through the timeline (its exit); callers may not await it.
    readyPromise.catch(() => undefined);
    return worker;
  }

  /** SIGKILLs one worker, starts its replacement and resolves once the replacement polls. */
  async kill(name: string, why: string): Promise<KillRecord> {
    const { replacementReady, ...record } = await this.killAndReplace(name, why);
    return { ...record, replacementReadyMs: await replacementReady };
  }

  /**
   * SIGKILLs one worker and starts its replacement; resolves once the replacement is started, with
   * `replacementReady` resolving (to the milliseconds it took) once it polls. For a schedule whose
   * next step must not wait for a worker process to start (seconds on a loaded machine).
   */
  async killAndReplace(name: string, why: string): Promise<Omit<KillRecord, 'replacementReadyMs'> & { readonly replacementReady: Promise<number> }> {
    const worker = this.workers.get(name);
    if (!worker) throw new ProcessError(`no worker ${name} to kill`);
    worker.ending = true;
    const exited = exitOf(worker.child);
    worker.child.kill('SIGKILL');
    await exited;
    const replacement = this.spawnWorker();
    this.options.timeline.mark(`SIGKILL worker ${name} (pid ${worker.child.pid}, ${why}); replacement ${replacement.name} starting`);
    const startedAt = Date.now();
    const replacementReady = this.awaitReadyOrReplaced(replacement).then(() => {
      const replacementReadyMs = Date.now() - startedAt;
      this.options.timeline.mark(
        replacement.ready
          ? `worker ${replacement.name} polling (started in ${seconds(replacementReadyMs)})`
          : `${this.options.size} worker(s) polling again (${this.readyNames().join(', ')}) ${seconds(replacementReadyMs)} after the kill`,
      );
      return replacementReadyMs;
    });
    return { name, pid: worker.child.pid, replacement: replacement.name, replacementReady };
  }

  /** A replacement that dies before it starts is itself replaced: wait until the pool is whole again. */
  private async awaitReadyOrReplaced(worker: WorkerProcess): Promise<void> {
    try {
      await worker.readyPromise;
    } catch {
      while (!this.closed && this.readyNames().length < this.options.size) await delay(200);
    }
  }

  /**
   * SIGTERMs one worker (the SDK drains it: in-flight tasks finish), waits for its exit (SIGKILL
   * after `graceMs`), then starts its replacement and resolves once that one polls.
   */
  async terminate(name: string, graceMs: number): Promise<TerminateRecord> {
    const { replacementReady, ...record } = await this.terminateAndReplace(name, graceMs);
    await replacementReady;
    return record;
  }

  /** `terminate`, resolving once the worker exited and its replacement started; `replacementReady` resolves once that one polls. */
  async terminateAndReplace(name: string, graceMs: number): Promise<TerminateRecord & { readonly replacementReady: Promise<void> }> {
    const worker = this.workers.get(name);
    if (!worker) throw new ProcessError(`no worker ${name} to stop`);
    worker.ending = true;
    const startedAt = Date.now();
    let forced = false;
    const exited = exitOf(worker.child);
    worker.child.kill('SIGTERM');
    this.options.timeline.mark(`SIGTERM worker ${name} (pid ${worker.child.pid}): draining`);
    const timer = setTimeout(() => {
      forced = true;
      worker.child.kill('SIGKILL');
    }, graceMs);
    const how = await exited;
    clearTimeout(timer);
    const drainMs = Date.now() - startedAt;
    const replacement = this.spawnWorker();
    this.options.timeline.mark(
      `worker ${name} exited (${how}) ${seconds(drainMs)} after SIGTERM${forced ? ', SIGKILLed after the grace period' : ''}; replacement ${replacement.name} starting`,
    );
    const replacementReady = this.awaitReadyOrReplaced(replacement);
    return { name, pid: worker.child.pid, exit: how, forced, drainMs, replacement: replacement.name, replacementReady };
  }

  /** SIGTERM (the SDK drains), SIGKILL after a grace period. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(
      [...this.workers.values()].map(async (worker) => {
        worker.ending = true;
        const exited = exitOf(worker.child);
        worker.child.kill('SIGTERM');
        const timer = setTimeout(() => worker.child.kill('SIGKILL'), WORKER_STOP_GRACE_MS);
        await exited;
        clearTimeout(timer);
      }),
    );
  }
}
