/**
 * The lender's night (issue 21, item 6): `npm run bench:burst` without --storm. Tenant A's book and
 * tenant B's are enrolled (one bookEntryWorkflow a login), each gets its book Schedule at a far-off
 * daily time, and both Schedules are triggered together: each starts a bookRefreshWorkflow whose
 * self-regulating window (window-controller.ts, with the client's BOOK_WINDOW_* defaults: nothing here is
 * tuned for this machine) decides how many connections it keeps in flight. Live connections are
 * answered throughout; once half of A's book is done the service lowers A's limit below its budget.
 *
 * Baselines on the same stack first: the live connections alone ("idle"), then each tenant's book
 * alone (B's whole book and a sample of A's, in a cadence of their own, so their logins are others
 * than the night's), which also tells what a refresh costs the stack and so what the cores carry.
 *
 * Figures (bench/burst/figures.ts): lost = a login with no outcome in its refresh's report (or, when
 * the refresh did not end by the deadline, not done by then) and a live connection not ended;
 * failed = an outcome other than refreshed, and a live connection that did not complete; each
 * tenant's refresh median from its connection children's start → close (visibility) against its
 * book alone; throughput and B's share from the children's close times over the interval both
 * books were running; the budget from the sandbox's per-second request counts.
 */
import { fmt, log } from './output.js';
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleepMs } from 'node:timers/promises';
import { fetchScenarioListing, scenarioFor } from '../../scripts/chaos/flows.js';
import { seconds, Timeline } from '../../scripts/chaos/timeline.js';
import { RefreshNotUnattendedError, type BookProgress, type BookReport } from '../../src/client/index.js';
import { bookScheduleId } from '../../src/contract/book/book-definitions.js';
import { CONNECTION_WORKFLOW_TYPE } from '../../src/contract/connection/connection-definitions.js';
import { CustomerIdKey } from '../../src/contract/search-attributes.js';
import { cpuBetween, cpuTotal, sampleCpu, waitForQuietStack, type CpuPart } from './cpu.js';
import {
  bothRunning,
  bucketRates,
  bucketSecondsFor,
  budgetFigures,
  countEnds,
  endStateOf,
  evenStarts,
  expectedNightMs,
  medianOf,
  mergeRates,
  nightLine,
  nightTargetsLine,
  ratio,
  spreadOf,
  weightShare,
  type BudgetSpec,
  type NightFigures,
  type RateBook,
} from './figures.js';
import type { BurstOptions, Mode } from './options.js';
import { OtherLoad } from './other-load.js';
import { refreshReplayLine, replayRefreshes } from './refresh-replay.js';
import { awaitEnds, LIVE_USERNAME, mapLimit, observe, operateLive, spanProfile, throttleRuns, durationsOf, newLiveTimes, type Observed } from './phases.js';
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
} from './stack.js';

/** The night's cadence (its Schedule: `book-<tenant>:nightly`) and the baselines' (run by hand). */
const NIGHT_CADENCE = 'nightly';
const ALONE_CADENCE = 'alone';
/** Requests a refresh makes (Authorize, accounts request, one poll). */
const REFRESH_REQUESTS = 3;
/** Enrolments in flight at once (each a signal-with-start). */
const ENROL_CONCURRENCY = 16;
const ENROL_ATTEMPTS = 5;
/** Every connection polls once a second while its data is pending; nothing times out within a run. */
const TIMING = { pollIntervalMs: 1_000, pollTimeoutMs: 2 * 60 * 60_000 } as const;
const IDLE_LIVE_SPACING_MS = 500;
/** The slowest live answers and first challenges whose connections' histories are read for where the time went. */
const SLOW_SPANS_SHOWN = 3;
const IDLE_CPU_SAMPLE_MS = 5_000;
/** After enrolling: the stack counts as quiet under this much CPU a second (ms), two samples in a row. */
const QUIET_STACK_MS_PER_SECOND = 200;
const QUIET_SAMPLE_MS = 3_000;
const QUIET_MAX_MS = 180_000;
const RATES_EVERY_MS = 20_000;
const FOLLOW_EVERY_MS = 2_000;
const PROGRESS_EVERY_MS = 15_000;
/** How long a triggered Schedule's run or an enrolment's visibility may take to show. */
const SHOW_UP_MS = 60_000;

const describeError = (error: unknown) => (error instanceof Error ? `${error.name}: ${error.message}` : String(error));

/** A connection child of a book refresh, as visibility lists it. */
interface Child extends Observed {
  readonly workflowId: string;
}

/** One refresh of a book, followed to its end (or the deadline). */
interface Followed {
  readonly refreshWorkflowId: string;
  readonly report?: BookReport | undefined;
  /** The last progress read (the report's counts once it ended). */
  readonly last?: BookProgress | undefined;
}

interface BookOutcomes {
  /** Planned logins with no outcome (none in the report, or not done by the deadline). */
  readonly lost: number;
  /** Outcomes other than refreshed. */
  readonly failed: number;
  readonly refreshed: number;
  /** Median durationMs of the refreshed outcomes, as the refresh saw them (ask to start → end). */
  readonly reportMedianMs: number;
  readonly problems: readonly string[];
}

export interface NightResult {
  readonly mode: Mode;
  readonly figures: NightFigures;
}

/** Enrols every login of each book, ENROL_CONCURRENCY at a time; the logins it could not enrol, with why. */
async function enrolBooks(stack: Stack, books: readonly { tenant: string; cadence: string; loginIds: readonly string[] }[]): Promise<string[]> {
  const items = books.flatMap(({ tenant, cadence, loginIds }) => loginIds.map((loginId) => ({ tenant, cadence, loginId })));
  const problems: string[] = [];
  await mapLimit(items, ENROL_CONCURRENCY, async ({ tenant, cadence, loginId }) => {
    for (let attempt = 1; attempt <= ENROL_ATTEMPTS; attempt += 1) {
      try {
        await stack.connections.books.enrol({ customerId: tenant, loginId, cadence, session: 'cached', products: { accountsDetail: {} }, timing: TIMING });
        return;
      } catch (error) {
        if (error instanceof RefreshNotUnattendedError || attempt === ENROL_ATTEMPTS) {
          problems.push(`${tenant}:${loginId} (${cadence}): ${describeError(error)}`);
          return;
        }
        await sleepMs(1_000);
      }
    }
  });
  // The refresh reads its book through visibility: wait until each book shows every enrolment.
  const until = Date.now() + SHOW_UP_MS;
  for (const { tenant, cadence, loginIds } of books) {
    const expected = loginIds.length - problems.filter((problem) => problem.startsWith(`${tenant}:`) && problem.includes(`(${cadence})`)).length;
    while ((await stack.connections.books.count({ customerId: tenant, cadence }).catch(() => -1)) < expected && Date.now() < until) await sleepMs(500);
  }
  return problems;
}

/**
 * Follows refreshes by their progress query every FOLLOW_EVERY_MS until each has its report or the
 * deadline passed; `tick` sees the latest progress of each. A query or report refused (busy, or
 * the report not written yet) is asked again at the next tick: a failed wait is not a lost login.
 */
async function followRefreshes(
  stack: Stack,
  ids: ReadonlyMap<string, string>,
  deadlineAt: () => number,
  tick: (last: ReadonlyMap<string, BookProgress>) => Promise<void> | void,
): Promise<Map<string, Followed>> {
  const reports = new Map<string, BookReport>();
  const last = new Map<string, BookProgress>();
  for (;;) {
    await Promise.all(
      [...ids]
        .filter(([tenant]) => !reports.has(tenant))
        .map(async ([tenant, refreshWorkflowId]) => {
          let ended: boolean;
          try {
            const progress = await stack.connections.books.progress(refreshWorkflowId);
            last.set(tenant, progress);
            ended = progress.status === 'completed' || progress.status === 'cancelled';
          } catch {
            // Busy, or the refresh has closed: a query of a closed refresh replays its history and is
            // refused on this stack (the workers log "Failing legacy query request"), so the report says.
            ended = true;
          }
          if (!ended) return;
          try {
            const report = await stack.connections.books.report(refreshWorkflowId);
            reports.set(tenant, report);
            last.set(tenant, { ...report, inFlight: 0, updatedAt: report.endedAt });
          } catch {
            // Still running (BookReportNotReadyError), or busy: the next tick.
          }
        }),
    );
    await tick(last);
    if (reports.size === ids.size || Date.now() > deadlineAt()) break;
    await sleepMs(FOLLOW_EVERY_MS);
  }
  return new Map([...ids].map(([tenant, refreshWorkflowId]) => [tenant, { refreshWorkflowId, report: reports.get(tenant), last: last.get(tenant) }]));
}

/** The refresh of a book the trigger (or run) started at or after `sinceMs`. */
async function refreshStartedSince(stack: Stack, tenant: string, cadence: string, sinceMs: number): Promise<string> {
  const until = Date.now() + SHOW_UP_MS;
  for (;;) {
    const found = (await stack.connections.books.refreshes({ customerId: tenant, cadence, limit: 5 }).catch(() => [])).find(
      (refresh) => Date.parse(refresh.startedAt) >= sinceMs - 1_000,
    );
    if (found) return found.refreshWorkflowId;
    if (Date.now() > until) throw new Error(`no refresh of ${tenant}'s ${cadence} book started within ${SHOW_UP_MS / 1000} s`);
    await sleepMs(500);
  }
}

/** The connection children of one night of a tenant's book (ids `refresh-<tenant>:<login>-<night>`). */
async function childrenOf(stack: Stack, tenant: string, night: string | undefined, sinceIso: string): Promise<Child[]> {
  const children: Child[] = [];
  if (night === undefined) return children;
  const query = `WorkflowType = "${CONNECTION_WORKFLOW_TYPE}" AND ${CustomerIdKey.name} = "${tenant}" AND StartTime >= "${sinceIso}"`;
  for await (const info of stack.client.workflow.list({ query, pageSize: 1_000 })) {
    if (!info.workflowId.startsWith(`refresh-${tenant}:`) || !info.workflowId.endsWith(`-${night}`)) continue;
    children.push({ workflowId: info.workflowId, status: info.status.name, startMs: info.startTime.getTime(), closeMs: info.closeTime?.getTime() });
  }
  return children;
}

/** Start → close (s) of the children that completed. */
function completedDurationsS(children: readonly Child[]): number[] {
  return children.flatMap((child) =>
    child.status === 'COMPLETED' && child.startMs !== undefined && child.closeMs !== undefined ? [(child.closeMs - child.startMs) / 1000] : [],
  );
}

/** What became of each planned login: from the report's pages, else (no report) from the last progress. */
async function outcomesOf(stack: Stack, planned: readonly string[], followed: Followed): Promise<BookOutcomes> {
  const { report, last } = followed;
  const problems: string[] = [];
  if (!report) {
    const done = last?.counts.done ?? 0;
    return {
      lost: Math.max(0, planned.length - done),
      failed: last ? last.counts.done - last.counts.refreshed : 0,
      refreshed: last?.counts.refreshed ?? 0,
      reportMedianMs: NaN,
      problems: [`${followed.refreshWorkflowId} did not end by the deadline (${done} of ${planned.length} done)`],
    };
  }
  const outcomeOf = new Map<string, string>();
  const durations: number[] = [];
  for (let page = 1; page <= report.pages.length; page += 1) {
    try {
      for (const outcome of (await stack.connections.books.reportPage(followed.refreshWorkflowId, page)).outcomes) {
        outcomeOf.set(outcome.loginId, outcome.outcome);
        if (outcome.outcome === 'refreshed' && outcome.durationMs !== undefined) durations.push(outcome.durationMs);
        if (outcome.outcome !== 'refreshed' && problems.length < 10)
          problems.push(
            `${outcome.loginId}: ${outcome.outcome}${outcome.failureType ? ` (${outcome.failureType})` : ''}${outcome.problem ? `: ${outcome.problem}` : ''}`,
          );
      }
    } catch (error) {
      problems.push(`report page ${page} not read: ${describeError(error)}`);
    }
  }
  const lost = planned.filter((loginId) => !outcomeOf.has(loginId)).length;
  return { lost, failed: report.counts.done - report.counts.refreshed, refreshed: report.counts.refreshed, reportMedianMs: medianOf(durations), problems };
}

/** The window over a night: from the progress polls and the report's changes (the last 50). */
function windowLine(tenant: string, sizes: readonly number[], report: BookReport | undefined): string {
  const changes = report?.windowChanges ?? [];
  const grew = changes.filter((change) => change.to > change.from).length;
  const shrank = changes.filter((change) => change.to < change.from);
  const why = (pattern: RegExp) => shrank.filter((change) => pattern.test(change.reason)).length;
  const sorted = [...sizes].sort((x, y) => x - y);
  return (
    `window ${tenant}: polled ${sizes.length} times, size min ${sorted[0] ?? 'n/a'}, median ${fmt(medianOf(sorted))}, max ${sorted.at(-1) ?? 'n/a'}; ` +
    `the report's ${changes.length} change(s)${changes.length >= 50 ? ' (the last 50)' : ''}: ${grew} grew, ${shrank.length} shrank ` +
    `(${why(/the live path slowed/)} live path slower, ${why(/^children took .*their best time/)} children slower, ${why(/^children waited .*to start/)} starts slower, ${why(/^another book's children/)} another book's slower, ` +
    `${why(/^giving way/)} gave way to another book, ${why(/in flight for/)} children stuck, ${why(/throttled/)} throttled)` +
    `${report?.window.bestFinishMs === undefined ? '' : `; best median child ${fmt(report.window.bestFinishMs)} ms`}` +
    `${report?.window.bestBusyMs === undefined ? '' : `, busy (less its polls' waits) best ${fmt(report.window.bestBusyMs)} ms, last ${fmt(report.window.recentBusyMs ?? NaN)} ms`}`
  );
}

/**
 * The window's changes in a line: `+12.3s 4→6 grew 1.05x, +20.1s 6→4 starts 2.31x, +30.2s 9→6 live
 * 180ms, ...` (a growth judged by the live path shows the children's busy ratio, when known).
 */
function changesLine(changes: BookReport['windowChanges'], origin: number): string {
  const kind = (change: BookReport['windowChanges'][number]) =>
    /pinned|unpinned/.test(change.reason)
      ? 'operator'
      : change.to > change.from
        ? 'grew'
        : /throttled/.test(change.reason)
          ? 'throttled'
          : /in flight for/.test(change.reason)
            ? 'stuck'
            : /^giving way/.test(change.reason)
              ? 'gave-way'
              : /the live path slowed/.test(change.reason)
                ? 'live'
                : /^another book's/.test(change.reason)
                  ? 'fleet'
                  : /waited/.test(change.reason)
                    ? 'starts'
                    : /took/.test(change.reason)
                      ? 'slower'
                      : 'grew';
  return (
    changes
      .map((change) => {
        const liveWait = /live tasks waited (\d+) ms/.exec(change.reason)?.[1];
        const times = /([\d.]+)x/.exec(change.reason)?.[1];
        const figure = kind(change) === 'live' && liveWait ? ` ${liveWait}ms` : times ? ` ${times}x` : '';
        return `+${seconds(Date.parse(change.at) - origin)} ${change.from}→${change.to} ${kind(change)}${figure}`;
      })
      .join(', ') || 'none'
  );
}

const shortReason = (progress: BookProgress) => {
  const reason = progress.window.lastChange?.reason ?? 'the size it started with';
  return reason.length > 110 ? `${reason.slice(0, 107)}...` : reason;
};

function progressPart(tenant: string, progress: BookProgress | undefined): string {
  if (!progress) return `${tenant} (no progress read yet)`;
  return `${tenant} ${progress.counts.done}/${progress.total ?? '?'} ${progress.status}, ${progress.inFlight} in flight, window ${progress.window.size} (${shortReason(progress)})`;
}

export async function runNight(mode: Mode, options: BurstOptions, resources: StackResources): Promise<NightResult> {
  const timeline = new Timeline();
  const runDir = await mkdtemp(join(tmpdir(), `aggregation-night-${mode}-`));
  const runTag = `${Date.now().toString(36)}${options.seed.toString(36)}`.slice(-10);
  const budget: BudgetSpec = {
    totalRps: options.budgetRps,
    tenantRps: options.tenantBudgetRps,
    mode: 'bucket',
    weights: mode === 'on' ? TENANT_WEIGHTS : new Map(),
  };
  log('');
  log(
    `== night, priority and fairness ${mode.toUpperCase()}: seed ${options.seed}; A's book ${options.a}, B's ${options.b}, live ${options.live}; alone A ${options.aloneA}, B ${options.aloneB}; ${options.workers} workers; run directory ${runDir}`,
  );
  const otherLoad = OtherLoad.start(options.otherLoadPercent);
  if (otherLoad.percent > 0) log(`other load: ${otherLoad.percent}% of each of ${cpus().length} cores, busy processes for the whole run`);
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
    },
    resources,
  );
  log(
    `stack: Temporal server ${stack.serverVersion} on PostgreSQL, ${options.workers} workers; SERVICE_BUDGET_RPS ${options.budgetRps}, SERVICE_BUDGET_TENANT_RPS ${options.tenantBudgetRps}` +
      (mode === 'on'
        ? `, TENANT_WEIGHTS ${[...TENANT_WEIGHTS].map(([tenant, weight]) => `${tenant}:${weight}`).join(',')}; matching.enableFairness true`
        : '; no tenant weights; matching.enableFairness false'),
  );
  const bounds = stack.books.window;
  log(
    `books: window floor ${bounds.floor}, ceiling ${bounds.ceiling}, start ${bounds.start}, page size ${stack.books.pageSize} (the client's BOOK_WINDOW_* and BOOK_PAGE_SIZE defaults: nothing tuned here)`,
  );
  const limits = await updateRateLimits(stack.sandboxUrl, { mode: 'bucket', burst: null, defaultPerSecond: Math.max(1, Math.floor(options.tenantBudgetRps)) });
  log(`service: every tenant limited to ${limits.defaultPerSecond}/s (its budget) until A's limit is lowered`);

  const listing = await fetchScenarioListing(stack.sandboxUrl);
  const liveScenario = scenarioFor(listing, LIVE_USERNAME);
  const saved = (tenant: string, count: number, from: number) =>
    mapLimit(
      Array.from({ length: count }, (_, index) => from + index),
      16,
      (index) => savedLogin(stack.sandboxUrl, tenant, index),
    );
  const loginsA = await saved(TENANT_A, options.a, 0);
  const loginsB = await saved(TENANT_B, options.b, 0);
  const aloneLoginsA = await saved(TENANT_A, options.aloneA, options.a);
  const aloneLoginsB = await saved(TENANT_B, options.aloneB, options.b);
  const enrolFrom = Date.now();
  const enrolProblems = await enrolBooks(stack, [
    { tenant: TENANT_A, cadence: NIGHT_CADENCE, loginIds: loginsA },
    { tenant: TENANT_B, cadence: NIGHT_CADENCE, loginIds: loginsB },
    { tenant: TENANT_A, cadence: ALONE_CADENCE, loginIds: aloneLoginsA },
    { tenant: TENANT_B, cadence: ALONE_CADENCE, loginIds: aloneLoginsB },
  ]);
  const enrolments = options.a + options.b + options.aloneA + options.aloneB;
  timeline.mark(`${enrolments - enrolProblems.length} logins enrolled`);
  log(
    `enrolled: ${enrolments - enrolProblems.length} of ${enrolments} logins (A ${options.a} + ${options.aloneA} alone, B ${options.b} + ${options.aloneB} alone), ${ENROL_CONCURRENCY} at a time, in ${seconds(Date.now() - enrolFrom)}`,
  );
  for (const problem of enrolProblems.slice(0, 10)) log(`  NOT ENROLLED: ${problem}`);
  // The enrolments' own work (first workflow tasks, visibility rows) drains before anything is measured.
  const quiet = await waitForQuietStack(stack.postgresDataDir, { quietMsPerSecond: QUIET_STACK_MS_PER_SECOND, sampleMs: QUIET_SAMPLE_MS, maxMs: QUIET_MAX_MS });
  log(
    `settled: ${quiet.settled ? 'the stack quiet' : `the stack NOT quiet within ${seconds(QUIET_MAX_MS)}`} (${fmt(quiet.msPerSecond)} ms of CPU a second) ${seconds(quiet.waitedMs)} after the enrolments`,
  );

  const book: RateBook = new Map();
  const readRates = async () => mergeRates(book, await requestRates(stack.sandboxUrl, 120));
  const ratesTimer = setInterval(() => void readRates().catch(() => undefined), RATES_EVERY_MS);
  try {
    // ---- baseline 1: the live connections alone --------------------------------------------------
    const idleTimes = newLiveTimes();
    let since = new Date().toISOString();
    const idle = await operateLive(
      stack,
      TENANT_LIVE,
      'idle',
      liveScenario,
      evenStarts(options.live, (options.live - 1) * IDLE_LIVE_SPACING_MS),
      Date.now(),
      idleTimes,
    );
    const idleStarted = Date.now();
    await awaitEnds(
      stack,
      since,
      new Map([[TENANT_LIVE, idle.length]]),
      () => idleStarted + options.deadlineMs,
      () => undefined,
    );
    const idleObserved = await observe(stack, since, idle);
    const liveIdle = spreadOf(durationsOf(idleTimes.answers));
    log(`idle: ${idle.length} live connections alone, ${liveIdle.count} answers: p50 ${fmt(liveIdle.p50)} ms, p99 ${fmt(liveIdle.p99)} ms`);

    // ---- baseline 2: each tenant's book alone ----------------------------------------------------
    const idleBefore = sampleCpu(stack.postgresDataDir);
    await sleepMs(IDLE_CPU_SAMPLE_MS);
    const idleCpuPerSecondMs = (cpuTotal(cpuBetween(idleBefore, sampleCpu(stack.postgresDataDir))) * 1000) / IDLE_CPU_SAMPLE_MS;
    const cpuBeforeAlone = sampleCpu(stack.postgresDataDir);
    const aloneFrom = Date.now();
    const alone = new Map<string, { followed: Followed; children: Child[]; outcomes: BookOutcomes; medianS: number }>();
    for (const [tenant, loginIds] of [
      [TENANT_B, aloneLoginsB],
      [TENANT_A, aloneLoginsA],
    ] as const) {
      const sinceMs = Date.now();
      since = new Date(sinceMs).toISOString();
      const { refreshWorkflowId } = await stack.connections.books.run({ customerId: tenant, cadence: ALONE_CADENCE });
      const sizes: number[] = [];
      const followed = (
        await followRefreshes(
          stack,
          new Map([[tenant, refreshWorkflowId]]),
          () => sinceMs + options.deadlineMs,
          (last) => void sizes.push(...[...last.values()].map((progress) => progress.window.size)),
        )
      ).get(tenant) as Followed;
      const children = await childrenOf(stack, tenant, followed.report?.night ?? followed.last?.night, since);
      const outcomes = await outcomesOf(stack, loginIds, followed);
      const medianS = medianOf(completedDurationsS(children));
      alone.set(tenant, { followed, children, outcomes, medianS });
      const tookMs = followed.report ? Date.parse(followed.report.endedAt) - Date.parse(followed.report.startedAt) : Date.now() - sinceMs;
      log(
        `alone: ${tenant}'s book of ${loginIds.length} (${ALONE_CADENCE}) alone: ${outcomes.refreshed} refreshed, ${outcomes.failed} failed, ${outcomes.lost} lost in ${seconds(tookMs)}; ` +
          `median child start→close ${fmt(medianS, 2)} s (the report's ask→end ${fmt(outcomes.reportMedianMs / 1000, 2)} s); ${fmt((outcomes.refreshed * 1000) / tookMs, 1)} a second`,
      );
      log(`  ${windowLine(tenant, sizes, followed.report)}`);
    }
    const aloneRefreshes = [...alone.values()].reduce((sum, entry) => sum + entry.children.length, 0);
    const aloneCpuMs = cpuTotal(cpuBetween(cpuBeforeAlone, sampleCpu(stack.postgresDataDir))) - (idleCpuPerSecondMs * (Date.now() - aloneFrom)) / 1000;
    const cpuPerRefreshMs = aloneCpuMs / aloneRefreshes;
    // The machine's cores (not this process's: a CPU split pins it to fewer), less what other load takes.
    const cores = cpus().length * otherLoad.coresLeft;
    const capacityRps = (cores * 1000) / cpuPerRefreshMs;
    const budgetRefreshRps = options.budgetRps / REFRESH_REQUESTS;
    log(
      `capacity: alone a book's refresh costs the stack ${fmt(cpuPerRefreshMs, 1)} ms (beyond its idle ${fmt(idleCpuPerSecondMs)} ms a second), so ${fmt(cores, 1)} cores carry at most ${fmt(capacityRps, 1)} refreshes a second; ` +
        `the budget carries ${fmt(budgetRefreshRps, 1)} (${options.budgetRps}/s, ${REFRESH_REQUESTS} requests a refresh)`,
    );

    // ---- the night -------------------------------------------------------------------------------
    const farOff = new Date(Date.now() + 12 * 3_600_000);
    const at = `${String(farOff.getUTCHours()).padStart(2, '0')}:${String(farOff.getUTCMinutes()).padStart(2, '0')}`;
    for (const tenant of [TENANT_A, TENANT_B])
      await stack.connections.books.schedule({ customerId: tenant, cadence: NIGHT_CADENCE, when: { kind: 'daily', at, timeZone: 'UTC' } });
    const expectedMs = expectedNightMs({
      a: options.a,
      b: options.b,
      capacityRps,
      budgetRps: options.budgetRps,
      aLimit: options.aLimit,
      requestsPerRefresh: REFRESH_REQUESTS,
    });
    const liveOffsets = evenStarts(options.live, expectedMs);
    const nightTimes = newLiveTimes();
    await readRates().catch(() => undefined);
    const origin = Date.now();
    since = new Date(origin).toISOString();
    const nightFromSecond = Math.floor(origin / 1000);
    const cpuBefore = sampleCpu(stack.postgresDataDir);
    await Promise.all([TENANT_A, TENANT_B].map((tenant) => stack.client.schedule.getHandle(bookScheduleId(tenant, NIGHT_CADENCE)).trigger()));
    timeline.mark(`night: both book Schedules (daily at ${at} UTC) triggered; ${options.live} live over ${seconds(expectedMs)}`);
    log(
      `night: ${bookScheduleId(TENANT_A, NIGHT_CADENCE)} (${options.a}) and ${bookScheduleId(TENANT_B, NIGHT_CADENCE)} (${options.b}), daily at ${at} UTC, triggered together; ${options.live} live connections over ${seconds(expectedMs)} (what the night should take at what the cores and the budget carry)`,
    );
    const liveDone = operateLive(stack, TENANT_LIVE, 'night', liveScenario, liveOffsets, origin, nightTimes);
    const ids = new Map<string, string>();
    for (const tenant of [TENANT_A, TENANT_B]) ids.set(tenant, await refreshStartedSince(stack, tenant, NIGHT_CADENCE, origin));
    log(`  refreshes: ${[...ids.values()].join(', ')}`);
    let loweredAt: number | undefined;
    let lastProgress = Date.now();
    const sizes = new Map<string, number[]>([
      [TENANT_A, []],
      [TENANT_B, []],
    ]);
    const followed = await followRefreshes(
      stack,
      ids,
      () => origin + options.deadlineMs,
      async (last) => {
        for (const [tenant, progress] of last) if (progress.status !== 'completed') sizes.get(tenant)?.push(progress.window.size);
        const doneA = last.get(TENANT_A)?.counts.done ?? 0;
        if (loweredAt === undefined && doneA >= Math.ceil(options.a / 2)) {
          loweredAt = Date.now();
          await updateRateLimits(stack.sandboxUrl, { tenants: { [TENANT_A]: options.aLimit }, retryAfterSeconds: options.retryAfterS });
          timeline.mark(
            `midway (${doneA}/${options.a} of A done): the service lowered ${TENANT_A}'s limit to ${options.aLimit}/s, Retry-After ${options.retryAfterS} s`,
          );
          log(
            `  +${seconds(loweredAt - origin)} midway: ${doneA}/${options.a} of A's book done; the service now limits ${TENANT_A} to ${options.aLimit}/s (Retry-After ${options.retryAfterS} s)`,
          );
        }
        if (Date.now() - lastProgress >= PROGRESS_EVERY_MS) {
          lastProgress = Date.now();
          log(
            `  +${seconds(lastProgress - origin)} ${progressPart('A', last.get(TENANT_A))}; ${progressPart('B', last.get(TENANT_B))}; live answers ${nightTimes.answers.length}`,
          );
        }
      },
    );
    const nightEndMs = Date.now();
    const cpuAfter = sampleCpu(stack.postgresDataDir);
    timeline.mark(
      `night over: ${[...followed].map(([tenant, { report, last }]) => `${tenant} ${report ? report.status : `not ended (${last?.counts.done ?? 0} done)`}`).join(', ')}`,
    );
    const nightLive = await liveDone;
    await awaitEnds(
      stack,
      since,
      new Map([[TENANT_LIVE, nightLive.length]]),
      () => origin + options.deadlineMs,
      () => undefined,
    );
    const liveObserved = await observe(stack, since, nightLive);
    await readRates();
    clearInterval(ratesTimer);

    // ---- figures ---------------------------------------------------------------------------------
    const nightOf = (tenant: string) => followed.get(tenant) as Followed;
    const children = new Map<string, Child[]>();
    const outcomes = new Map<string, BookOutcomes>();
    for (const [tenant, planned] of [
      [TENANT_A, loginsA],
      [TENANT_B, loginsB],
    ] as const) {
      const { report, last } = nightOf(tenant);
      children.set(tenant, await childrenOf(stack, tenant, report?.night ?? last?.night, since));
      outcomes.set(tenant, await outcomesOf(stack, planned, nightOf(tenant)));
    }
    const span = (tenant: string) => {
      const { report, last } = nightOf(tenant);
      const startMs = Date.parse(report?.startedAt ?? last?.startedAt ?? since);
      return {
        startMs,
        endMs: report ? Date.parse(report.endedAt) : nightEndMs,
        closesMs: (children.get(tenant) ?? []).flatMap((child) => (child.status === 'COMPLETED' && child.closeMs !== undefined ? [child.closeMs] : [])),
      };
    };
    const both = bothRunning(span(TENANT_A), span(TENANT_B));
    const lastEndSecond = Math.floor(Math.max(span(TENANT_A).endMs, span(TENANT_B).endMs) / 1000);
    const budgetOf = budgetFigures(book, budget, nightFromSecond, lastEndSecond);
    const liveStates = [...idle, ...nightLive].map((entry) => endStateOf((idleObserved.get(entry.workflowId) ?? liveObserved.get(entry.workflowId))?.status));
    const liveEnds = countEnds(liveStates);
    const books = [...outcomes.values(), ...[...alone.values()].map((entry) => entry.outcomes)];
    const medianS = (tenant: string) => medianOf(completedDurationsS(children.get(tenant) ?? []));
    const replay = await replayRefreshes({ client: stack.client, bundlePath: stack.bundlePath, payload: stack.payload, runTag });
    const figures: NightFigures = {
      refreshes: options.a + options.b,
      lost: books.reduce((sum, entry) => sum + entry.lost, 0) + liveEnds.lost,
      failed: books.reduce((sum, entry) => sum + entry.failed, 0) + liveEnds.failed,
      live: spreadOf(durationsOf(nightTimes.answers)),
      liveIdle,
      firstChallenge: spreadOf(durationsOf(nightTimes.firstChallenges)),
      firstChallengeIdle: spreadOf(durationsOf(idleTimes.firstChallenges)),
      aMedianS: medianS(TENANT_A),
      aAloneMedianS: alone.get(TENANT_A)?.medianS ?? NaN,
      bMedianS: medianS(TENANT_B),
      bAloneMedianS: alone.get(TENANT_B)?.medianS ?? NaN,
      throughputRps: both.perSecond,
      capacityRps,
      budgetRefreshRps,
      bShare: both.bShare,
      bWeightShare: weightShare(budget.weights, TENANT_A, TENANT_B),
      budgetExceededS: budgetOf.exceeded,
      nondeterminism: replay.nondeterminism.length + replay.errors.length,
    };

    log('');
    log(`Results, the night, priority and fairness ${mode}`);
    for (const [what, entry] of [
      [`alone ${TENANT_A}`, alone.get(TENANT_A)?.outcomes],
      [`alone ${TENANT_B}`, alone.get(TENANT_B)?.outcomes],
      [`night ${TENANT_A}`, outcomes.get(TENANT_A)],
      [`night ${TENANT_B}`, outcomes.get(TENANT_B)],
    ] as const) {
      if (!entry) continue;
      log(
        `  ${what.padEnd(14)} ${entry.refreshed} refreshed, ${entry.failed} failed, ${entry.lost} lost${entry.problems.length > 0 ? `; e.g. ${entry.problems.slice(0, 3).join('; ')}` : ''}`,
      );
    }
    const liveCounts = (planned: typeof idle, observed: ReadonlyMap<string, Observed>) =>
      countEnds(planned.map((entry) => endStateOf(observed.get(entry.workflowId)?.status)));
    for (const [what, counts] of [
      ['idle live', liveCounts(idle, idleObserved)],
      ['night live', liveCounts(nightLive, liveObserved)],
    ] as const) {
      log(`  ${what.padEnd(14)} ${counts.completed} completed, ${counts.failed} failed, ${counts.lost} lost`);
    }
    for (const problem of [...idleTimes.problems, ...nightTimes.problems].slice(0, 20)) log(`  operator: ${problem}`);
    const live = figures.live;
    log(
      `  live first challenge (start → challenge): night p50 ${fmt(figures.firstChallenge?.p50 ?? NaN)} ms, p99 ${fmt(figures.firstChallenge?.p99 ?? NaN)} ms; idle p50 ${fmt(figures.firstChallengeIdle?.p50 ?? NaN)} ms, p99 ${fmt(figures.firstChallengeIdle?.p99 ?? NaN)} ms`,
    );
    log(
      `  live answers: night ${live.count}, p50 ${fmt(live.p50)} ms, p99 ${fmt(live.p99)} ms; idle ${liveIdle.count}, p50 ${fmt(liveIdle.p50)} ms, p99 ${fmt(liveIdle.p99)} ms; the last live connection started at +${seconds(liveOffsets.at(-1) ?? 0)}`,
    );
    // Where the slowest answers' and first challenges' time went, read from their connections'
    // histories, beside the idle run's median one of each.
    for (const [which, spans] of [
      ['answer', 'answers'],
      ['first challenge', 'firstChallenges'],
    ] as const) {
      const idleSorted = [...idleTimes[spans]].sort((x, y) => x.ms - y.ms);
      const typical = idleSorted[Math.floor(idleSorted.length / 2)];
      const slowest = [...nightTimes[spans]].sort((x, y) => y.ms - x.ms).slice(0, SLOW_SPANS_SHOWN);
      for (const [label, span] of [...(typical ? [['idle median', typical] as const] : []), ...slowest.map((slow) => ['slow night', slow] as const)]) {
        const profile = await spanProfile(stack, span.workflowId, { fromMs: span.atMs, toMs: span.atMs + span.ms }).catch(
          (error: unknown) => `history not read: ${describeError(error)}`,
        );
        log(`  ${label} ${which}: ${fmt(span.ms)} ms in ${span.workflowId}: ${profile}`);
      }
    }
    for (const [name, tenant] of [
      ['A', TENANT_A],
      ['B', TENANT_B],
    ] as const) {
      const durations = completedDurationsS(children.get(tenant) ?? []);
      const { report } = nightOf(tenant);
      const took = report ? Date.parse(report.endedAt) - Date.parse(report.startedAt) : NaN;
      log(
        `  ${name} (${tenant}): child start→close median ${fmt(medianOf(durations), 2)} s, longest ${fmt(Math.max(...durations), 1)} s, alone ${fmt(alone.get(tenant)?.medianS ?? NaN, 2)} s (${fmt(ratio(medianOf(durations), alone.get(tenant)?.medianS ?? NaN), 2)}x); ` +
          `the report's ask→end median ${fmt((outcomes.get(tenant)?.reportMedianMs ?? NaN) / 1000, 2)} s; the refresh took ${Number.isFinite(took) ? seconds(took) : 'longer than the deadline'} over ${report?.pages.length ?? '?'} page(s), drained ${report ? seconds(report.drainMs) : '?'}`,
      );
      log(`  ${windowLine(name, sizes.get(tenant) ?? [], report)}`);
      if (report) log(`  window ${name}, each change: ${changesLine(report.windowChanges, origin)}`);
    }
    log(
      `  both books running +${seconds(both.fromMs - origin)} to +${seconds(both.toMs - origin)}: A ${both.a} and B ${both.b} completed, ${fmt(both.perSecond, 1)} a second ` +
        `(${fmt(100 * ratio(both.perSecond, capacityRps))}% of the ${fmt(capacityRps, 1)} the cores carry, ${fmt(100 * ratio(both.perSecond, budgetRefreshRps))}% of the budget's ${fmt(budgetRefreshRps, 1)}); B's share ${fmt(100 * both.bShare)}% (weight ${fmt(100 * figures.bWeightShare)}%)`,
    );
    log(
      `  ${loweredAt === undefined ? "A's limit was never lowered (half of A's book was never done)" : `A's limit lowered at +${seconds(loweredAt - origin)}`}; the night took ${seconds(nightEndMs - origin)}`,
    );
    const perTenant = (map: ReadonlyMap<string, number>) => [...map].map(([tenant, value]) => `${tenant} ${value}`).join(', ') || 'none';
    log(
      `  service, night (${budgetOf.busySeconds} busy seconds): ${budgetOf.accepted} accepted, ${budgetOf.refused} refused (${perTenant(budgetOf.refusedByTenant)}); ` +
        `most in one second: fleet ${budgetOf.maxFleetPerSecond} (budget ${budget.totalRps}), ${perTenant(budgetOf.maxTenantPerSecond)} (budget ${budget.tenantRps} per tenant of weight 1)`,
    );
    const bucketS = bucketSecondsFor(lastEndSecond - nightFromSecond + 1);
    log(`  service per ${bucketS} s of the night (accepted/refused):`);
    for (const bucket of bucketRates(book, nightFromSecond, lastEndSecond, bucketS)) {
      log(
        `    +${String(bucket.offsetS).padStart(4)}s  ${[...bucket.perTenant].map(([tenant, count]) => `${tenant} ${count.accepted}/${count.refused}`).join(', ')}`,
      );
    }
    log(
      `  budget exceeded: fleet in ${budgetOf.fleetExceeded} s, a tenant in ${[...budgetOf.tenantExceeded.values()].reduce((sum, value) => sum + value, 0)} s (${perTenant(budgetOf.tenantExceeded)}); either: ${budgetOf.exceeded} s`,
    );
    log(`  tenant throttle: ${await throttleRuns(stack)}`);
    log(`  ${refreshReplayLine(replay)}`);
    const cpuUsed = cpuBetween(cpuBefore, cpuAfter);
    const part = (name: CpuPart) => `${name} ${fmt(cpuUsed[name] / 1000, 1)} s`;
    const nightChildren = (children.get(TENANT_A)?.length ?? 0) + (children.get(TENANT_B)?.length ?? 0);
    log(
      `  cpu, night: ${part('workers')}, ${part('server')}, ${part('postgres')}, ${part('sandbox')}; ${fmt(cpuTotal(cpuUsed) / Math.max(1, nightChildren + nightLive.length), 1)} ms per connection (alone: ${fmt(cpuPerRefreshMs, 1)} ms a refresh)`,
    );
    log(`  targets: ${nightTargetsLine(figures)}`);
    log('Timeline');
    for (const entry of timeline.entries()) log(`  +${seconds(entry.atMs).padStart(7)}  ${entry.text}`);
    log(`night (${mode}): ${nightLine(figures).slice('night: '.length)}`);
    return { mode, figures };
  } finally {
    clearInterval(ratesTimer);
    await otherLoad.stop();
    await releaseStack(resources, log);
    if (options.keepLogs) log(`night: run directory kept: ${runDir}`);
    else await rm(runDir, { recursive: true, force: true });
  }
}
