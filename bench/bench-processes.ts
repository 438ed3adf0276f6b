/**
 * The processes a worker benchmark runs beside itself (sandbox, worker), started as a user starts
 * them, and what it reads of them from /proc. Every child is killed when the benchmark exits.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { loadBenchConfig, type BenchConfig } from '../scripts/lib/bench-settings.js';
import { settingsOrExit } from '../src/settings/load.js';
import { productWorkflowBundle } from '../scripts/lib/workflow-bundle.js';
import { startDevEnvironment, type DevEnvironment } from '../scripts/lib/dev-environment.js';
import { freePort } from '../scripts/lib/free-port.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const children: ChildProcess[] = [];
process.on('exit', () => children.forEach((child) => child.kill('SIGKILL')));

/**
 * The benchmarks' own settings (scripts/lib/bench-settings.ts: BENCH_WORKER_RUNTIME, BENCH_WORKER_NODE_ARGS,
 * BENCH_SERVER_DYNAMIC_CONFIG, SANDBOX_URL); a bad one ends the benchmark with exit 2, naming it.
 */
export function benchConfig(): BenchConfig {
  return settingsOrExit('benchmark', () => loadBenchConfig());
}

/** bench/runtimes.ts measures on the replaced runtime too: its permission reaches every child, and the loaders of this process (src/settings/load.ts). */
export function runtimeOverride(): Record<string, string> {
  return process.env.ALLOW_UNSUPPORTED_NODE ? { ALLOW_UNSUPPORTED_NODE: process.env.ALLOW_UNSUPPORTED_NODE } : {};
}

/** Children stopped on purpose (stopProcess); any other exit ends the benchmark. */
const stopping = new WeakSet<ChildProcess>();

/**
 * Spawns an entry point (path from the repository root; TypeScript through tsx) and resolves when
 * its stdout contains `ready`. A child that exits afterwards without being stopped (a worker out of
 * memory, say) ends the benchmark with its last output: figures without it would be false, and its
 * connections would never finish.
 */
export async function startProcess(
  name: string,
  entry: string,
  env: Record<string, string>,
  ready: string,
  nodeArgs: string[] = [],
  loader: 'tsx' | 'node' = 'tsx',
): Promise<ChildProcess> {
  const child = spawn(process.execPath, [...nodeArgs, ...(loader === 'tsx' ? ['--import', 'tsx'] : []), join(root, entry)], {
    env: { PATH: process.env.PATH ?? '', ...runtimeOverride(), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let output = '';
  const keep = (chunk: Buffer) => (output = (output + chunk.toString()).slice(-20_000));
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  await new Promise<void>((resolve, reject) => {
    const onReady = () => {
      if (!output.includes(ready)) return;
      child.stdout?.off('data', onReady);
      resolve();
    };
    child.stdout?.on('data', onReady);
    child.once('exit', (code, signal) => reject(new Error(`${name} exited with ${code ?? signal}:\n${output.slice(-2000)}`)));
  });
  child.once('exit', (code, signal) => {
    if (stopping.has(child)) return;
    process.stderr.write(
      `benchmark stopped: ${name} (pid ${child.pid}) exited with ${code ?? signal} while it ran; its last output:\n${output.slice(-4000)}\n`,
    );
    process.exit(1);
  });
  return child;
}

/** A dev server with our search attributes and the product's dynamic config (or BENCH_SERVER_DYNAMIC_CONFIG's). */
export async function startBenchServer(): Promise<DevEnvironment> {
  return startDevEnvironment({ dynamicConfig: benchDynamicConfig() });
}

/** How the bench runs its worker: `compiled` (default) as the image does, `tsx` from the sources as `npm run worker` does. */
export type WorkerRuntime = 'compiled' | 'tsx';

export function workerRuntime(): WorkerRuntime {
  return benchConfig().workerRuntime;
}

export interface BenchWorker {
  readonly runtime: WorkerRuntime;
  /** Starts a worker process with these variables (the bundle's path is added) and Node arguments added to BENCH_WORKER_NODE_ARGS's, and resolves once it reports "worker started". */
  start(env: Record<string, string>, nodeArgs?: readonly string[]): Promise<ChildProcess>;
  remove(): Promise<void>;
}

/**
 * The worker as the image runs it: `npm run build` (tsc to dist/, the prebuilt bundle from the
 * compiled workflows), then `node dist/src/worker.js`. Built afresh on every bench run so the figures
 * are of the code in the tree. With BENCH_WORKER_RUNTIME=tsx: the sources through tsx and a bundle
 * of the TypeScript sources, as `npm run worker` runs them (tsx turns on source-mapped stack traces).
 */
export async function prepareBenchWorker(runtime: WorkerRuntime = workerRuntime()): Promise<BenchWorker> {
  if (runtime === 'compiled') {
    run('npm', ['run', '--silent', 'build']);
    const bundlePath = join(root, 'dist', 'workflow-bundle.js');
    return {
      runtime,
      start: (env, nodeArgs = []) =>
        startProcess(
          'worker',
          'dist/src/worker.js',
          { ...env, WORKER_WORKFLOW_BUNDLE: bundlePath },
          '"worker started"',
          [...workerNodeArgs(), ...nodeArgs],
          'node',
        ),
      remove: async () => {},
    };
  }
  const dir = await mkdtemp(join(tmpdir(), 'bench-bundle-'));
  const bundlePath = join(dir, 'workflow-bundle.js');
  await writeFile(bundlePath, await productWorkflowBundle());
  return {
    runtime,
    start: (env, nodeArgs = []) =>
      startProcess('worker', 'src/worker.ts', { ...env, WORKER_WORKFLOW_BUNDLE: bundlePath }, '"worker started"', [...workerNodeArgs(), ...nodeArgs]),
    remove: () => rm(dir, { recursive: true, force: true }),
  };
}

/** Runs a command at the repository root to its end; throws with its output if it fails. */
function run(command: string, args: string[]): void {
  const result = spawnSync(command, args, { cwd: root, encoding: 'utf8' });
  if (result.status !== 0)
    throw new Error(`${command} ${args.join(' ')} exited with ${result.status ?? result.signal}:\n${(result.stdout + result.stderr).slice(-4000)}`);
}

/** The sandbox as its own process, with any SANDBOX_* settings of `env`; resolves with its URL. */
export async function startSandboxProcess(env: Readonly<Record<string, string>> = {}): Promise<string> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  await startProcess('sandbox', 'sandbox/main.ts', { ...env, SANDBOX_PORT: String(port) }, url);
  return url;
}

/** SIGTERM (a worker drains) and wait until it is gone. */
export async function stopProcess(child: ChildProcess): Promise<void> {
  stopping.add(child);
  if (child.exitCode !== null || child.signalCode !== null) return;
  await new Promise((resolve) => {
    child.once('exit', resolve);
    child.kill('SIGTERM');
  });
}

/** Stops every process started here. */
export async function stopAllProcesses(): Promise<void> {
  await Promise.all(children.map(stopProcess));
}

/** Resident memory of a process now, in bytes (Linux /proc); NaN when it is gone. */
export function rssBytes(pid: number): number {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : NaN;
  } catch {
    return NaN;
  }
}

/** User + system CPU time of a process so far, in ms (Linux /proc; clock ticks are 100 Hz here). */
export function cpuMs(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return NaN;
  }
}

/** WORKER_* settings, NODE_OPTIONS, MALLOC_ARENA_MAX and the watchdog probe's VM_* settings (bench/vm-watchdog-probe.cjs) of this shell reach the worker, to compare tunings. */
export function workerTuning(): Record<string, string> {
  return Object.fromEntries(
    Object.entries(process.env).filter(
      (entry): entry is [string, string] =>
        entry[1] !== undefined &&
        (entry[0].startsWith('WORKER_') ||
          entry[0].startsWith('VM_') ||
          entry[0] === 'UNATTENDED_ADMISSION' ||
          entry[0] === 'NODE_OPTIONS' ||
          entry[0] === 'MALLOC_ARENA_MAX'),
    ),
  );
}

/** Extra node arguments for the worker only, e.g. BENCH_WORKER_NODE_ARGS="--max-old-space-size=256" or "--cpu-prof --cpu-prof-dir=/tmp/prof". */
export function workerNodeArgs(): string[] {
  return [...benchConfig().workerNodeArgs];
}

/**
 * The dev server's dynamic config: the product's (undefined), or BENCH_SERVER_DYNAMIC_CONFIG's
 * `key=value ...` (values as JSON) when set, to compare (`none`: none, e.g. no eager activities).
 */
export function benchDynamicConfig(): Readonly<Record<string, boolean | number | string>> | undefined {
  return benchConfig().serverDynamicConfig;
}

/** The `--runs N` (1..1000) of a bench's command line; anything else exits 2 naming the value. */
export function runsArgument(script: string, defaultRuns: number): number {
  const { values } = parseArgs({ options: { runs: { type: 'string', default: String(defaultRuns) } } });
  const runs = Number(values.runs);
  if (!Number.isInteger(runs) || runs < 1 || runs > 1000) {
    process.stderr.write(`usage: ${script} --runs ${defaultRuns} (1..1000); got --runs ${values.runs}\n`);
    process.exit(2);
  }
  return runs;
}

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

/** The median of values in any order. */
export function median(values: readonly number[]): number {
  return percentile(
    [...values].sort((a, b) => a - b),
    50,
  );
}
