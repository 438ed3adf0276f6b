/** `npm run deploy:check`'s command line. Bad arguments are DeployCheckArgumentErrors (exit 2, with the usage). */
import { numberArgument } from '../lib/number-argument.js';
import { readCommandLine } from '../lib/cli-options.js';
import { TEMPORAL_SERVER_VERSION } from '../lib/temporal-versions.js';

export interface DeployCheckOptions {
  /** Connections of each kind (awaiting an answer, mid-poll, mid-retrieval of a large login, ...). */
  readonly perStage: number;
  /** Worker processes of each build. */
  readonly workers: number;
  /** Percent of new connections the ramp sends to v2. */
  readonly rampPercent: number;
  readonly seed: number;
  readonly keepLogs: boolean;
}

export class DeployCheckArgumentError extends Error {
  override readonly name = 'DeployCheckArgumentError';
}

export const USAGE = `usage: npm run deploy:check -- [options]

A deploy rehearsed on the production stack (PostgreSQL, Temporal server v${TEMPORAL_SERVER_VERSION}, worker
processes), with Worker Deployment Versioning: v1 workers with connections awaiting an answer,
mid-poll and mid-retrieval of a large login, and retention timers pending; v2 workers built from a
copy of the code with one more activity before retrieval (a change that breaks the replay of v1's
histories); v2 ramped (a v1 worker SIGKILLed meanwhile), then made current; v1's connections finish
on v1 while new ones run on v2; the retention timers move to v2 and keep their due times; v1 drained
and retired once nothing is pinned to it; then a rollback to v1 for new connections. Last line:
  deploy-check: <n> connections, <n> completed as expected, <n> on v1, <n> on v2, <n> stuck, <n> nondeterminism errors, <n> lost timers

  --per-stage N     connections of each kind (default 4; the large login: half, at least 1)
  --workers W       worker processes of each build (default 2)
  --ramp-percent P  share of new connections v2 takes while it ramps (default 50)
  --seed S          seed of the SIGKILL's victim (default: random, printed)
  --keep-logs       keep the run directory (PostgreSQL data, server and worker logs)
  --help            this text

Needs: apt-get install -y postgresql; bash scripts/provision-temporal.sh server.`;

function integer(name: string, text: string | undefined, min: number, max: number): number {
  const value = numberArgument(name, text, min, max);
  if (typeof value === 'string') throw new DeployCheckArgumentError(value);
  return value;
}

/** undefined: --help was asked for. */
export function parseDeployCheckArgs(argv: readonly string[], randomSeed: () => number): DeployCheckOptions | undefined {
  const { flags, values } = readCommandLine(
    argv,
    { values: ['--per-stage', '--workers', '--ramp-percent', '--seed'], flags: ['--keep-logs', '--help'] },
    refuse,
  );
  if (flags.has('--help')) return undefined;
  const option = (name: string, fallback: number, min: number, max: number) => (values.has(name) ? integer(name, values.get(name), min, max) : fallback);
  const seed = values.has('--seed') ? integer('--seed', values.get('--seed'), 0, 2 ** 31 - 1) : randomSeed();
  return {
    perStage: option('--per-stage', 4, 1, 200),
    workers: option('--workers', 2, 1, 8),
    rampPercent: option('--ramp-percent', 50, 1, 99),
    seed,
    keepLogs: flags.has('--keep-logs'),
  };
}

/** The shared reader's refusal in this check's words ("unknown argument ..." for what it does not know). */
function refuse(name: string, problem: string): DeployCheckArgumentError {
  const unknown = problem === 'unknown option' || problem.startsWith('unexpected argument');
  return new DeployCheckArgumentError(unknown ? `unknown argument ${JSON.stringify(name)}` : `${name} ${problem}`);
}
