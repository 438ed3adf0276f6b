/** `npm run bench:waiting`'s command line. Bad arguments are WaitingCurveArgumentErrors (exit 2, with the usage). */
import { readCommandLine } from '../../scripts/lib/cli-options.js';
import { numberArgument } from '../../scripts/lib/number-argument.js';
import type { WorkerRuntime } from '../bench-processes.js';

export interface WaitingCurveOptions {
  /** The numbers of connections held awaiting an answer at once, one fresh worker each, in order. */
  readonly sizes: readonly number[];
  /** Waiting connections answered one at a time to time the answer, and live connections started one at a time to time the first challenge. */
  readonly probes: number;
  /** How long every connection waits, all at once, while the server's CPU and disk are read (ms). */
  readonly holdMs: number;
  /** Connections started (and answered) at once. */
  readonly concurrency: number;
  /** Starting them all may take this long before the run is given up (ms). */
  readonly startDeadlineMs: number;
  /** How the worker runs; undefined: BENCH_WORKER_RUNTIME's (compiled by default, as the image runs it). */
  readonly workerRuntime: WorkerRuntime | undefined;
}

export class WaitingCurveArgumentError extends Error {
  override readonly name = 'WaitingCurveArgumentError';
}

export const USAGE = `usage: npm run bench:waiting -- [options]

Holds N live connections awaiting an answer at once on one worker process (the product's defaults,
as npm start runs it) against the dev server, with the sandbox in its own process; for each N, a
fresh worker. Prints for each N the worker's RSS and heap per waiting connection, the server's CPU
and disk while they wait, the answer's and the first challenge's p50 and p99 while they wait, how
long starting them all took, and that every connection completed once answered.

  --sizes 1000,3000,10000   the Ns, in order (each 1 to 20000)
  --probes 50               answers timed, and first challenges timed (1 to 1000; at most the smallest N)
  --hold 60                 seconds all N wait while the server is read (1 to 3600)
  --concurrency 50          starts and answers in flight at once (1 to 500)
  --start-deadline 1200     seconds starting them all may take (10 to 7200)
  --worker-runtime compiled the worker as the image runs it (npm run build), or tsx from the sources
                            (default: BENCH_WORKER_RUNTIME's, compiled)
  --help
`;

const FLAGS = ['--help'] as const;
const VALUES = ['--sizes', '--probes', '--hold', '--concurrency', '--start-deadline', '--worker-runtime'] as const;

function refuse(name: string, problem: string): WaitingCurveArgumentError {
  return new WaitingCurveArgumentError(`${name} ${problem}`);
}

function integer(name: string, text: string | undefined, min: number, max: number): number {
  const value = numberArgument(name, text, min, max);
  if (typeof value === 'string') throw new WaitingCurveArgumentError(value);
  return value;
}

/** undefined: --help was asked for. */
export function parseWaitingCurveArgs(argv: readonly string[]): WaitingCurveOptions | undefined {
  const { flags, values } = readCommandLine(argv, { flags: FLAGS, values: VALUES }, refuse);
  if (flags.has('--help')) return undefined;
  const given = (name: string, min: number, max: number, fallback: number) => (values.has(name) ? integer(name, values.get(name), min, max) : fallback);
  const sizesText = values.get('--sizes') ?? '1000,3000,10000';
  const sizes = sizesText.split(',').map((size) => integer('--sizes', size.trim(), 1, 20_000));
  const probes = given('--probes', 1, 1_000, 50);
  const smallest = Math.min(...sizes);
  if (probes > smallest)
    throw new WaitingCurveArgumentError(
      `--probes (${probes}) must not exceed the smallest of --sizes (${smallest}): the answers are timed on waiting connections`,
    );
  const workerRuntime = values.get('--worker-runtime');
  if (workerRuntime !== undefined && workerRuntime !== 'compiled' && workerRuntime !== 'tsx')
    throw new WaitingCurveArgumentError(`--worker-runtime must be compiled or tsx, got ${JSON.stringify(workerRuntime)}`);
  return {
    sizes,
    probes,
    holdMs: given('--hold', 1, 3_600, 60) * 1000,
    concurrency: given('--concurrency', 1, 500, 50),
    startDeadlineMs: given('--start-deadline', 10, 7_200, 1_200) * 1000,
    workerRuntime,
  };
}
