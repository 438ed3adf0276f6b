/** `npm run bench:burst`'s command line. Bad arguments are BurstArgumentErrors (exit 2, with the usage). */
import { numberArgument } from '../../scripts/lib/number-argument.js';
import { TEMPORAL_SERVER_VERSION } from '../../scripts/lib/temporal-versions.js';
import { readCommandLine } from '../../scripts/lib/cli-options.js';

export type Mode = 'on' | 'off';
/** `night`: A's and B's books refreshed as their Schedules trigger them (the default); `storm`: independent starts in one window. */
export type Scenario = 'night' | 'storm';

export interface BurstOptions {
  readonly scenario: Scenario;
  /** Tenant A's saved logins refreshed in the burst (its nightly schedules firing in one window). */
  readonly a: number;
  /** Tenant B's, started in the same window. */
  readonly b: number;
  /** Live connections whose challenges the operator script answers, spread over the burst. */
  readonly live: number;
  /** Night: each tenant's book refreshed alone first, this many of its logins (a sample of A's, all of a small B's). */
  readonly aloneA: number;
  readonly aloneB: number;
  /** The runs, in order: priority and fairness on (the product's settings), then off (the storm's default; the night's is on). */
  readonly modes: readonly Mode[];
  /** The storm: the window A's and B's starts fall in (ms). */
  readonly windowMs: number;
  /** Requests a second the whole fleet may send (SERVICE_BUDGET_RPS). */
  readonly budgetRps: number;
  /** Requests a second one tenant of weight 1 may send (SERVICE_BUDGET_TENANT_RPS). */
  readonly tenantBudgetRps: number;
  /** Tenant A's limit at the service after it is lowered midway (per second). */
  readonly aLimit: number;
  /** The Retry-After the service sends with its refusals once A's limit is lowered (s). */
  readonly retryAfterS: number;
  /** Worker processes. */
  readonly workers: number;
  /** Of the workers, those of the unattended pool (UNATTENDED_POOL=separate); 0 is one shared pool. */
  readonly unattendedWorkers: number;
  /** WORKER_NICE of the unattended pool's workers (in process: WORKER_UNATTENDED_NICE of its workflow threads). */
  readonly unattendedNice: number;
  /** The unattended pool in every worker process, beside the service queue's (UNATTENDED_POOL=separate, WORKER_POOL=all). */
  readonly unattendedInProcess: boolean;
  /** A connection (the night: a book's login) not ended this long after its phase's last start (the night's trigger) is lost (ms). */
  readonly deadlineMs: number;
  readonly seed: number;
  readonly keepLogs: boolean;
  /** Connections of each side of the product-vs-floor measure printed before the summary (0: skip it). */
  readonly floorRuns: number;
  /** The night: other work on the host, this percent of every core, for the whole run (0: none). */
  readonly otherLoadPercent: number;
  /** The Temporal server and PostgreSQL on a core of their own, the rest on the others (bench/burst/cpu-split.ts). */
  readonly cpuSplit: boolean;
}

export class BurstArgumentError extends Error {
  override readonly name = 'BurstArgumentError';
}

export const USAGE = `usage: npm run bench:burst -- [options]

The lender's night on the production stack as prod:check starts it (PostgreSQL, Temporal server
v${TEMPORAL_SERVER_VERSION}, worker processes, the sandbox as its own process), with the fleet's request budget set:
tenant A's book of saved logins and tenant B's, each enrolled (one bookEntryWorkflow a login) with
a book Schedule of its own at a far-off daily time, both Schedules triggered together; each
refresh keeps its own self-regulating window of connections (BOOK_WINDOW_* defaults, nothing tuned
here); live connections answered by an operator script throughout; once half of A's book is done,
the service's limit for A is lowered below A's budget. First, on the same stack: the live
connections alone ("idle") and each tenant's book alone ("alone": B's whole book, a sample of A's,
in a cadence of their own), which also gives what the cores carry. The last line:
  night: <n> refreshes, <n> lost, <n> failed, live answer p50 <ms> ms (<r>x idle) p99 <ms> ms (<r>x idle), refresh median A <r>x B <r>x alone, throughput <n>/s (<p>% of what the cores carry), B's share <p>% (weight <p>%), budget exceeded <n> s

--storm: the earlier scenario instead, A's and B's refreshes started independently (no book) within
one window, with priority and fairness on and then off; its last line:
  burst: <n> connections, <n> lost, <n> failed, live answer p50 <ms> ms (<r>x idle) p99 <ms> ms (<r>x idle), tenant B median <s> s (<r>x alone), budget exceeded <n> s, throttled by service <n>
Exit 1 when a connection was lost or failed, or (the night) a refresh's run did not replay from its
history (the latency, throughput, share and budget targets are figures, not verdicts).

  --storm            the storm scenario (independent starts in one window) instead of the night
  --a N              tenant A's saved logins (default 2000)
  --b N              tenant B's saved logins (default 200)
  --live N           live connections (default 50)
  --alone N          the night: logins of each tenant's book refreshed alone first (default: all of
                     B's and as many of A's, at most 200 each)
  --only on|off      priority and fairness on (the product's settings) or off; the storm runs both
                     unless told, the night runs on unless told
  --window S         the storm: seconds A's and B's starts are spread over (default 60)
  --budget RPS       SERVICE_BUDGET_RPS, the whole fleet (default 60)
  --tenant-budget RPS  SERVICE_BUDGET_TENANT_RPS, one tenant of weight 1 (default 40)
  --a-limit N        tenant A's limit at the service once lowered, per second (default 10)
  --retry-after S    the service's Retry-After once A's limit is lowered (default 5)
  --workers N        worker processes (default 3)
  --unattended-workers N  of those, the unattended pool's (UNATTENDED_POOL=separate,
                     WORKER_POOL=unattended; the rest WORKER_POOL=service); 0: one shared pool
                     (default: the night 1, the storm 0; the storm's held starts run on the pool)
  --unattended-nice N  WORKER_NICE of the unattended pool's workers: they take the cores the service
                     pool leaves, as such a pool on shared hosts should (default 19)
  --unattended-in-process  the unattended pool in every worker process beside the service queue's
                     (UNATTENDED_POOL=separate, WORKER_POOL=all; not with --unattended-workers N > 0),
                     its workflow threads at --unattended-nice (WORKER_UNATTENDED_NICE)
  --deadline S       a connection not ended this long after its phase's last start (the night:
                     after both Schedules were triggered) is lost (default 900; the night: 1800)
  --seed S           seed of the start times (default: random, printed)
  --keep-logs        keep each run's directory (PostgreSQL data, server, sandbox and worker logs)
  --floor-runs N     first, N cached connections of the product and N of the SDK floor's shape,
                     alternating on a dev server (bench/floor-ratio.ts); their ratio is printed
                     before the summary (default 30; 0 skips it)
  --cpu-split on|off the Temporal server and PostgreSQL on core 0, the workers, the sandbox and this
                     driver on the others (taskset), as production runs Temporal on hosts of its
                     own; the idle and alone baselines run the same way (default: the storm on, the
                     night off)
  --other-load P     the night: other work on the host, P% of every core's CPU time (a process a core)
                     for the whole run; what the cores carry is then what the rest of them carry
                     (default 0)
  --help             this text

WORKER_* variables of the shell reach every worker (e.g. WORKER_MAX_CONCURRENT_ACTIVITIES=50).

Needs: apt-get install -y postgresql; bash scripts/provision-temporal.sh server.`;

function number(name: string, text: string | undefined, min: number, max: number, integer = true): number {
  const value = numberArgument(name, text, min, max, { integer });
  if (typeof value === 'string') throw new BurstArgumentError(value);
  return value;
}

/** The night's books alone: all of a tenant's logins up to this many. */
const DEFAULT_ALONE_MAX = 200;

const VALUE_OPTIONS = [
  '--cpu-split',
  '--a',
  '--b',
  '--live',
  '--alone',
  '--only',
  '--window',
  '--budget',
  '--tenant-budget',
  '--a-limit',
  '--retry-after',
  '--workers',
  '--unattended-workers',
  '--unattended-nice',
  '--deadline',
  '--seed',
  '--floor-runs',
  '--other-load',
] as const;
const FLAG_OPTIONS = ['--storm', '--unattended-in-process', '--keep-logs', '--help'] as const;

/** The shared reader's refusal in the bench's words ("unknown argument ..." for what it does not know). */
function refuse(name: string, problem: string): BurstArgumentError {
  const unknown = problem === 'unknown option' || problem.startsWith('unexpected argument');
  return new BurstArgumentError(unknown ? `unknown argument ${JSON.stringify(name)}` : `${name} ${problem}`);
}

/** undefined: --help was asked for. */
export function parseBurstArgs(argv: readonly string[], randomSeed: () => number): BurstOptions | undefined {
  const { flags, values } = readCommandLine(argv, { flags: FLAG_OPTIONS, values: VALUE_OPTIONS }, refuse);
  if (flags.has('--help')) return undefined;
  /** The option's number, undefined when not given. */
  const given = (name: string, min: number, max: number, integer = true) => (values.has(name) ? number(name, values.get(name), min, max, integer) : undefined);
  const scenario: Scenario = flags.has('--storm') ? 'storm' : 'night';
  const a = given('--a', 1, 20_000) ?? 2000;
  const b = given('--b', 1, 5_000) ?? 200;
  const live = given('--live', 1, 1_000) ?? 50;
  const alone = given('--alone', 1, 5_000);
  const mode = values.get('--only');
  if (mode !== undefined && mode !== 'on' && mode !== 'off') throw new BurstArgumentError(`--only must be on or off, got ${JSON.stringify(mode)}`);
  const modes: Mode[] | undefined = mode === undefined ? undefined : [mode];
  const windowS = given('--window', 1, 3_600) ?? 60;
  const budgetRps = given('--budget', 1, 100_000, false) ?? 60;
  const tenantBudgetRps = given('--tenant-budget', 1, 100_000, false) ?? 40;
  const aLimit = given('--a-limit', 1, 1_000_000) ?? 10;
  const retryAfterS = given('--retry-after', 1, 3_600) ?? 5;
  const workers = given('--workers', 1, 8) ?? 3;
  const unattendedWorkers = given('--unattended-workers', 0, 7);
  const unattendedNice = given('--unattended-nice', 0, 19) ?? 19;
  const unattendedInProcess = flags.has('--unattended-in-process');
  const deadlineS = given('--deadline', 10, 24 * 3_600);
  const seed = given('--seed', 0, 2 ** 31 - 1);
  const keepLogs = flags.has('--keep-logs');
  const floorRuns = given('--floor-runs', 0, 1_000) ?? 30;
  const otherLoadPercent = given('--other-load', 0, 90) ?? 0;
  const split = values.get('--cpu-split');
  if (split !== undefined && split !== 'on' && split !== 'off') throw new BurstArgumentError(`--cpu-split must be on or off, got ${JSON.stringify(split)}`);
  if (tenantBudgetRps > budgetRps)
    throw new BurstArgumentError(
      `--tenant-budget (${tenantBudgetRps}) must not exceed --budget (${budgetRps}), as SERVICE_BUDGET_TENANT_RPS must not exceed SERVICE_BUDGET_RPS`,
    );
  if (aLimit >= tenantBudgetRps)
    throw new BurstArgumentError(
      `--a-limit (${aLimit}) must be below tenant A's budget (--tenant-budget ${tenantBudgetRps}): the point is a service limit below the budget`,
    );
  if (scenario === 'storm' && otherLoadPercent > 0)
    throw new BurstArgumentError('--other-load is for the night (the storm measures against its own idle and alone runs)');
  if (unattendedInProcess && (unattendedWorkers ?? 0) > 0)
    throw new BurstArgumentError(`--unattended-in-process runs the unattended pool in every worker: not with --unattended-workers ${unattendedWorkers}`);
  const unattended = unattendedWorkers ?? (scenario === 'storm' || unattendedInProcess ? 0 : 1);
  if (unattended >= workers)
    throw new BurstArgumentError(`--unattended-workers (${unattended}) must leave the service queue a worker of the ${workers} (--workers)`);
  const aloneB = Math.min(b, alone ?? DEFAULT_ALONE_MAX);
  return {
    scenario,
    a,
    b,
    live,
    aloneA: Math.min(a, alone ?? aloneB),
    aloneB,
    modes: modes ?? (scenario === 'night' ? ['on'] : ['on', 'off']),
    windowMs: windowS * 1000,
    budgetRps,
    tenantBudgetRps,
    aLimit,
    retryAfterS,
    workers,
    unattendedWorkers: unattended,
    unattendedNice,
    unattendedInProcess,
    deadlineMs: (deadlineS ?? (scenario === 'night' ? 1_800 : 900)) * 1000,
    seed: seed ?? randomSeed(),
    keepLogs,
    floorRuns,
    otherLoadPercent,
    cpuSplit: split === undefined ? scenario === 'storm' : split === 'on',
  };
}
