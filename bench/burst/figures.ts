/**
 * The burst benchmark's figures, computed from what it observed (no I/O here, so the tests check
 * each computation on its own): start times, connection end states, the service's per-second
 * request counts against the budget, latency percentiles and ratios, the summary line.
 */
import { median, percentile } from '../bench-processes.js';
import type { Random } from '../../scripts/chaos/random.js';
import type { RequestRates } from '../../sandbox/rate-limits.js';

// ---- starts ---------------------------------------------------------------------------------------

/**
 * When each of `count` scheduled refreshes starts, in ms after the window opens, as schedules with
 * jitter firing in one window start them: uniformly at random over the window, in order.
 */
export function scheduleStarts(count: number, windowMs: number, random: Random): number[] {
  return Array.from({ length: count }, () => Math.floor(random.next() * windowMs)).sort((x, y) => x - y);
}

/** Evenly over `spreadMs`: the first at 0, the last at `spreadMs` (one: at 0). */
export function evenStarts(count: number, spreadMs: number): number[] {
  const step = count > 1 ? spreadMs / (count - 1) : 0;
  return Array.from({ length: count }, (_, index) => Math.round(index * step));
}

/**
 * How long the burst should keep Temporal's queue busy if the fleet sent at its budget's steady
 * rate (half the budget: the queue limit, src/budget/fleet-budget.ts), at least the start window:
 * the live connections are spread over it, so they meet the burst throughout.
 */
export function expectedBurstMs(requests: number, budgetRps: number, windowMs: number): number {
  return Math.max(windowMs, Math.round((requests / (budgetRps * 0.5)) * 1000));
}

// ---- connections ----------------------------------------------------------------------------------

export type EndState = 'completed' | 'failed' | 'lost';

/**
 * A connection's end by Temporal's execution status: lost when it did not end by the deadline or
 * cannot be found (undefined), failed when it ended any other way than completed.
 */
export function endStateOf(executionStatus: string | undefined): EndState {
  if (executionStatus === undefined || executionStatus === 'RUNNING') return 'lost';
  return executionStatus === 'COMPLETED' ? 'completed' : 'failed';
}

export interface EndCounts {
  readonly connections: number;
  readonly completed: number;
  readonly failed: number;
  readonly lost: number;
}

export function countEnds(states: readonly EndState[]): EndCounts {
  return {
    connections: states.length,
    completed: states.filter((state) => state === 'completed').length,
    failed: states.filter((state) => state === 'failed').length,
    lost: states.filter((state) => state === 'lost').length,
  };
}

// ---- the service's counts against the budget ------------------------------------------------------

export interface SecondCount {
  readonly accepted: number;
  readonly refused: number;
}

/** Per tenant, per whole second of the sandbox clock: requests accepted and refused. */
export type RateBook = Map<string, Map<number, SecondCount>>;

/**
 * Adds one GET /sandbox/request-rates answer to the book. Counts of a second only grow, so of two
 * reads of the same second the larger is the later (the second had not ended at the earlier one).
 */
export function mergeRates(book: RateBook, snapshot: Pick<RequestRates, 'tenants'>): void {
  for (const [tenant, rates] of Object.entries(snapshot.tenants)) {
    let seconds = book.get(tenant);
    if (!seconds) {
      seconds = new Map();
      book.set(tenant, seconds);
    }
    for (const { second, accepted, refused } of rates.perSecond) {
      const known = seconds.get(second);
      if (!known || accepted + refused > known.accepted + known.refused) seconds.set(second, { accepted, refused });
    }
  }
}

export interface BudgetSpec {
  /** Requests a second for the whole fleet (SERVICE_BUDGET_RPS). */
  readonly totalRps: number;
  /**
   * How the service counts (SERVICE_BUDGET_MODE): strict, at most the rate in each whole second;
   * bucket, a token bucket of the rate holding `burst` (default one second's worth, the rate; a
   * tenant's in proportion to its rate).
   */
  readonly mode: 'bucket' | 'strict';
  /** Bucket: what the fleet's bucket holds (SERVICE_BUDGET_BURST). */
  readonly burst?: number | undefined;
  /** Requests a second for one tenant of weight 1 (SERVICE_BUDGET_TENANT_RPS). */
  readonly tenantRps: number;
  /** TENANT_WEIGHTS ('*' for any other tenant; 1 where neither is set). */
  readonly weights: ReadonlyMap<string, number>;
}

export interface BudgetFigures {
  /** 1-second windows with at least one request. */
  readonly busySeconds: number;
  /** Seconds ending a window where every tenant together sent more than the fleet's budget allows. */
  readonly fleetExceeded: number;
  /** Seconds ending a window where one tenant sent more than its budget (tenant budget × weight) allows, per tenant. */
  readonly tenantExceeded: ReadonlyMap<string, number>;
  /** Windows where either was exceeded (each window once). */
  readonly exceeded: number;
  readonly maxFleetPerSecond: number;
  readonly maxTenantPerSecond: ReadonlyMap<string, number>;
  readonly accepted: number;
  /** Requests the service refused (TOO_MANY_REQUESTS), in total and per tenant. */
  readonly refused: number;
  readonly refusedByTenant: ReadonlyMap<string, number>;
  readonly acceptedByTenant: ReadonlyMap<string, number>;
}

export function tenantBudgetOf(budget: BudgetSpec, tenant: string): number {
  return budget.tenantRps * (budget.weights.get(tenant) ?? budget.weights.get('*') ?? 1);
}

/**
 * Whether what was sent in the whole seconds up to `second` exceeds a limit of `rps`: strict, more
 * than `rps` in that second; bucket, more than `burst + rps × k` in the k seconds ending with it, for
 * some k (what a bucket of `rps` a second holding `burst` lets through at most in k whole seconds).
 */
function overLimit(sent: ReadonlyMap<number, number>, second: number, fromSecond: number, rps: number, burst: number | undefined): boolean {
  if (burst === undefined) return (sent.get(second) ?? 0) > rps;
  let sum = 0;
  for (let start = second; start >= fromSecond; start -= 1) {
    sum += sent.get(start) ?? 0;
    if (sum > burst + rps * (second - start + 1)) return true;
  }
  return false;
}

/**
 * The whole seconds [fromSecond, toSecond] (of the sandbox clock) in which what was sent (accepted +
 * refused: a refused request was sent all the same) exceeded the fleet's budget or one tenant's:
 * strict, in that second; bucket, in the seconds up to it (overLimit).
 */
export function budgetFigures(book: RateBook, budget: BudgetSpec, fromSecond: number, toSecond: number): BudgetFigures {
  const fleetBurst = budget.mode === 'strict' ? undefined : (budget.burst ?? budget.totalRps);
  const fleet = new Map<number, number>();
  const tenantExceeded = new Map<string, number>();
  const maxTenant = new Map<string, number>();
  const refusedByTenant = new Map<string, number>();
  const acceptedByTenant = new Map<string, number>();
  const exceededSeconds = new Set<number>();
  let accepted = 0;
  let refused = 0;
  for (const [tenant, seconds] of book) {
    const limit = tenantBudgetOf(budget, tenant);
    const tenantBurst = fleetBurst === undefined ? undefined : (fleetBurst * limit) / budget.totalRps;
    const sentOf = new Map<number, number>();
    for (const [second, count] of seconds) {
      if (second < fromSecond || second > toSecond) continue;
      const sent = count.accepted + count.refused;
      if (sent === 0) continue;
      sentOf.set(second, sent);
      accepted += count.accepted;
      refused += count.refused;
      acceptedByTenant.set(tenant, (acceptedByTenant.get(tenant) ?? 0) + count.accepted);
      refusedByTenant.set(tenant, (refusedByTenant.get(tenant) ?? 0) + count.refused);
      fleet.set(second, (fleet.get(second) ?? 0) + sent);
      maxTenant.set(tenant, Math.max(maxTenant.get(tenant) ?? 0, sent));
    }
    for (const second of sentOf.keys()) {
      if (overLimit(sentOf, second, fromSecond, limit, tenantBurst)) {
        tenantExceeded.set(tenant, (tenantExceeded.get(tenant) ?? 0) + 1);
        exceededSeconds.add(second);
      }
    }
  }
  let fleetExceeded = 0;
  let maxFleet = 0;
  for (const [second, sent] of fleet) {
    maxFleet = Math.max(maxFleet, sent);
    if (overLimit(fleet, second, fromSecond, budget.totalRps, fleetBurst)) {
      fleetExceeded += 1;
      exceededSeconds.add(second);
    }
  }
  return {
    busySeconds: fleet.size,
    fleetExceeded,
    tenantExceeded,
    exceeded: exceededSeconds.size,
    maxFleetPerSecond: maxFleet,
    maxTenantPerSecond: maxTenant,
    accepted,
    refused,
    refusedByTenant,
    acceptedByTenant,
  };
}

export interface RateBucket {
  /** Seconds after `fromSecond` the bucket starts. */
  readonly offsetS: number;
  readonly perTenant: ReadonlyMap<string, SecondCount>;
}

/** The book's counts summed over `bucketS`-second buckets from `fromSecond` to `toSecond`, tenants in name order. */
export function bucketRates(book: RateBook, fromSecond: number, toSecond: number, bucketS: number): RateBucket[] {
  const tenants = [...book.keys()].sort();
  const buckets: RateBucket[] = [];
  for (let start = fromSecond; start <= toSecond; start += bucketS) {
    const perTenant = new Map<string, SecondCount>();
    for (const tenant of tenants) {
      let accepted = 0;
      let refused = 0;
      for (let second = start; second < Math.min(start + bucketS, toSecond + 1); second += 1) {
        const count = book.get(tenant)?.get(second);
        accepted += count?.accepted ?? 0;
        refused += count?.refused ?? 0;
      }
      perTenant.set(tenant, { accepted, refused });
    }
    buckets.push({ offsetS: start - fromSecond, perTenant });
  }
  return buckets;
}

/** A bucket of 10 s, or a multiple of 10 s that keeps the table within ~40 rows. */
export function bucketSecondsFor(durationS: number): number {
  return 10 * Math.max(1, Math.ceil(durationS / 400));
}

// ---- latencies --------------------------------------------------------------------------------------

export interface Spread {
  readonly count: number;
  readonly p50: number;
  readonly p99: number;
}

export function spreadOf(values: readonly number[]): Spread {
  const sorted = [...values].sort((x, y) => x - y);
  return { count: sorted.length, p50: percentile(sorted, 50), p99: percentile(sorted, 99) };
}

export function medianOf(values: readonly number[]): number {
  return median(values);
}

/** value / base, NaN when either is missing or the base is 0. */
export function ratio(value: number, base: number): number {
  return Number.isFinite(value) && Number.isFinite(base) && base > 0 ? value / base : NaN;
}

// ---- the summary -------------------------------------------------------------------------------------

export interface RunFigures extends EndCounts {
  /** Live answers (submission → outcome), ms: during the burst and alone before it. */
  readonly live: Spread;
  readonly liveIdle: Spread;
  /** Tenant B's connections, start → end, s: median in the burst and alone. */
  readonly bMedianS: number;
  readonly bAloneMedianS: number;
  readonly budget: BudgetFigures;
}

const fixed = (value: number, digits: number) => (Number.isFinite(value) ? value.toFixed(digits) : 'n/a');

/** `burst: <n> connections, <n> lost, <n> failed, live answer p50 <ms> ms (<r>x idle) p99 <ms> ms (<r>x idle), tenant B median <s> s (<r>x alone), budget exceeded <n> s, throttled by service <n>` */
/** The storm's line; with a CPU split, the cores each side ran on (`; cpu split temporal 0 | rest 1`). */
export function summaryLine(figures: RunFigures, split?: { readonly temporal: string; readonly rest: string }): string {
  const { live, liveIdle } = figures;
  return (
    `burst: ${figures.connections} connections, ${figures.lost} lost, ${figures.failed} failed, ` +
    `live answer p50 ${fixed(live.p50, 0)} ms (${fixed(ratio(live.p50, liveIdle.p50), 2)}x idle) p99 ${fixed(live.p99, 0)} ms (${fixed(ratio(live.p99, liveIdle.p99), 2)}x idle), ` +
    `tenant B median ${fixed(figures.bMedianS, 1)} s (${fixed(ratio(figures.bMedianS, figures.bAloneMedianS), 2)}x alone), ` +
    `budget exceeded ${figures.budget.exceeded} s, throttled by service ${figures.budget.refused}` +
    (split ? `; cpu split temporal ${split.temporal} | rest ${split.rest}` : '')
  );
}

export const SUMMARY_PATTERN =
  /^burst: (\d+) connections, (\d+) lost, (\d+) failed, live answer p50 (\d+|n\/a) ms \(([\d.]+|n\/a)x idle\) p99 (\d+|n\/a) ms \(([\d.]+|n\/a)x idle\), tenant B median ([\d.]+|n\/a) s \(([\d.]+|n\/a)x alone\), budget exceeded (\d+) s, throttled by service (\d+)(?:; cpu split temporal ([\d,-]+) \| rest ([\d,-]+))?$/;

export interface ParsedSummary {
  readonly connections: number;
  readonly lost: number;
  readonly failed: number;
  readonly liveP50Ms: number;
  readonly liveP50Ratio: number;
  readonly liveP99Ms: number;
  readonly liveP99Ratio: number;
  readonly bMedianS: number;
  readonly bRatio: number;
  readonly budgetExceededS: number;
  readonly throttled: number;
}

/** The summary line's numbers (NaN for n/a), or undefined when the line is not one. */
export function parseSummaryLine(line: string): ParsedSummary | undefined {
  const match = SUMMARY_PATTERN.exec(line);
  if (!match) return undefined;
  const [connections, lost, failed, liveP50Ms, liveP50Ratio, liveP99Ms, liveP99Ratio, bMedianS, bRatio, budgetExceededS, throttled] = match
    .slice(1)
    .map((text) => (text === 'n/a' ? NaN : Number(text)));
  return {
    connections: connections ?? NaN,
    lost: lost ?? NaN,
    failed: failed ?? NaN,
    liveP50Ms: liveP50Ms ?? NaN,
    liveP50Ratio: liveP50Ratio ?? NaN,
    liveP99Ms: liveP99Ms ?? NaN,
    liveP99Ratio: liveP99Ratio ?? NaN,
    bMedianS: bMedianS ?? NaN,
    bRatio: bRatio ?? NaN,
    budgetExceededS: budgetExceededS ?? NaN,
    throttled: throttled ?? NaN,
  };
}

const mark = (ok: boolean) => (ok ? 'met' : 'MISSED');

/** The targets, each met or missed (benchmark figures: they decide nothing about the exit code but lost and failed). */
export function targetsLine(figures: RunFigures): string {
  const p50 = ratio(figures.live.p50, figures.liveIdle.p50);
  const p99 = ratio(figures.live.p99, figures.liveIdle.p99);
  const b = ratio(figures.bMedianS, figures.bAloneMedianS);
  return [
    `0 lost ${mark(figures.lost === 0)}`,
    `0 failed ${mark(figures.failed === 0)}`,
    `live p50 <= 1.5x idle ${mark(p50 <= 1.5)} (${fixed(p50, 2)}x)`,
    `live p99 <= 2x idle ${mark(p99 <= 2)} (${fixed(p99, 2)}x)`,
    `tenant B median <= 1.5x alone ${mark(b <= 1.5)} (${fixed(b, 2)}x)`,
    `budget exceeded in no window of whole seconds ${mark(figures.budget.exceeded === 0)} (${figures.budget.exceeded} s)`,
  ].join('; ');
}

// ---- the night -----------------------------------------------------------------------------------

/** Completions (close times, epoch ms) of two books over the interval both were running. */
export interface BothRunning {
  readonly fromMs: number;
  readonly toMs: number;
  readonly a: number;
  readonly b: number;
  /** (a + b) a second over the interval; NaN when it is empty. */
  readonly perSecond: number;
  /** b / (a + b); NaN without completions. */
  readonly bShare: number;
}

/**
 * What two books completed while both ran: the interval from the later start to the earlier end,
 * the completions of each whose close time falls in it, their rate and B's share of them.
 */
export function bothRunning(
  a: { readonly startMs: number; readonly endMs: number; readonly closesMs: readonly number[] },
  b: { readonly startMs: number; readonly endMs: number; readonly closesMs: readonly number[] },
): BothRunning {
  const fromMs = Math.max(a.startMs, b.startMs);
  const toMs = Math.min(a.endMs, b.endMs);
  const within = (closes: readonly number[]) => closes.filter((at) => at >= fromMs && at <= toMs).length;
  const countA = toMs > fromMs ? within(a.closesMs) : 0;
  const countB = toMs > fromMs ? within(b.closesMs) : 0;
  return {
    fromMs,
    toMs,
    a: countA,
    b: countB,
    perSecond: toMs > fromMs ? ((countA + countB) * 1000) / (toMs - fromMs) : NaN,
    bShare: countA + countB > 0 ? countB / (countA + countB) : NaN,
  };
}

/** B's share of two tenants' weights (TENANT_WEIGHTS; 1 where neither the tenant nor '*' is set). */
export function weightShare(weights: ReadonlyMap<string, number>, a: string, b: string): number {
  const of = (tenant: string) => weights.get(tenant) ?? weights.get('*') ?? 1;
  return of(b) / (of(a) + of(b));
}

export interface NightFigures {
  /** The night's refreshes: A's book and B's. */
  readonly refreshes: number;
  /** Logins with no outcome and connections not ended by the deadline, every phase of the run. */
  readonly lost: number;
  /** Logins whose outcome is not `refreshed`, and live connections that did not complete, every phase. */
  readonly failed: number;
  readonly live: Spread;
  readonly liveIdle: Spread;
  /** Live connections' start → first challenge, in the night and idle (absent from figures of before). */
  readonly firstChallenge?: Spread | undefined;
  readonly firstChallengeIdle?: Spread | undefined;
  /** Median connection child start → close (s), in the night and in its book alone. */
  readonly aMedianS: number;
  readonly aAloneMedianS: number;
  readonly bMedianS: number;
  readonly bAloneMedianS: number;
  /** Refreshes completed a second while both books ran. */
  readonly throughputRps: number;
  /** What the cores carry (cores × 1000 / stack CPU a refresh alone), refreshes a second. */
  readonly capacityRps: number;
  /** What the fleet's budget carries, refreshes a second (SERVICE_BUDGET_RPS / requests a refresh). */
  readonly budgetRefreshRps: number;
  readonly bShare: number;
  readonly bWeightShare: number;
  readonly budgetExceededS: number;
  /** The refreshes' runs whose replay failed as nondeterministic (or undefined: not replayed). */
  readonly nondeterminism?: number | undefined;
}

const percent = (value: number) => (Number.isFinite(value) ? (100 * value).toFixed(0) : 'n/a');

/** `night: <n> refreshes, <n> lost, <n> failed, live answer p50 <ms> ms (<r>x idle) p99 <ms> ms (<r>x idle), refresh median A <r>x B <r>x alone, throughput <n>/s (<p>% of what the cores carry), B's share <p>% (weight <p>%), budget exceeded <n> s` */
export function nightLine(figures: NightFigures): string {
  const { live, liveIdle } = figures;
  return (
    `night: ${figures.refreshes} refreshes, ${figures.lost} lost, ${figures.failed} failed, ` +
    `live answer p50 ${fixed(live.p50, 0)} ms (${fixed(ratio(live.p50, liveIdle.p50), 2)}x idle) p99 ${fixed(live.p99, 0)} ms (${fixed(ratio(live.p99, liveIdle.p99), 2)}x idle), ` +
    `refresh median A ${fixed(ratio(figures.aMedianS, figures.aAloneMedianS), 2)}x B ${fixed(ratio(figures.bMedianS, figures.bAloneMedianS), 2)}x alone, ` +
    `throughput ${fixed(figures.throughputRps, 1)}/s (${percent(ratio(figures.throughputRps, figures.capacityRps))}% of what the cores carry), ` +
    `B's share ${percent(figures.bShare)}% (weight ${percent(figures.bWeightShare)}%), budget exceeded ${figures.budgetExceededS} s`
  );
}

const NUMBER = String.raw`([\d.]+|n\/a)`;
export const NIGHT_PATTERN = new RegExp(
  String.raw`^night: (\d+) refreshes, (\d+) lost, (\d+) failed, live answer p50 ${NUMBER} ms \(${NUMBER}x idle\) p99 ${NUMBER} ms \(${NUMBER}x idle\), ` +
    String.raw`refresh median A ${NUMBER}x B ${NUMBER}x alone, throughput ${NUMBER}\/s \(${NUMBER}% of what the cores carry\), B's share ${NUMBER}% \(weight ${NUMBER}%\), budget exceeded (\d+) s$`,
);

export interface ParsedNight {
  readonly refreshes: number;
  readonly lost: number;
  readonly failed: number;
  readonly liveP50Ms: number;
  readonly liveP50Ratio: number;
  readonly liveP99Ms: number;
  readonly liveP99Ratio: number;
  readonly aRatio: number;
  readonly bRatio: number;
  readonly throughputRps: number;
  readonly capacityPercent: number;
  readonly bSharePercent: number;
  readonly weightPercent: number;
  readonly budgetExceededS: number;
}

/** The night line's numbers (NaN for n/a), or undefined when the line is not one. */
export function parseNightLine(line: string): ParsedNight | undefined {
  const match = NIGHT_PATTERN.exec(line);
  if (!match) return undefined;
  const [
    refreshes,
    lost,
    failed,
    liveP50Ms,
    liveP50Ratio,
    liveP99Ms,
    liveP99Ratio,
    aRatio,
    bRatio,
    throughputRps,
    capacityPercent,
    bSharePercent,
    weightPercent,
    budgetExceededS,
  ] = match.slice(1).map((text) => (text === 'n/a' ? NaN : Number(text)));
  const n = (value: number | undefined) => value ?? NaN;
  return {
    refreshes: n(refreshes),
    lost: n(lost),
    failed: n(failed),
    liveP50Ms: n(liveP50Ms),
    liveP50Ratio: n(liveP50Ratio),
    liveP99Ms: n(liveP99Ms),
    liveP99Ratio: n(liveP99Ratio),
    aRatio: n(aRatio),
    bRatio: n(bRatio),
    throughputRps: n(throughputRps),
    capacityPercent: n(capacityPercent),
    bSharePercent: n(bSharePercent),
    weightPercent: n(weightPercent),
    budgetExceededS: n(budgetExceededS),
  };
}

function firstChallengeTarget(p99: number): string {
  return `live first challenge p99 <= 2x idle ${mark(p99 <= 2)} (${fixed(p99, 2)}x)`;
}

/** The targets for the night, each met or missed (figures, not verdicts). */
export function nightTargetsLine(figures: NightFigures): string {
  const p50 = ratio(figures.live.p50, figures.liveIdle.p50);
  const p99 = ratio(figures.live.p99, figures.liveIdle.p99);
  const a = ratio(figures.aMedianS, figures.aAloneMedianS);
  const b = ratio(figures.bMedianS, figures.bAloneMedianS);
  const carried = Math.min(figures.capacityRps, figures.budgetRefreshRps);
  const share = ratio(figures.bShare, figures.bWeightShare);
  return [
    `0 lost ${mark(figures.lost === 0)}`,
    `0 failed ${mark(figures.failed === 0)}`,
    `live p50 <= 1.5x idle ${mark(p50 <= 1.5)} (${fixed(p50, 2)}x)`,
    `live p99 <= 2x idle ${mark(p99 <= 2)} (${fixed(p99, 2)}x)`,
    ...(figures.firstChallenge && figures.firstChallengeIdle ? [firstChallengeTarget(ratio(figures.firstChallenge.p99, figures.firstChallengeIdle.p99))] : []),
    `A median <= 1.5x alone ${mark(a <= 1.5)} (${fixed(a, 2)}x)`,
    `B median <= 1.5x alone ${mark(b <= 1.5)} (${fixed(b, 2)}x)`,
    `throughput >= 60% of min(cores ${fixed(figures.capacityRps, 1)}/s, budget ${fixed(figures.budgetRefreshRps, 1)}/s) ${mark(figures.throughputRps >= 0.6 * carried)} (${percent(ratio(figures.throughputRps, carried))}%)`,
    `B's share >= 90% of its weight's ${mark(share >= 0.9)} (${percent(share)}%)`,
    `budget exceeded in no 1-second window ${mark(figures.budgetExceededS === 0)} (${figures.budgetExceededS} s)`,
    ...(figures.nondeterminism === undefined
      ? []
      : [`refreshes replay with 0 nondeterminism ${mark(figures.nondeterminism === 0)} (${figures.nondeterminism})`]),
  ].join('; ');
}

/**
 * How long the night should take if the books ran at what the machine and the budget carry (the
 * budget's steady half, as expectedBurstMs): A's first half and B's at that rate, A's second half
 * at its lowered limit; the live connections are spread over it, so they meet the night throughout.
 */
export function expectedNightMs({
  a,
  b,
  capacityRps,
  budgetRps,
  aLimit,
  requestsPerRefresh,
}: {
  a: number;
  b: number;
  capacityRps: number;
  budgetRps: number;
  aLimit: number;
  requestsPerRefresh: number;
}): number {
  const carried = Math.min(Number.isFinite(capacityRps) && capacityRps > 0 ? capacityRps : Infinity, (budgetRps * 0.5) / requestsPerRefresh);
  return Math.round(((Math.ceil(a / 2) + b) / carried + Math.floor(a / 2) / (aLimit / requestsPerRefresh)) * 1000);
}
