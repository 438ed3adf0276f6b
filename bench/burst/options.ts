/** `npm run bench:burst`'s command line. Bad arguments are BurstArgumentErrors (exit 2, with the usage). */
import { numberArgument } from '../../scripts/lib/number-argument.js';
import { TEMPORAL_SERVER_VERSION } from '../../scripts/lib/temporal-versions.js';

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

/** undefined: --help was asked for. */
export function parseBurstArgs(argv: readonly string[], randomSeed: () => number): BurstOptions | undefined {
  let a = 2000;
  let b = 200;
  let live = 50;
  let modes: Mode[] | undefined;
  let scenario: Scenario = 'night';
  let alone: number | undefined;
  let windowS = 60;
  let budgetRps = 60;
  let tenantBudgetRps = 40;
  let aLimit = 10;
  let retryAfterS = 5;
  let workers = 3;
  let unattendedWorkers: number | undefined;
  let unattendedNice = 19;
  let unattendedInProcess = false;
  let deadlineS: number | undefined;
  let seed: number | undefined;
  let keepLogs = false;
  let floorRuns = 30;
  let otherLoadPercent = 0;
  for (let index = 0; index < argv.length; index += 1) {
    const flag = argv[index];
    const value = () => argv[++index];
    switch (flag) {
      case '--help':
        return undefined;
      case '--storm':
        scenario = 'storm';
        break;
      case '--alone':
        alone = number(flag, value(), 1, 5_000);
        break;
      case '--a':
        a = number(flag, value(), 1, 20_000);
        break;
      case '--b':
        b = number(flag, value(), 1, 5_000);
        break;
      case '--live':
        live = number(flag, value(), 1, 1_000);
        break;
      case '--only': {
        const mode = value();
        if (mode !== 'on' && mode !== 'off') throw new BurstArgumentError(`--only must be on or off, got ${JSON.stringify(mode ?? '')}`);
        modes = [mode];
        break;
      }
      case '--window':
        windowS = number(flag, value(), 1, 3_600);
        break;
      case '--budget':
        budgetRps = number(flag, value(), 1, 100_000, false);
        break;
      case '--tenant-budget':
        tenantBudgetRps = number(flag, value(), 1, 100_000, false);
        break;
      case '--a-limit':
        aLimit = number(flag, value(), 1, 1_000_000);
        break;
      case '--retry-after':
        retryAfterS = number(flag, value(), 1, 3_600);
        break;
      case '--workers':
        workers = number(flag, value(), 1, 8);
        break;
      case '--unattended-workers':
        unattendedWorkers = number(flag, value(), 0, 7);
        break;
      case '--unattended-nice':
        unattendedNice = number(flag, value(), 0, 19);
        break;
      case '--unattended-in-process':
        unattendedInProcess = true;
        break;
      case '--deadline':
        deadlineS = number(flag, value(), 10, 24 * 3_600);
        break;
      case '--seed':
        seed = number(flag, value(), 0, 2 ** 31 - 1);
        break;
      case '--keep-logs':
        keepLogs = true;
        break;
      case '--floor-runs':
        floorRuns = number(flag, value(), 0, 1_000);
        break;
      case '--other-load':
        otherLoadPercent = number(flag, value(), 0, 90);
        break;
      default:
        throw new BurstArgumentError(`unknown argument ${JSON.stringify(flag)}`);
    }
  }
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
  };
}
