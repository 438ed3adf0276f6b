/**
 * `npm run bench:burst`: by default the lender's night (issue 21 item 6, bench/burst/night.ts): A's
 * and B's books refreshed as their Schedules trigger them, each with its self-regulating window.
 * `--storm` (issue 21 item 5, this file's runMode): the nightly refresh burst of independent starts
 * in one minute, with priority and fairness on (the product's settings) and then off, to show what
 * they buy. What it does and prints: bench/burst/options.ts's USAGE; the stack: bench/burst/stack.ts;
 * the figures: bench/burst/figures.ts.
 *
 * Choices (and why), the storm's (the night shares the budget, the tenants, the service's limits
 * and the live connections):
 * - The budget: SERVICE_BUDGET_RPS 60 for the fleet, SERVICE_BUDGET_TENANT_RPS 40 per tenant,
 *   TENANT_WEIGHTS tenant-a:1,tenant-b:1. A refresh is 3 requests (Authorize, the accounts request,
 *   one poll), so A's 2,000 in one minute ask ~100 a second, far above the fleet's 60 and A's 40:
 *   the burst is budget-bound and Temporal holds the backlog. B's 200 ask ~10 a second, well
 *   within its fair share. The service's own limit per tenant is the tenant's budget (what the
 *   budget was agreed from) until A's is lowered to 10 a second, with a Retry-After of 5 s.
 * - "Midway": once half of A's connections ended, so that A has a backlog when its limit drops.
 * - The live connections belong to a lender of their own (tenant-live): their answers measure the
 *   live priority class, not A's throttle. Their scenario is token_code, two challenges answered
 *   by update. In the burst they start evenly over the time the budget needs for the burst's
 *   requests (at least the start window), so they meet it throughout.
 * - Baselines on the same stack before the burst: the live connections alone (started 0.5 s apart,
 *   "idle"), then B's refreshes alone at the same start times as in the burst ("alone").
 */
import { fmt, log } from './burst/output.js';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fetchScenarioListing, scenarioFor } from '../scripts/chaos/flows.js';
import { seededRandom } from '../scripts/chaos/random.js';
import { seconds, Timeline } from '../scripts/chaos/timeline.js';
import { runStackHarness } from '../scripts/lib/stack-harness.js';
import { ConnectionFailedError } from '../src/client/index.js';
import { cpus } from 'node:os';
import { setTimeout as sleepMs } from 'node:timers/promises';
import { allowedCores, coreCount, cpuSplitOf, describeSplit, pinDriver, type CpuSplit } from './burst/cpu-split.js';
import { busyShare, coreBusyShares, cpuBetween, cpuTotal, sampleCpu, sampleMachineCpu, type CpuPart, type CpuSample, type MachineCpu } from './burst/cpu.js';
import { floorRatioLine, measureFloorRatio } from './floor-ratio.js';
import {
  bucketRates,
  bucketSecondsFor,
  budgetFigures,
  countEnds,
  endStateOf,
  evenStarts,
  expectedBurstMs,
  medianOf,
  mergeRates,
  nightLine,
  ratio,
  scheduleStarts,
  spreadOf,
  summaryLine,
  targetsLine,
  type BudgetSpec,
  type RateBook,
  type RunFigures,
} from './burst/figures.js';
import { runNight, type NightResult } from './burst/night.js';
import { BurstArgumentError, parseBurstArgs, USAGE, type BurstOptions, type Mode } from './burst/options.js';
import {
  awaitEnds,
  LIVE_USERNAME,
  longWaits,
  mapLimit,
  observe,
  operateLive,
  startScheduled,
  throttleRuns,
  timeProfile,
  durationsOf,
  newLiveTimes,
  type Observed,
  type Phase,
  type Planned,
} from './burst/phases.js';
import {
  releaseStack,
  requestRates,
  savedLogin,
  startStack,
  TENANT_A,
  TENANT_B,
  TENANT_LIVE,
  TENANT_WEIGHTS,
  updateRateLimits,
  type Stack,
  type StackResources,
} from './burst/stack.js';

/** Requests a refresh makes (Authorize, accounts request, one poll) and a live connection (two answers more). */
const REFRESH_REQUESTS = 3;
const LIVE_REQUESTS = 5;
const IDLE_LIVE_SPACING_MS = 500;
const RATES_EVERY_MS = 20_000;
const PROGRESS_EVERY_MS = 15_000;
/** How long the stack's CPU is sampled with nothing running, before B's refreshes alone. */
const IDLE_CPU_SAMPLE_MS = 5_000;
/** The burst's slowest connections whose long waits are shown (from their histories). */
const SLOWEST_SHOWN = 3;
const LONG_WAIT_MS = 3_000;
const LISTED_LOST = 20;

interface RunResult {
  readonly mode: Mode;
  readonly figures: RunFigures;
  /** Stack CPU (ms) per connection of the burst phase. */
  readonly cpuPerConnectionMs: number;
}

async function runMode(mode: Mode, options: BurstOptions, resources: StackResources, cpuSplit: CpuSplit | undefined): Promise<RunResult> {
  const timeline = new Timeline();
  const runDir = await mkdtemp(join(tmpdir(), `aggregation-burst-${mode}-`));
  const runTag = `${Date.now().toString(36)}${options.seed.toString(36)}`.slice(-10);
  const random = seededRandom(options.seed);
  // The service counts as a bucket of its rate holding one second's worth (the workers' default, SERVICE_BUDGET_MODE=bucket).
  const budget: BudgetSpec = {
    totalRps: options.budgetRps,
    tenantRps: options.tenantBudgetRps,
    mode: 'bucket',
    weights: mode === 'on' ? TENANT_WEIGHTS : new Map(),
  };
  log('');
  log(
    `== burst, priority and fairness ${mode.toUpperCase()}: seed ${options.seed}; A ${options.a}, B ${options.b}, live ${options.live}; ${options.workers} workers; run directory ${runDir}`,
  );
  const stack = await startStack(
    {
      mode,
      workers: options.workers,
      unattendedWorkers: options.unattendedWorkers,
      unattendedNice: options.unattendedNice,
      unattendedInProcess: options.unattendedInProcess,
      budgetRps: options.budgetRps,
      tenantBudgetRps: options.tenantBudgetRps,
      runDir,
      runTag,
      timeline,
      cpuSplit,
    },
    resources,
  );
  log(
    `stack: Temporal server ${stack.serverVersion} on PostgreSQL, ${options.workers} workers; SERVICE_BUDGET_RPS ${options.budgetRps}, SERVICE_BUDGET_TENANT_RPS ${options.tenantBudgetRps}` +
      (mode === 'on'
        ? `, TENANT_WEIGHTS ${[...TENANT_WEIGHTS].map(([tenant, weight]) => `${tenant}:${weight}`).join(',')}; priority keys live ${stack.policy.keys.live}, scheduled ${stack.policy.keys.scheduled}; matching.enableFairness true`
        : '; every priority key 3, no tenant weights; matching.enableFairness false') +
      ' (one partition per queue in both runs)',
  );
  // What the kernel holds each side to, read back rather than assumed.
  if (cpuSplit && resources.server?.pid)
    log(
      `cpu split: the Temporal server may run on core ${allowedCores(resources.server.pid)}, this driver and its children (workers, sandbox) on ${allowedCores(process.pid)}`,
    );
  const limits = await updateRateLimits(stack.sandboxUrl, { mode: 'bucket', burst: null, defaultPerSecond: Math.max(1, Math.floor(options.tenantBudgetRps)) });
  log(`service: every tenant limited to a bucket of ${limits.defaultPerSecond}/s holding one second's worth (its budget) until A's limit is lowered`);

  const listing = await fetchScenarioListing(stack.sandboxUrl);
  const liveScenario = scenarioFor(listing, LIVE_USERNAME);
  const [loginsA, loginsB] = await Promise.all([
    mapLimit(
      Array.from({ length: options.a }, (_, index) => index),
      16,
      (index) => savedLogin(stack.sandboxUrl, TENANT_A, index),
    ),
    mapLimit(
      Array.from({ length: options.b }, (_, index) => index),
      16,
      (index) => savedLogin(stack.sandboxUrl, TENANT_B, index),
    ),
  ]);
  timeline.mark(`${loginsA.length} saved logins of ${TENANT_A}, ${loginsB.length} of ${TENANT_B}`);

  // The service's per-second counts, read while they are kept (600 s) and merged.
  const book: RateBook = new Map();
  const readRates = async () => mergeRates(book, await requestRates(stack.sandboxUrl, 120));
  const ratesTimer = setInterval(() => void readRates().catch(() => undefined), RATES_EVERY_MS);
  const planned: Planned[] = [];
  const deadline = (lastStartAt: number) => () => lastStartAt + options.deadlineMs;

  try {
    // ---- baseline 1: the live connections alone -------------------------------------------------
    const idleTimes = newLiveTimes();
    let since = new Date().toISOString();
    let origin = Date.now();
    const idleOffsets = evenStarts(options.live, (options.live - 1) * IDLE_LIVE_SPACING_MS);
    const idle = await operateLive(stack, TENANT_LIVE, 'idle', liveScenario, idleOffsets, origin, idleTimes);
    planned.push(...idle);
    await awaitEnds(stack, since, new Map([[TENANT_LIVE, idle.length]]), deadline(Date.now()), () => undefined);
    const idleObserved = await observe(stack, since, idle);
    const liveIdle = spreadOf(durationsOf(idleTimes.answers));
    log(
      `idle: ${idle.length} live connections alone, ${liveIdle.count} answers: p50 ${fmt(liveIdle.p50)} ms, p99 ${fmt(liveIdle.p99)} ms; first challenge p50 ${fmt(spreadOf(durationsOf(idleTimes.firstChallenges)).p50)} ms`,
    );

    // ---- baseline 2: tenant B's refresh alone, at the burst's start times -------------------------
    const bOffsets = scheduleStarts(options.b, options.windowMs, random);
    // The stack's CPU while nothing runs (polls, timers, housekeeping), so a refresh's own cost is told
    // apart; sampled before B's start times are counted from, so none of them passes meanwhile.
    const idleBefore = sampleCpu(stack.postgresDataDir);
    await sleepMs(IDLE_CPU_SAMPLE_MS);
    const idleUsed = cpuBetween(idleBefore, sampleCpu(stack.postgresDataDir));
    const idleCpuPerSecondMs = (cpuTotal(idleUsed) * 1000) / IDLE_CPU_SAMPLE_MS;
    const cpuBeforeAlone = sampleCpu(stack.postgresDataDir);
    since = new Date().toISOString();
    origin = Date.now();
    const alone = await startScheduled(stack, TENANT_B, 'b', 'alone', loginsB, bOffsets, origin);
    planned.push(...alone);
    await awaitEnds(stack, since, new Map([[TENANT_B, alone.filter((entry) => !entry.problem).length]]), deadline(Date.now()), () => undefined);
    // What one refresh costs the stack with nothing else running: the machine's capacity in refreshes a second.
    // Per part (the idle's share of each taken off), so a CPU split can say which side bounds it; the parts sum to the stack's.
    const aloneMs = Date.now() - origin;
    const aloneUsed = cpuBetween(cpuBeforeAlone, sampleCpu(stack.postgresDataDir));
    const alonePartMs = (name: CpuPart) => (aloneUsed[name] - (idleUsed[name] * aloneMs) / IDLE_CPU_SAMPLE_MS) / alone.length;
    const aloneSidesMs = { temporal: alonePartMs('server') + alonePartMs('postgres'), rest: alonePartMs('workers') + alonePartMs('sandbox') };
    const aloneCpuPerRefreshMs = aloneSidesMs.temporal + aloneSidesMs.rest;
    const aloneObserved = await observe(stack, since, alone);
    const bAloneMedianS = medianOf(durationsS(alone, aloneObserved));
    log(
      `alone: ${alone.length} refreshes of ${TENANT_B} started over ${seconds(options.windowMs)}: median start→end ${fmt(bAloneMedianS, 2)} s; stack CPU ${fmt(aloneCpuPerRefreshMs, 1)} ms a refresh (beyond its idle ${fmt(idleCpuPerSecondMs, 0)} ms a second)`,
    );

    // ---- the burst ---------------------------------------------------------------------------------
    const aOffsets = scheduleStarts(options.a, options.windowMs, random);
    const burstRequests = (options.a + options.b) * REFRESH_REQUESTS + options.live * LIVE_REQUESTS;
    const liveSpreadMs = expectedBurstMs(burstRequests, options.budgetRps, options.windowMs);
    const liveOffsets = evenStarts(options.live, liveSpreadMs);
    const burstTimes = newLiveTimes();
    await readRates().catch(() => undefined);
    since = new Date().toISOString();
    origin = Date.now();
    const burstFromSecond = Math.floor(origin / 1000);
    const cpuBefore = sampleCpu(stack.postgresDataDir);
    const machineBefore = sampleMachineCpu();
    // The stack's and the machine's CPU over the start window, when every start of A and B arrives.
    let windowCpu: { stack: CpuSample; machine: MachineCpu } | undefined;
    const windowTimer = setTimeout(() => (windowCpu = { stack: sampleCpu(stack.postgresDataDir), machine: sampleMachineCpu() }), options.windowMs);
    timeline.mark(
      `burst: ${options.a} of ${TENANT_A} and ${options.b} of ${TENANT_B} starting over ${seconds(options.windowMs)}, ${options.live} live over ${seconds(liveSpreadMs)}`,
    );
    log(
      `burst: ${options.a} refreshes of ${TENANT_A} and ${options.b} of ${TENANT_B} start over ${seconds(options.windowMs)}; ${options.live} live connections over ${seconds(liveSpreadMs)} (~${burstRequests} requests at the budget's steady ${options.budgetRps / 2}/s)`,
    );
    let lastStartAt = Date.now();
    const startsDone = Promise.all([
      startScheduled(stack, TENANT_A, 'a', 'burst', loginsA, aOffsets, origin),
      startScheduled(stack, TENANT_B, 'b', 'burst', loginsB, bOffsets, origin),
      operateLive(stack, TENANT_LIVE, 'burst', liveScenario, liveOffsets, origin, burstTimes),
    ]).finally(() => (lastStartAt = Date.now()));
    let startsSettled = false;
    void startsDone.then(() => (startsSettled = true));
    const expected = new Map([
      [TENANT_A, options.a],
      [TENANT_B, options.b],
      [TENANT_LIVE, options.live],
    ]);
    let loweredAt: number | undefined;
    let lastProgress = Date.now();
    const ended = await awaitEnds(
      stack,
      since,
      expected,
      () => (startsSettled ? lastStartAt + options.deadlineMs : Infinity),
      async (counts) => {
        const endedA = counts.get(TENANT_A) ?? 0;
        if (loweredAt === undefined && endedA >= Math.ceil(options.a / 2)) {
          loweredAt = Date.now();
          await updateRateLimits(stack.sandboxUrl, { tenants: { [TENANT_A]: options.aLimit }, retryAfterSeconds: options.retryAfterS });
          timeline.mark(
            `midway (${endedA}/${options.a} of A ended): the service lowered ${TENANT_A}'s limit to ${options.aLimit}/s, Retry-After ${options.retryAfterS} s`,
          );
          log(
            `  +${seconds(loweredAt - origin)} midway: ${endedA}/${options.a} of A ended; the service now limits ${TENANT_A} to ${options.aLimit}/s (Retry-After ${options.retryAfterS} s)`,
          );
        }
        if (Date.now() - lastProgress >= PROGRESS_EVERY_MS) {
          lastProgress = Date.now();
          log(
            `  +${seconds(lastProgress - origin)} ended: A ${endedA}/${options.a}, B ${counts.get(TENANT_B) ?? 0}/${options.b}, live ${counts.get(TENANT_LIVE) ?? 0}/${options.live}; live answers so far ${burstTimes.answers.length}`,
          );
        }
      },
    );
    const [burstA, burstB, burstLive] = await startsDone;
    const burstEndMs = Date.now();
    clearTimeout(windowTimer);
    const cpuAfter = sampleCpu(stack.postgresDataDir);
    await readRates();
    clearInterval(ratesTimer);
    const burst = [...burstA, ...burstB, ...burstLive];
    planned.push(...burst);
    const burstObserved = await observe(stack, since, burst);
    timeline.mark(`burst over: ${[...ended].map(([tenant, count]) => `${tenant} ${count} ended`).join(', ')}`);

    // ---- figures -----------------------------------------------------------------------------------
    const observed = new Map<string, Observed>([...idleObserved, ...aloneObserved, ...burstObserved]);
    const states = planned.map((entry) => endStateOf(observed.get(entry.workflowId)?.status));
    const ends = countEnds(states);
    const budgetOf = budgetFigures(book, budget, burstFromSecond, Math.floor(burstEndMs / 1000));
    const live = spreadOf(durationsOf(burstTimes.answers));
    const bMedianS = medianOf(durationsS(burstB, burstObserved));
    const aDurations = durationsS(burstA, burstObserved);
    const figures: RunFigures = { ...ends, live, liveIdle, bMedianS, bAloneMedianS, budget: budgetOf };
    const cpuUsed = cpuBetween(cpuBefore, cpuAfter);
    const cpuPerConnectionMs = cpuTotal(cpuUsed) / burst.length;

    log('');
    log(`Results, priority and fairness ${mode}`);
    for (const phase of ['idle', 'alone', 'burst'] as Phase[]) {
      for (const group of ['a', 'b', 'live'] as const) {
        const ofGroup = planned.filter((entry) => entry.phase === phase && entry.group === group);
        if (ofGroup.length === 0) continue;
        const counts = countEnds(ofGroup.map((entry) => endStateOf(observed.get(entry.workflowId)?.status)));
        log(
          `  ${phase.padEnd(5)} ${group.padEnd(4)} ${String(counts.connections).padStart(5)} connections: ${counts.completed} completed, ${counts.failed} failed, ${counts.lost} lost`,
        );
      }
    }
    const notCompleted = planned.filter((entry) => endStateOf(observed.get(entry.workflowId)?.status) !== 'completed');
    for (const entry of notCompleted.filter((candidate) => endStateOf(observed.get(candidate.workflowId)?.status) === 'lost').slice(0, LISTED_LOST)) {
      log(`  LOST: ${entry.workflowId} (${observed.get(entry.workflowId)?.status ?? 'not found'})${entry.problem ? `: ${entry.problem}` : ''}`);
    }
    for (const [why, ids] of await failuresByCause(
      stack,
      notCompleted.filter((entry) => endStateOf(observed.get(entry.workflowId)?.status) === 'failed'),
    )) {
      log(`  FAILED: ${ids.length} ${why}, e.g. ${ids.slice(0, 3).join(', ')}`);
    }
    for (const problem of [...idleTimes.problems, ...burstTimes.problems].slice(0, 20)) log(`  operator: ${problem}`);
    log(
      `  live answers: burst ${live.count}, p50 ${fmt(live.p50)} ms, p99 ${fmt(live.p99)} ms; idle ${liveIdle.count}, p50 ${fmt(liveIdle.p50)} ms, p99 ${fmt(liveIdle.p99)} ms`,
    );
    const firstChallenge = spreadOf(durationsOf(burstTimes.firstChallenges));
    log(
      `  live first challenge (start → challenge): burst p50 ${fmt(firstChallenge.p50)} ms, p99 ${fmt(firstChallenge.p99)} ms; idle p50 ${fmt(spreadOf(durationsOf(idleTimes.firstChallenges)).p50)} ms`,
    );
    log(`  tenant B start→end: burst median ${fmt(bMedianS, 2)} s, alone ${fmt(bAloneMedianS, 2)} s (${fmt(ratio(bMedianS, bAloneMedianS), 2)}x)`);
    const profileOf = (entries: readonly Planned[]) =>
      timeProfile(
        stack,
        entries.map((entry) => entry.workflowId),
      ).catch((error: unknown) => `histories not read: ${error instanceof Error ? error.message : String(error)}`);
    log(`  tenant B's time, alone: ${await profileOf(alone)}`);
    log(`  tenant B's time, burst: ${await profileOf(burstB)}`);
    log(
      `  tenant A start→end: median ${fmt(medianOf(aDurations), 1)} s, longest ${fmt(Math.max(...aDurations), 1)} s; the burst took ${seconds(burstEndMs - origin)}${loweredAt === undefined ? "; A's limit was never lowered (half of A never ended)" : `, A's limit lowered at +${seconds(loweredAt - origin)}`}`,
    );
    const perTenant = (map: ReadonlyMap<string, number>) => [...map].map(([tenant, value]) => `${tenant} ${value}`).join(', ') || 'none';
    log(
      `  service, burst (${budgetOf.busySeconds} busy seconds): ${budgetOf.accepted} accepted, ${budgetOf.refused} refused (${perTenant(budgetOf.refusedByTenant)}); ` +
        `most in one second: fleet ${budgetOf.maxFleetPerSecond} (budget ${budget.totalRps}), ${perTenant(budgetOf.maxTenantPerSecond)} (budget ${budget.tenantRps} per tenant of weight 1)`,
    );
    const toSecond = Math.floor(burstEndMs / 1000);
    const bucketS = bucketSecondsFor(toSecond - burstFromSecond + 1);
    log(`  service per ${bucketS} s of the burst (accepted/refused):`);
    for (const bucket of bucketRates(book, burstFromSecond, toSecond, bucketS)) {
      log(
        `    +${String(bucket.offsetS).padStart(4)}s  ${[...bucket.perTenant].map(([tenant, count]) => `${tenant} ${count.accepted}/${count.refused}`).join(', ')}`,
      );
    }
    log(
      `  budget exceeded: fleet in ${budgetOf.fleetExceeded} s, a tenant in ${[...budgetOf.tenantExceeded.values()].reduce((sum, value) => sum + value, 0)} s (${perTenant(budgetOf.tenantExceeded)}); either: ${budgetOf.exceeded} s`,
    );
    log(`  tenant throttle: ${await throttleRuns(stack)}`);
    for (const slow of slowest(burst, burstObserved, SLOWEST_SHOWN)) {
      const waits = await longWaits(stack, slow.workflowId, LONG_WAIT_MS).catch((error: unknown) => [
        `history not read: ${error instanceof Error ? error.message : String(error)}`,
      ]);
      log(`  slow: ${slow.workflowId} took ${fmt(slow.seconds, 1)} s; its longest waits (over ${LONG_WAIT_MS / 1000} s): ${waits.join('; ') || 'none'}`);
    }
    const part = (name: CpuPart) => `${name} ${fmt(cpuUsed[name] / 1000, 1)} s`;
    log(`  cpu, burst: ${part('workers')}, ${part('server')}, ${part('postgres')}, ${part('sandbox')}; ${fmt(cpuPerConnectionMs, 1)} ms per connection`);
    log(
      `  ${startWindowLine({ windowCpu, cpuBefore, machineBefore, windowMs: options.windowMs, refreshes: options.a + options.b, aloneCpuPerRefreshMs, aloneSidesMs, cpuSplit })}`,
    );
    log(`  targets: ${targetsLine(figures)}`);
    log('Timeline');
    for (const entry of timeline.entries()) log(`  +${seconds(entry.atMs).padStart(7)}  ${entry.text}`);
    log(`burst (${mode}): ${summaryLine(figures, cpuSplit).slice('burst: '.length)}`);
    return { mode, figures, cpuPerConnectionMs };
  } finally {
    clearInterval(ratesTimer);
    await releaseStack(resources, log);
    if (options.keepLogs) log(`burst: run directory kept: ${runDir}`);
    else await rm(runDir, { recursive: true, force: true });
  }
}

/**
 * How busy the start window kept the machine, against what it can carry: alone, a refresh costs the
 * stack `aloneCpuPerRefreshMs`, so the machine's cores finish at most cores × 1000 / that a second.
 * A window that starts more than that builds a backlog only a fully busy machine drains, and on a
 * fully busy machine every step of every connection, the live ones included, waits for a core.
 */
function startWindowLine({
  windowCpu,
  cpuBefore,
  machineBefore,
  windowMs,
  refreshes,
  aloneCpuPerRefreshMs,
  aloneSidesMs,
  cpuSplit,
}: {
  windowCpu: { stack: CpuSample; machine: MachineCpu } | undefined;
  cpuBefore: CpuSample;
  machineBefore: MachineCpu;
  windowMs: number;
  refreshes: number;
  aloneCpuPerRefreshMs: number;
  /** A refresh's CPU alone on each side of a split: the server and PostgreSQL, the workers and the sandbox. */
  aloneSidesMs: { temporal: number; rest: number };
  cpuSplit: CpuSplit | undefined;
}): string {
  // The machine's cores, not this process's (pinned to its side under a split, it sees fewer).
  const cores = cpus().length;
  const arriving = refreshes / (windowMs / 1000);
  const capacity = cpuSplit ? splitCapacity(cpuSplit, aloneSidesMs) : { rps: (cores * 1000) / aloneCpuPerRefreshMs, said: '' };
  const carry =
    `alone a refresh costs the stack ${fmt(aloneCpuPerRefreshMs, 1)} ms, so ${cores} cores carry at most ${fmt(capacity.rps, 1)} refreshes a second${capacity.said}; ` +
    `the window started ${fmt(arriving, 1)} a second (${fmt(arriving / capacity.rps, 1)}x)`;
  if (!windowCpu) return `cpu, start window: the burst ended before the window did; ${carry}`;
  const used = cpuBetween(cpuBefore, windowCpu.stack);
  const part = (name: CpuPart) => `${name} ${fmt(used[name] / 1000, 1)} s`;
  return (
    `cpu, start window (first ${seconds(windowMs)}): stack ${fmt(cpuTotal(used) / 1000, 1)} s (${part('workers')}, ${part('server')}, ${part('postgres')}, ${part('sandbox')}), ` +
    `machine ${fmt(100 * busyShare(machineBefore, windowCpu.machine), 0)}% busy on ${cores} cores (${coreBusyShares(machineBefore, windowCpu.machine)
      .map((share, core) => `core ${core} ${fmt(100 * share, 0)}%`)
      .join(', ')}); ${carry}`
  );
}

/** Under a split each side carries its own share; the stack carries what the busier side lets through. */
function splitCapacity(split: CpuSplit, aloneSidesMs: { temporal: number; rest: number }): { rps: number; said: string } {
  const temporalRps = (coreCount(split.temporal) * 1000) / aloneSidesMs.temporal;
  const restRps = (coreCount(split.rest) * 1000) / aloneSidesMs.rest;
  return {
    rps: Math.min(temporalRps, restRps),
    said:
      ` (Temporal's core ${split.temporal} ${fmt(temporalRps, 1)} at ${fmt(aloneSidesMs.temporal, 1)} ms of the server's and PostgreSQL's a refresh, ` +
      `the rest's ${split.rest} ${fmt(restRps, 1)} at ${fmt(aloneSidesMs.rest, 1)} ms of the workers' and the sandbox's)`,
  };
}

/** Start → end (s) of the connections that ended. */
function durationsS(planned: readonly Planned[], observed: ReadonlyMap<string, Observed>): number[] {
  return planned.flatMap((entry) => {
    const seen = observed.get(entry.workflowId);
    return seen?.startMs !== undefined && seen.closeMs !== undefined ? [(seen.closeMs - seen.startMs) / 1000] : [];
  });
}

/** The `count` connections that took longest from start to end (or never ended: longest of all). */
function slowest(planned: readonly Planned[], observed: ReadonlyMap<string, Observed>, count: number): { workflowId: string; seconds: number }[] {
  return planned
    .map((entry) => {
      const seen = observed.get(entry.workflowId);
      const end = seen?.closeMs ?? Date.now();
      return { workflowId: entry.workflowId, seconds: seen?.startMs === undefined ? Infinity : (end - seen.startMs) / 1000 };
    })
    .sort((x, y) => y.seconds - x.seconds)
    .slice(0, count);
}

/** Failed connections grouped by their failure type and service code (from each one's result). */
async function failuresByCause(stack: Stack, failed: readonly Planned[]): Promise<Map<string, string[]>> {
  const groups = new Map<string, string[]>();
  await mapLimit(failed, 8, async (entry) => {
    let why: string;
    try {
      await stack.connections.result(entry.workflowId, { giveUpAfterMs: 10_000 });
      why = 'completed after all';
    } catch (error) {
      why =
        error instanceof ConnectionFailedError
          ? `${error.type}${error.serviceCode ? ` (${error.serviceCode})` : ''}`
          : error instanceof Error
            ? error.name
            : String(error);
    }
    groups.set(why, [...(groups.get(why) ?? []), entry.workflowId]);
  });
  return groups;
}

/** Both runs (or the one asked for), then the summary lines. */
async function runBoth(options: BurstOptions, resources: StackResources): Promise<boolean> {
  // What one connection costs the worker against what Temporal itself costs (issue 21, item 7),
  // measured before the stack starts: the machine is as quiet as this run will find it.
  const floor = options.floorRuns > 0 ? floorRatioLine(await measureFloorRatio(options.floorRuns)) : undefined;
  if (floor) log(floor);
  if (options.scenario === 'night') {
    const nights: NightResult[] = [];
    for (const mode of options.modes) {
      try {
        nights.push(await runNight(mode, options, resources));
      } catch (error) {
        process.stderr.write(`burst: the night (${mode}) could not complete: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
        await releaseStack(resources, log);
        return false;
      }
    }
    log('');
    const onNight = nights.find((result) => result.mode === 'on');
    const offNight = nights.find((result) => result.mode === 'off');
    if (onNight && offNight) log(`night (off): ${nightLine(offNight.figures).slice('night: '.length)}`);
    const lastNight = onNight ?? offNight;
    if (!lastNight) return false;
    if (floor) log(floor);
    log(nightLine(lastNight.figures));
    return nights.every((result) => result.figures.lost === 0 && result.figures.failed === 0 && !result.figures.nondeterminism);
  }
  // After the floor (measured on every core): from here on this driver and every child it starts run
  // on the rest's cores, and the server and PostgreSQL are moved to Temporal's as they start.
  const cpuSplit = options.cpuSplit ? cpuSplitOf() : undefined;
  if (options.cpuSplit && !cpuSplit) throw new BurstArgumentError('--cpu-split on needs at least 2 cores');
  if (cpuSplit) pinDriver(cpuSplit);
  log(`cpu split: ${describeSplit(cpuSplit)}`);
  const results: RunResult[] = [];
  for (const mode of options.modes) {
    try {
      results.push(await runMode(mode, options, resources, cpuSplit));
    } catch (error) {
      process.stderr.write(`burst: the ${mode} run could not complete: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      await releaseStack(resources, log);
      return false;
    }
  }
  log('');
  const on = results.find((result) => result.mode === 'on');
  const off = results.find((result) => result.mode === 'off');
  if (on && off) {
    log(`burst (off): ${summaryLine(off.figures, cpuSplit).slice('burst: '.length)}`);
    log(
      `cpu ratio on/off ${fmt(ratio(on.cpuPerConnectionMs, off.cpuPerConnectionMs), 2)}x (stack CPU per connection of the burst: on ${fmt(on.cpuPerConnectionMs, 1)} ms, off ${fmt(off.cpuPerConnectionMs, 1)} ms)`,
    );
  }
  const last = on ?? off;
  if (!last) return false;
  if (floor) log(floor);
  log(summaryLine(last.figures, cpuSplit));
  return results.every((result) => result.figures.lost === 0 && result.figures.failed === 0);
}

runStackHarness({
  name: 'burst',
  usage: USAGE,
  parse: parseBurstArgs,
  isArgumentError: (error): error is BurstArgumentError => error instanceof BurstArgumentError,
  held: {},
  run: runBoth,
  release: (resources) => releaseStack(resources, log),
});
