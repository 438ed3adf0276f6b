/**
 * `npm run bench:burst` at a small size, as a subprocess on the production stack (PostgreSQL, the
 * Temporal server, three worker processes): its summary line must parse and no connection may be
 * lost or fail. Never a timed assertion: latencies, ratios and the budget are figures of the
 * benchmark, not verdicts. The figure computations (bench/burst/figures.ts) are checked here
 * without a server.
 *
 * Without PostgreSQL or the server binaries the run is skipped on a developer's machine, saying why,
 * and fails in CI, where .ci/run and the pretest provide both.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import {
  bothRunning,
  bucketRates,
  bucketSecondsFor,
  budgetFigures,
  countEnds,
  endStateOf,
  evenStarts,
  expectedBurstMs,
  expectedNightMs,
  mergeRates,
  nightLine,
  nightTargetsLine,
  parseNightLine,
  parseSummaryLine,
  ratio,
  scheduleStarts,
  spreadOf,
  summaryLine,
  targetsLine,
  weightShare,
  type NightFigures,
  type RateBook,
  type RunFigures,
} from '../../bench/burst/figures.js';
import { busyShare, coreBusyShares, sampleMachineCpu } from '../../bench/burst/cpu.js';
import { allowedCores, coreCount, cpuSplitOf, describeSplit, pinServer } from '../../bench/burst/cpu-split.js';
import { spawn } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { BurstArgumentError, parseBurstArgs } from '../../bench/burst/options.js';
import { OtherLoad } from '../../bench/burst/other-load.js';
import { policyOf, serverSettingsOf, workerPriorityEnv } from '../../bench/burst/stack.js';
import { seededRandom } from '../../scripts/chaos/random.js';
import { postgresBinDir } from '../../scripts/prod-check/postgres.js';
import { findServerBinaries } from '../../scripts/prod-check/temporal-server.js';
import { failureReport, runHarness } from '../helpers/harness-run.js';
import { loadTestConfig } from '../../scripts/lib/test-settings.js';

const ENTRY = 'bench/burst.ts';
const RUN_TIMEOUT_MS = 420_000;

const missing = [...(postgresBinDir() ? [] : ['PostgreSQL (apt-get install -y postgresql)']), ...findServerBinaries().missing];
if (missing.length > 0 && loadTestConfig().ci) throw new Error(`npm run bench:burst cannot run in CI: missing ${missing.join('; ')}`);
const skipRun = missing.length > 0 ? `missing: ${missing.join('; ')}` : false;

const rates = (perSecond: Record<string, [second: number, accepted: number, refused: number][]>) => ({
  tenants: Object.fromEntries(
    Object.entries(perSecond).map(([tenant, seconds]) => [
      tenant,
      {
        limitPerSecond: null,
        accepted: 0,
        refused: 0,
        maxAcceptedPerSecond: 0,
        maxRefusedPerSecond: 0,
        maxRequestsPerSecond: 0,
        perSecond: seconds.map(([second, accepted, refused]) => ({ second, accepted, refused })),
      },
    ]),
  ),
});

const figures = (fields: Partial<RunFigures> = {}): RunFigures => {
  const book: RateBook = new Map();
  return {
    connections: 2250,
    completed: 2250,
    failed: 0,
    lost: 0,
    live: { count: 100, p50: 120, p99: 300 },
    liveIdle: { count: 100, p50: 80, p99: 200 },
    bMedianS: 3,
    bAloneMedianS: 2,
    budget: budgetFigures(book, { totalRps: 60, tenantRps: 40, mode: 'strict', weights: new Map() }, 0, 0),
    ...fields,
  };
};

void describe('burst figures', () => {
  void it('starts scheduled refreshes at random within the window, in order, the same for the same seed', () => {
    const starts = scheduleStarts(500, 60_000, seededRandom(7));
    assert.equal(starts.length, 500);
    assert.ok(starts.every((at, index) => at >= 0 && at < 60_000 && (index === 0 || at >= (starts[index - 1] ?? 0))));
    assert.deepEqual(starts, scheduleStarts(500, 60_000, seededRandom(7)));
    assert.deepEqual(evenStarts(5, 1_000), [0, 250, 500, 750, 1_000]);
    assert.deepEqual(evenStarts(1, 1_000), [0]);
  });

  void it("spreads the live connections over the time the budget's steady rate needs, at least the window", () => {
    assert.equal(expectedBurstMs(6_850, 60, 60_000), 228_333);
    assert.equal(expectedBurstMs(100, 60, 60_000), 60_000);
  });

  void it('counts a connection that never ended or cannot be found as lost, any other end but completed as failed', () => {
    assert.equal(endStateOf('COMPLETED'), 'completed');
    assert.equal(endStateOf('RUNNING'), 'lost');
    assert.equal(endStateOf(undefined), 'lost');
    for (const status of ['FAILED', 'TERMINATED', 'TIMED_OUT', 'CANCELLED']) assert.equal(endStateOf(status), 'failed');
    assert.deepEqual(countEnds(['completed', 'failed', 'lost', 'lost']), { connections: 4, completed: 1, failed: 1, lost: 2 });
  });

  void it('keeps the larger count of a second read twice (a second still running at the first read)', () => {
    const book: RateBook = new Map();
    mergeRates(
      book,
      rates({
        a: [
          [100, 5, 0],
          [101, 3, 0],
        ],
      }),
    );
    mergeRates(
      book,
      rates({
        a: [
          [101, 9, 2],
          [102, 1, 0],
        ],
        b: [[101, 4, 0]],
      }),
    );
    assert.deepEqual(
      [...(book.get('a') ?? [])],
      [
        [100, { accepted: 5, refused: 0 }],
        [101, { accepted: 9, refused: 2 }],
        [102, { accepted: 1, refused: 0 }],
      ],
    );
    assert.deepEqual(book.get('b')?.get(101), { accepted: 4, refused: 0 });
  });

  void it('finds the 1-second windows over a strict fleet budget or a tenant budget (times its weight), refused requests counted as sent', () => {
    const book: RateBook = new Map();
    mergeRates(
      book,
      rates({
        a: [
          [10, 30, 0],
          [11, 35, 10],
          [12, 20, 0],
          [20, 100, 0],
        ],
        b: [
          [10, 31, 0],
          [11, 10, 0],
          [12, 45, 0],
        ],
      }),
    );
    const spec = { totalRps: 60, tenantRps: 40, mode: 'strict' as const, weights: new Map([['b', 1.25]]) };
    const result = budgetFigures(book, spec, 10, 12);
    // Second 10: 61 > 60 (fleet). Second 11: a sent 45 > 40. Second 12: b 45 <= 50 (weight 1.25), fleet 65 > 60.
    assert.equal(result.fleetExceeded, 2);
    assert.deepEqual([...result.tenantExceeded], [['a', 1]]);
    assert.equal(result.exceeded, 3);
    assert.equal(result.busySeconds, 3);
    assert.equal(result.maxFleetPerSecond, 65);
    assert.deepEqual(
      [...result.maxTenantPerSecond],
      [
        ['a', 45],
        ['b', 45],
      ],
    );
    assert.equal(result.refused, 10);
    assert.deepEqual(
      [...result.refusedByTenant],
      [
        ['a', 10],
        ['b', 0],
      ],
    );
    assert.equal(result.accepted, 30 + 35 + 20 + 31 + 10 + 45);
    // Second 20 is outside the window asked for.
    assert.equal(budgetFigures(book, spec, 13, 30).fleetExceeded, 1);
  });

  void it("finds the seconds a bucket's budget was exceeded in: more than its burst and k seconds' worth in k whole seconds", () => {
    const book: RateBook = new Map();
    // a: a bucket of 10/s holding 10 lets 20 into one whole second (10 at once, 10 more), 30 into two.
    mergeRates(
      book,
      rates({
        a: [
          [10, 19, 0],
          [11, 10, 0],
          [12, 10, 0],
          [20, 12, 0],
          [21, 19, 0],
        ],
        b: [[30, 15, 0]],
      }),
    );
    const spec = { totalRps: 10, tenantRps: 10, mode: 'bucket' as const, weights: new Map([['b', 0.5]]) };
    const result = budgetFigures(book, spec, 0, 40);
    // 10..12: 19, 29, 39 <= 20, 30, 40. 20..21: 12, then 31 > 30. b (5/s holding 5): 15 > 10 in second 30, within the fleet's.
    assert.equal(result.fleetExceeded, 1);
    assert.deepEqual(
      [...result.tenantExceeded],
      [
        ['a', 1],
        ['b', 1],
      ],
    );
    assert.equal(result.exceeded, 2);
    // A larger bucket lets it through.
    assert.equal(budgetFigures(book, { ...spec, burst: 20 }, 0, 40).fleetExceeded, 0);
  });

  void it('sums the counts in buckets for the service table', () => {
    const book: RateBook = new Map();
    mergeRates(
      book,
      rates({
        b: [
          [100, 1, 0],
          [109, 2, 1],
          [110, 4, 0],
        ],
        a: [[105, 7, 3]],
      }),
    );
    const buckets = bucketRates(book, 100, 112, 10);
    assert.deepEqual(
      buckets.map((bucket) => [bucket.offsetS, [...bucket.perTenant]]),
      [
        [
          0,
          [
            ['a', { accepted: 7, refused: 3 }],
            ['b', { accepted: 3, refused: 1 }],
          ],
        ],
        [
          10,
          [
            ['a', { accepted: 0, refused: 0 }],
            ['b', { accepted: 4, refused: 0 }],
          ],
        ],
      ],
    );
    assert.equal(bucketSecondsFor(300), 10);
    assert.equal(bucketSecondsFor(1_000), 30);
  });

  void it('takes percentiles and ratios, n/a where a figure is missing', () => {
    const spread = spreadOf([5, 1, 4, 2, 3]);
    assert.deepEqual(spread, { count: 5, p50: 3, p99: 5 });
    assert.ok(Number.isNaN(spreadOf([]).p50));
    assert.equal(ratio(3, 2), 1.5);
    assert.ok(Number.isNaN(ratio(3, 0)));
    assert.ok(Number.isNaN(ratio(NaN, 2)));
  });

  void it('prints the summary line the issue asks for, and reads it back', () => {
    const line = summaryLine(figures());
    assert.equal(
      line,
      'burst: 2250 connections, 0 lost, 0 failed, live answer p50 120 ms (1.50x idle) p99 300 ms (1.50x idle), tenant B median 3.0 s (1.50x alone), budget exceeded 0 s, throttled by service 0',
    );
    assert.deepEqual(parseSummaryLine(line), {
      connections: 2250,
      lost: 0,
      failed: 0,
      liveP50Ms: 120,
      liveP50Ratio: 1.5,
      liveP99Ms: 300,
      liveP99Ratio: 1.5,
      bMedianS: 3,
      bRatio: 1.5,
      budgetExceededS: 0,
      throttled: 0,
    });
    const missingFigures = parseSummaryLine(summaryLine(figures({ live: { count: 0, p50: NaN, p99: NaN } })));
    assert.ok(missingFigures && Number.isNaN(missingFigures.liveP50Ms) && Number.isNaN(missingFigures.liveP99Ratio));
    assert.equal(parseSummaryLine('burst (off): 1 connections'), undefined);
    // With the storm's CPU split the line says which cores each side ran on, and still reads back.
    const split = summaryLine(figures(), { temporal: '0', rest: '1' });
    assert.match(split, /, throttled by service 0; cpu split temporal 0 \| rest 1$/);
    assert.equal(parseSummaryLine(split)?.connections, 2250);
    assert.match(targetsLine(figures()), /live p50 <= 1\.5x idle met \(1\.50x\); live p99 <= 2x idle met/);
    assert.match(targetsLine(figures({ bMedianS: 4 })), /tenant B median <= 1\.5x alone MISSED \(2\.00x\)/);
  });

  void it("reads the machine's busy share from /proc/stat: more of it while this process spins", () => {
    const before = sampleMachineCpu();
    const spinUntil = Date.now() + 300;
    while (Date.now() < spinUntil) Math.sqrt(Math.random());
    const after = sampleMachineCpu();
    assert.ok(after.totalMs > before.totalMs && after.busyMs >= before.busyMs, JSON.stringify({ before, after }));
    const share = busyShare(before, after);
    // One core of the machine's spun the whole time (a tick is 10 ms, so allow for rounding).
    assert.ok(share > 0 && share <= 1, `busy share ${share}`);
    assert.ok(after.busyMs - before.busyMs >= 200, `a 300 ms spin shows as ${after.busyMs - before.busyMs} ms busy`);
    assert.ok(Number.isNaN(busyShare(after, after)));
    // Per core too: one share a core, each within 0..1, their mean the machine's.
    const cores = coreBusyShares(before, after);
    assert.equal(cores.length, availableParallelism());
    for (const core of cores) assert.ok(Number.isNaN(core) || (core >= 0 && core <= 1), `core share ${core}`);
  });

  void it(
    "splits the cores: Temporal's the first, the rest's the others, a process pinned to its side with every thread",
    { skip: availableParallelism() < 2 && 'one core' },
    async () => {
      assert.equal(cpuSplitOf(1), undefined);
      assert.deepEqual(cpuSplitOf(2), { temporal: '0', rest: '1' });
      assert.deepEqual(cpuSplitOf(4), { temporal: '0', rest: '1-3' });
      assert.deepEqual(['0', '1', '1-3', '0,2-3'].map(coreCount), [1, 1, 3, 3]);
      assert.match(describeSplit(cpuSplitOf(2)), /^Temporal server and PostgreSQL on core 0; workers, sandbox and driver on core 1 \(taskset\)$/);
      // A real process with threads of its own (node), moved as the server is: the kernel then allows it core 0 only.
      // It says so once its script runs: by then node has its platform threads (at 'spawn' it may have
      // only its first, which once failed this test on a busy CI machine).
      const child = spawn(process.execPath, ['-e', "process.stdout.write('ready\\n'); setInterval(() => {}, 1000)"], {
        stdio: ['ignore', 'pipe', 'ignore'],
      });
      try {
        await new Promise((resolve, reject) => {
          child.stdout.once('data', resolve);
          child.once('error', reject);
        });
        pinServer(cpuSplitOf(2)!, child.pid!);
        assert.equal(allowedCores(child.pid!), '0');
        const threads = readdirSync(`/proc/${child.pid}/task`);
        assert.ok(threads.length > 1, `node runs several threads (${threads.length} listed)`);
        for (const thread of threads)
          assert.match(readFileSync(`/proc/${child.pid}/task/${thread}/status`, 'utf8'), /^Cpus_allowed_list:\s*0$/m, `thread ${thread}`);
      } finally {
        child.kill('SIGKILL');
      }
    },
  );

  void it('puts other load on every core it is given until stopped, and says what share of the cores it leaves', async () => {
    assert.equal(OtherLoad.start(0).coresLeft, 1);
    const load = OtherLoad.start(60, 1);
    assert.ok(Math.abs(load.coresLeft - 0.4) < 1e-9);
    // 60 ms of every 100 on one core: about 600 ms of its own a second. Read until it has used 200 ms
    // (a suite on a busy machine gave it 190 ms in its first second), within 20 s at most.
    let used = 0;
    for (const deadline = Date.now() + 20_000; used < 200 && Date.now() < deadline; used = load.cpuMs())
      await new Promise((resolve) => setTimeout(resolve, 100));
    await load.stop();
    assert.ok(used >= 200, `its process used ${used} ms of CPU in 20 s`);
    assert.equal(load.cpuMs(), 0, 'stopped: its process is gone');
  });

  void it('counts what two books completed while both ran: from the later start to the earlier end', () => {
    const both = bothRunning(
      { startMs: 1_000, endMs: 20_000, closesMs: [1_500, 2_000, 3_000, 9_000, 12_000, 19_000] },
      { startMs: 2_000, endMs: 10_000, closesMs: [2_500, 4_000, 9_500, 10_000] },
    );
    // From 2 s to 10 s: A's 2, 3 and 9 s, B's 2.5, 4, 9.5 and 10 s.
    assert.deepEqual(both, { fromMs: 2_000, toMs: 10_000, a: 3, b: 4, perSecond: 7 / 8, bShare: 4 / 7 });
    const disjoint = bothRunning({ startMs: 0, endMs: 1_000, closesMs: [500] }, { startMs: 2_000, endMs: 3_000, closesMs: [2_500] });
    assert.deepEqual([disjoint.a, disjoint.b], [0, 0]);
    assert.ok(Number.isNaN(disjoint.perSecond) && Number.isNaN(disjoint.bShare));
    assert.equal(
      weightShare(
        new Map([
          ['a', 1],
          ['b', 1],
        ]),
        'a',
        'b',
      ),
      0.5,
    );
    assert.equal(weightShare(new Map([['b', 3]]), 'a', 'b'), 0.75);
    assert.equal(weightShare(new Map(), 'a', 'b'), 0.5);
  });

  void it("spreads the night's live connections over what the night should take: half of A and B at what the cores or the budget carry, A's other half at its lowered limit", () => {
    // (1000 + 200) / min(8/s, 30/3 = 10/s) = 150 s, then 1000 / (10/3 per s) = 300 s.
    assert.equal(expectedNightMs({ a: 2000, b: 200, capacityRps: 8, budgetRps: 60, aLimit: 10, requestsPerRefresh: 3 }), 450_000);
    // Without a capacity figure, the budget alone.
    assert.equal(expectedNightMs({ a: 2, b: 0, capacityRps: NaN, budgetRps: 60, aLimit: 10, requestsPerRefresh: 3 }), 400);
  });

  void it("prints the night's line the issue asks for, reads it back, and marks its targets", () => {
    const night: NightFigures = {
      refreshes: 2200,
      lost: 0,
      failed: 0,
      live: { count: 100, p50: 120, p99: 300 },
      liveIdle: { count: 100, p50: 80, p99: 200 },
      aMedianS: 3,
      aAloneMedianS: 2,
      bMedianS: 2.2,
      bAloneMedianS: 2,
      throughputRps: 6.3,
      capacityRps: 9,
      budgetRefreshRps: 20,
      bShare: 0.47,
      bWeightShare: 0.5,
      budgetExceededS: 0,
    };
    const line = nightLine(night);
    assert.equal(
      line,
      "night: 2200 refreshes, 0 lost, 0 failed, live answer p50 120 ms (1.50x idle) p99 300 ms (1.50x idle), refresh median A 1.50x B 1.10x alone, throughput 6.3/s (70% of what the cores carry), B's share 47% (weight 50%), budget exceeded 0 s",
    );
    assert.deepEqual(parseNightLine(line), {
      refreshes: 2200,
      lost: 0,
      failed: 0,
      liveP50Ms: 120,
      liveP50Ratio: 1.5,
      liveP99Ms: 300,
      liveP99Ratio: 1.5,
      aRatio: 1.5,
      bRatio: 1.1,
      throughputRps: 6.3,
      capacityPercent: 70,
      bSharePercent: 47,
      weightPercent: 50,
      budgetExceededS: 0,
    });
    const missing = parseNightLine(nightLine({ ...night, live: { count: 0, p50: NaN, p99: NaN }, bShare: NaN }));
    assert.ok(missing && Number.isNaN(missing.liveP50Ms) && Number.isNaN(missing.bSharePercent));
    assert.equal(parseNightLine(line.replace('night:', 'night (off):')), undefined);
    const targets = nightTargetsLine(night);
    assert.match(targets, /A median <= 1\.5x alone met \(1\.50x\); B median <= 1\.5x alone met/);
    // 6.3/s against the lower of the cores' 9/s and the budget's 20/s: 70%; B's 47% of its weight's 50%: 94%.
    assert.match(targets, /throughput >= 60% of min\(cores 9\.0\/s, budget 20\.0\/s\) met \(70%\); B's share >= 90% of its weight's met \(94%\)/);
    assert.match(
      nightTargetsLine({ ...night, bShare: 0.3, throughputRps: 5 }),
      /throughput .* MISSED \(56%\); B's share >= 90% of its weight's MISSED \(60%\)/,
    );
    assert.doesNotMatch(targets, /replay/, 'no replay figure: none printed');
    assert.match(nightTargetsLine({ ...night, nondeterminism: 1 }), /; refreshes replay with 0 nondeterminism MISSED \(1\)$/);
    assert.doesNotMatch(targets, /first challenge/, 'no first challenge figure: none printed');
    const challenge = (p99: number) => ({ count: 10, p50: p99 / 2, p99 });
    assert.match(
      nightTargetsLine({ ...night, firstChallenge: challenge(300), firstChallengeIdle: challenge(150) }),
      /; live first challenge p99 <= 2x idle met \(2\.00x\); A median/,
    );
    assert.match(
      nightTargetsLine({ ...night, firstChallenge: challenge(301), firstChallengeIdle: challenge(150) }),
      /live first challenge p99 <= 2x idle MISSED \(2\.01x\)/,
    );
  });

  void it('turns priority and fairness off only where the runs must differ', () => {
    assert.deepEqual(serverSettingsOf('on'), {});
    assert.deepEqual(serverSettingsOf('off'), { 'matching.enableFairness': false });
    assert.deepEqual(policyOf('off').keys, { live: 3, pipeline: 3, scheduled: 3, maintenance: 3 });
    assert.equal(policyOf('off').tenantWeights.size, 0);
    assert.equal(policyOf('on').keys.live, 1);
    assert.equal(workerPriorityEnv('on').TENANT_WEIGHTS, 'tenant-a:1,tenant-b:1');
    assert.equal(workerPriorityEnv('off').PRIORITY_LIVE, '3');
  });

  void it('reads its command line, refusing a service limit that is not below the budget', () => {
    const options = parseBurstArgs(['--storm', '--a', '60', '--b', '12', '--live', '4', '--only', 'off', '--window', '10', '--seed', '3'], () => 1);
    assert.ok(options);
    assert.deepEqual(
      [options.scenario, options.a, options.b, options.live, options.modes, options.windowMs, options.seed, options.deadlineMs],
      ['storm', 60, 12, 4, ['off'], 10_000, 3, 900_000],
    );
    assert.deepEqual(parseBurstArgs(['--storm'], () => 1)?.modes, ['on', 'off']);
    // The night by default: priority and fairness on, each book alone first (B's whole book, as many of A's, at most 200).
    const defaults = parseBurstArgs([], () => 9);
    assert.deepEqual(
      [
        defaults?.scenario,
        defaults?.a,
        defaults?.b,
        defaults?.live,
        defaults?.aloneA,
        defaults?.aloneB,
        defaults?.modes,
        defaults?.budgetRps,
        defaults?.tenantBudgetRps,
        defaults?.seed,
        defaults?.deadlineMs,
      ],
      ['night', 2000, 200, 50, 200, 200, ['on'], 60, 40, 9, 1_800_000],
    );
    assert.deepEqual([parseBurstArgs(['--a', '40', '--b', '8'], () => 1)?.aloneA, parseBurstArgs(['--a', '40', '--b', '8'], () => 1)?.aloneB], [8, 8]);
    assert.deepEqual(
      [
        parseBurstArgs(['--a', '40', '--b', '8', '--alone', '20'], () => 1)?.aloneA,
        parseBurstArgs(['--a', '40', '--b', '8', '--alone', '20'], () => 1)?.aloneB,
      ],
      [20, 8],
    );
    assert.deepEqual(parseBurstArgs(['--only', 'off'], () => 1)?.modes, ['off']);
    assert.equal(defaults?.floorRuns, 30);
    assert.equal(parseBurstArgs(['--floor-runs', '0'], () => 1)?.floorRuns, 0);
    assert.equal(defaults?.otherLoadPercent, 0);
    assert.equal(parseBurstArgs(['--other-load', '40'], () => 1)?.otherLoadPercent, 40);
    assert.throws(() => parseBurstArgs(['--other-load', '95'], () => 1), /--other-load must be an integer from 0 to 90, got "95"/);
    assert.throws(() => parseBurstArgs(['--storm', '--other-load', '40'], () => 1), /--other-load is for the night/);
    // The storm splits the cores by default (Temporal apart, as in production); the night does not.
    assert.equal(parseBurstArgs(['--storm'], () => 1)?.cpuSplit, true);
    assert.equal(defaults?.cpuSplit, false);
    assert.equal(parseBurstArgs(['--storm', '--cpu-split', 'off'], () => 1)?.cpuSplit, false);
    assert.equal(parseBurstArgs(['--cpu-split', 'on'], () => 1)?.cpuSplit, true);
    assert.throws(() => parseBurstArgs(['--cpu-split', 'yes'], () => 1), /--cpu-split must be on or off, got "yes"/);
    assert.throws(() => parseBurstArgs(['--floor-runs', '-1'], () => 1), /--floor-runs must be an integer from 0 to 1000, got "-1"/);
    assert.equal(
      parseBurstArgs(['--help'], () => 1),
      undefined,
    );
    assert.throws(() => parseBurstArgs(['--a-limit', '40'], () => 1), BurstArgumentError);
    assert.throws(() => parseBurstArgs(['--only', 'both'], () => 1), /--only must be on or off/);
    assert.throws(() => parseBurstArgs(['--a', '0'], () => 1), /--a must be an integer from 1 to 20000, got "0"/);
    // The night's workers: one of them the unattended pool's at the lowest CPU priority; the storm one shared pool.
    assert.deepEqual([defaults?.workers, defaults?.unattendedWorkers, defaults?.unattendedNice], [3, 1, 19]);
    assert.equal(parseBurstArgs(['--storm'], () => 1)?.unattendedWorkers, 0);
    assert.deepEqual(
      [parseBurstArgs(['--unattended-workers', '0'], () => 1)?.unattendedWorkers, parseBurstArgs(['--unattended-nice', '5'], () => 1)?.unattendedNice],
      [0, 5],
    );
    assert.throws(
      () => parseBurstArgs(['--workers', '2', '--unattended-workers', '2'], () => 1),
      /--unattended-workers \(2\) must leave the service queue a worker of the 2/,
    );
    assert.throws(() => parseBurstArgs(['--unattended-nice', '20'], () => 1), /--unattended-nice must be an integer from 0 to 19, got "20"/);
    // The pool in every worker process: no workers of its own.
    const inProcess = parseBurstArgs(['--unattended-in-process'], () => 1);
    assert.deepEqual([inProcess?.unattendedInProcess, inProcess?.unattendedWorkers, defaults?.unattendedInProcess], [true, 0, false]);
    assert.throws(
      () => parseBurstArgs(['--unattended-in-process', '--unattended-workers', '1'], () => 1),
      /--unattended-in-process runs the unattended pool in every worker: not with --unattended-workers 1/,
    );
  });
});

void describe('npm run bench:burst', () => {
  void it('refuses a bad argument with exit code 2, naming it', async () => {
    const { code, output } = await runHarness(ENTRY, ['--live', 'many'], 60_000);
    assert.equal(code, 2, failureReport(output));
    assert.match(output, /--live must be an integer from 1 to 1000, got "many"/);
  });

  void it(
    "runs a small night on the production stack: both books' Schedules triggered, the night line parses, nothing lost or failed",
    { timeout: RUN_TIMEOUT_MS + 20_000, skip: skipRun },
    async () => {
      // The unattended pool at nice 0 here: the suite shares the cores with other files, which would starve a niced worker.
      const run = await runHarness(
        ENTRY,
        ['--a', '40', '--b', '8', '--live', '4', '--deadline', '240', '--floor-runs', '0', '--unattended-nice', '0'],
        RUN_TIMEOUT_MS,
        'SIGTERM',
      );
      const report = `\n${failureReport(run.output)}`;
      const last = run.stdout.trimEnd().split('\n').at(-1) ?? '';
      const night = parseNightLine(last);
      assert.ok(night, `the last line is the night's${report}`);
      assert.equal(night.refreshes, 40 + 8, report);
      assert.deepEqual([night.lost, night.failed], [0, 0], report);
      // Each book alone first (B's whole book, as many of A's), and what the cores carry from them.
      assert.match(run.stdout, /^alone: tenant-b's book of 8 \(alone\) alone: 8 refreshed, 0 failed, 0 lost/m, report);
      assert.match(run.stdout, /^alone: tenant-a's book of 8 \(alone\) alone: 8 refreshed, 0 failed, 0 lost/m, report);
      assert.match(
        run.stdout,
        /^capacity: alone a book's refresh costs the stack [\d.]+ ms .*so [\d.]+ cores carry at most [\d.]+ refreshes a second/m,
        report,
      );
      // The Schedules were triggered, and each refresh ran its window from the product's defaults.
      assert.match(run.stdout, /^night: book-tenant-a:nightly \(40\) and book-tenant-b:nightly \(8\), daily at \d\d:\d\d UTC, triggered together/m, report);
      assert.match(run.stdout, /^books: window floor 2, ceiling 50, start 4, page size 500 /m, report);
      // The books ran on the unattended pool's worker, the live connections on the service pool's two.
      assert.match(run.stdout, /3 worker\(s\) : 2 polling burst-on-\S+, 1 the unattended pool's burst-on-\S+-unattended/, report);
      assert.match(run.stdout, /^ {2}window A: polled \d+ times, size min \d+/m, report);
      assert.match(run.stdout, /^ {2}budget exceeded: fleet in \d+ s, a tenant in \d+ s/m, report);
      assert.match(run.stdout, /^ {2}both books running \+[\d.]+s to \+[\d.]+s: A \d+ and B \d+ completed/m, report);
      // Every run of the four refreshes (two alone, two at night; one page each) replayed from its history.
      assert.match(run.stdout, /^ {2}replayed 4 refresh runs: 0 nondeterminism, 0 replay errors$/m, report);
      assert.match(run.stdout, /refreshes replay with 0 nondeterminism met \(0\)/, report);
      assert.equal(run.code, 0, report);
    },
  );

  void it(
    'runs a small storm on the production stack (--storm): the summary line parses, nothing lost or failed',
    { timeout: RUN_TIMEOUT_MS + 20_000, skip: skipRun },
    async () => {
      const run = await runHarness(
        ENTRY,
        ['--storm', '--a', '60', '--b', '12', '--live', '4', '--only', 'on', '--window', '10', '--deadline', '240', '--floor-runs', '3'],
        RUN_TIMEOUT_MS,
        'SIGTERM',
      );
      const report = `\n${failureReport(run.output)}`;
      const last = run.stdout.trimEnd().split('\n').at(-1) ?? '';
      const summary = parseSummaryLine(last);
      assert.ok(summary, `the last line is the summary${report}`);
      assert.equal(summary.connections, 4 + 12 + 60 + 12 + 4, `every phase's connections counted${report}`);
      assert.deepEqual([summary.lost, summary.failed], [0, 0], report);
      assert.match(run.stdout, /^ {2}budget exceeded: fleet in \d+ s, a tenant in \d+ s/m, report);
      // What a refresh costs the stack alone, and how busy the start window kept the machine against it.
      assert.match(run.stdout, /^alone: 12 refreshes of tenant-b .*; stack CPU [\d.]+ ms a refresh \(beyond its idle \d+ ms a second\)$/m, report);
      // Under the CPU split (the storm's default on 2 cores or more) each side's share too, at its own cost a refresh.
      const sides =
        availableParallelism() >= 2
          ? String.raw` \(Temporal's core 0 [\d.]+ at [\d.]+ ms of the server's and PostgreSQL's a refresh, the rest's [\d-]+ [\d.]+ at [\d.]+ ms of the workers' and the sandbox's\)`
          : '';
      assert.match(
        run.stdout,
        new RegExp(String.raw`^ {2}cpu, start window.*so [\d.]+ cores carry at most [\d.]+ refreshes a second${sides}; the window started 7\.2 a second`, 'm'),
        report,
      );
      // The connection's cost against the SDK floor's, just above the summary.
      const beforeLast = run.stdout.trimEnd().split('\n').at(-2) ?? '';
      assert.match(
        beforeLast,
        /^connection vs SDK floor: start→result [\d.]+ \/ [\d.]+ ms \([\d.]+x\), worker CPU [\d.]+ \/ [\d.]+ ms \([\d.]+x\), 3 runs each, alternating$/,
        report,
      );
      assert.equal(run.code, 0, report);
    },
  );
});
