/**
 * `npm run chaos:soak`'s command line and its lines: which chaos runs it makes (seeds, sizes, the
 * query run), each run's verdict, and the one line it ends with. The entry is soak.ts.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { ChaosArgumentError, MIN_QUERY_EVERY_MS, parseChaosArgs } from './options.js';
import { readCommandLine, type CommandLine } from '../lib/cli-options.js';
import { seededRandom } from './random.js';
import type { ParsedChaosSummary } from './report.js';

/** A kept run's whole output (stdout and stderr), beside chaos's own files in its run directory. */
export const CHAOS_OUTPUT_FILE = 'chaos-output.txt';

export const SOAK_DEFAULTS = {
  runs: 10,
  connections: 150,
  replyDelayMs: 2_000,
  queryEveryMs: 100,
  /** A 150-connection run takes 3 to 6 minutes on 2 cores; one that takes this long is stopped and fails. */
  runTimeoutMs: 45 * 60_000,
} as const;

export const SOAK_USAGE = `usage: npm run chaos:soak -- [options] [chaos options]

Runs the chaos harness (npm run chaos) as a subprocess once per seed, one run after another: --runs
runs, then one more whose every running connection's state is queried every --query-every-ms (the
query run). Prints each run's summary line with its seed as it ends, keeps the run directory of any
run that is not clean (with its output in chaos-output.txt and, for stuck connections, their
diagnosis in stuck-diagnosis.txt), and ends with
  soak: <n> runs, <n> connections, <n> completed as expected, <n> unexpected failures, <n> stuck, <n> duplicate answers, <n> data mismatches, <n> nondeterminism, <n> replay errors, <n> failed runs; seeds <s>, ...
Exit 0 only when every run is clean (exit 0, a summary line, every connection completed as expected,
nothing stuck, duplicated, mismatched or nondeterministic); 2 for a bad argument; 1 otherwise.

  --runs N                  chaos runs without the query load, each with its own seed (default ${SOAK_DEFAULTS.runs})
  --query-run on|off        one more run with the state queries (default on)
  --query-every-ms Q        the query run's interval, in ms (default ${SOAK_DEFAULTS.queryEveryMs})
  --seed S                  seed of the runs' seeds (default: random, printed): repeats a whole soak
  --run-timeout-ms T        a run not ended after T ms is stopped (SIGTERM, its directory kept) and
                            fails (default ${SOAK_DEFAULTS.runTimeoutMs})
  --keep-logs               keep every run's directory, clean or not
  --help                    this text

Any other option goes to every chaos run (npm run chaos -- --help lists them); the soak's defaults
are --connections ${SOAK_DEFAULTS.connections} --reply-delay-ms ${SOAK_DEFAULTS.replyDelayMs}, e.g.
  npm run chaos:soak -- --runs 3 --connections 40 --workers 3`;

export interface SoakRun {
  /** 1-based, in the order run. */
  readonly index: number;
  readonly seed: number;
  /** Set on the query run. */
  readonly queryEveryMs?: number | undefined;
  /** The chaos arguments, complete (--seed and --keep-logs included). */
  readonly args: readonly string[];
}

export interface SoakOptions {
  readonly soakSeed: number;
  readonly runTimeoutMs: number;
  readonly keepLogs: boolean;
  /** The chaos options every run gets (the soak's size defaults filled in). */
  readonly chaosArgs: readonly string[];
  readonly runs: readonly SoakRun[];
}

const VALUE_OPTIONS = ['--runs', '--query-run', '--query-every-ms', '--seed', '--run-timeout-ms'] as const;
const FLAG_OPTIONS = ['--keep-logs', '--help'] as const;
const OWN_OPTIONS: readonly string[] = [...VALUE_OPTIONS, ...FLAG_OPTIONS];

function wholeNumber(name: string, text: string, min: number, max: number, unit = ''): number {
  if (!/^\d+$/.test(text)) throw new ChaosArgumentError(name, `must be a whole number from ${min} to ${max}${unit} (got ${JSON.stringify(text)})`);
  const value = Number(text);
  if (value < min || value > max) throw new ChaosArgumentError(name, `must be from ${min} to ${max}${unit} (got ${value})`);
  return value;
}

/** `count` distinct seeds drawn from `soakSeed` (the same soak seed gives the same run seeds). */
export function runSeeds(soakSeed: number, count: number): number[] {
  const random = seededRandom(soakSeed);
  const seeds = new Set<number>();
  while (seeds.size < count) seeds.add(Math.floor(random.next() * 2 ** 31));
  return [...seeds];
}

/**
 * The soak's own options, read by the shared reader (each mistake refused by name), and the rest of
 * argv as typed, for chaos. Which words are the soak's parseArgs's tokens say: an option of its own
 * and, given after it rather than with `=`, its value; the words of any other option stay in order.
 */
function splitOwn(argv: readonly string[]): { own: CommandLine; passed: string[] } {
  const options: NonNullable<ParseArgsConfig['options']> = {};
  for (const flag of FLAG_OPTIONS) options[flag.slice(2)] = { type: 'boolean' };
  for (const option of VALUE_OPTIONS) options[option.slice(2)] = { type: 'string' };
  const { tokens } = parseArgs({ args: [...argv], options, strict: false, allowPositionals: true, tokens: true });
  const ownWords = new Set<number>();
  for (const token of tokens) {
    if (token.kind !== 'option' || !OWN_OPTIONS.includes(token.rawName)) continue;
    ownWords.add(token.index);
    if (token.value !== undefined && !token.inlineValue) ownWords.add(token.index + 1);
  }
  const words = (own: boolean) => argv.filter((_, index) => ownWords.has(index) === own);
  const own = readCommandLine(words(true), { flags: FLAG_OPTIONS, values: VALUE_OPTIONS }, (name, problem) => new ChaosArgumentError(name, problem));
  return { own, passed: words(false) };
}

/**
 * Parses the arguments after `soak.ts`; undefined means --help was asked for. Its own options are
 * taken out, the rest passed to every chaos run, and each run's whole command line is checked by
 * the chaos harness's own parser here, before anything starts (a ChaosArgumentError names the option).
 */
export function parseSoakArgs(argv: readonly string[], randomSeed: () => number): SoakOptions | undefined {
  const {
    own: { flags, values },
    passed,
  } = splitOwn(argv);
  if (flags.has('--help')) return undefined;

  const runs = values.has('--runs') ? wholeNumber('--runs', values.get('--runs') ?? '', 0, 1_000) : SOAK_DEFAULTS.runs;
  const queryRunText = values.get('--query-run') ?? 'on';
  if (queryRunText !== 'on' && queryRunText !== 'off') throw new ChaosArgumentError('--query-run', `must be on or off (got ${JSON.stringify(queryRunText)})`);
  const queryRun = queryRunText === 'on';
  const queryEveryMs = values.has('--query-every-ms')
    ? wholeNumber('--query-every-ms', values.get('--query-every-ms') ?? '', MIN_QUERY_EVERY_MS, 3_600_000, ' ms')
    : SOAK_DEFAULTS.queryEveryMs;
  if (values.has('--query-every-ms') && !queryRun) throw new ChaosArgumentError('--query-every-ms', 'sets the query run, which --query-run off leaves out');
  if (runs === 0 && !queryRun) throw new ChaosArgumentError('--runs', 'is 0 and --query-run is off: nothing to run');
  const soakSeed = values.has('--seed') ? wholeNumber('--seed', values.get('--seed') ?? '', 0, 2 ** 32 - 1) : randomSeed();
  const runTimeoutMs = values.has('--run-timeout-ms')
    ? wholeNumber('--run-timeout-ms', values.get('--run-timeout-ms') ?? '', 60_000, 24 * 3_600_000, ' ms')
    : SOAK_DEFAULTS.runTimeoutMs;

  // The soak's sizes unless the caller gave their own.
  const given = (option: string) => passed.some((arg) => arg === option || arg.startsWith(`${option}=`));
  const chaosArgs = [
    ...(given('--connections') ? [] : ['--connections', String(SOAK_DEFAULTS.connections)]),
    ...(given('--reply-delay-ms') ? [] : ['--reply-delay-ms', String(SOAK_DEFAULTS.replyDelayMs)]),
    ...passed,
  ];
  const seeds = runSeeds(soakSeed, runs + (queryRun ? 1 : 0));
  const planned: SoakRun[] = seeds.map((seed, i) => {
    const isQueryRun = queryRun && i === runs;
    // Every run keeps its directory; the soak deletes the clean ones' (unless --keep-logs).
    const args = [...chaosArgs, ...(isQueryRun ? ['--query-every-ms', String(queryEveryMs)] : []), '--seed', String(seed), '--keep-logs'];
    return { index: i + 1, seed, queryEveryMs: isQueryRun ? queryEveryMs : undefined, args };
  });
  // --seed, --keep-logs, --query-every-ms and --help never get here: they are the soak's own.
  for (const run of planned) parseChaosArgs(run.args, () => 0);
  return { soakSeed, runTimeoutMs, keepLogs: flags.has('--keep-logs'), chaosArgs, runs: planned };
}

/** A run is clean when it exited 0 with a summary line saying every connection completed as expected and nothing went wrong. */
export function isClean(exitCode: number | null, summary: ParsedChaosSummary | undefined): boolean {
  return (
    exitCode === 0 &&
    summary !== undefined &&
    summary.connections > 0 &&
    summary.completedAsExpected === summary.connections &&
    summary.unexpectedFailures === 0 &&
    summary.stuck === 0 &&
    summary.duplicateAnswers === 0 &&
    summary.dataMismatches === 0 &&
    summary.nondeterminism === 0 &&
    summary.replayErrors === 0
  );
}

export interface SoakTotals {
  readonly runs: number;
  readonly connections: number;
  readonly completedAsExpected: number;
  readonly unexpectedFailures: number;
  readonly stuck: number;
  readonly duplicateAnswers: number;
  readonly dataMismatches: number;
  readonly nondeterminism: number;
  readonly replayErrors: number;
  readonly failedRuns: number;
  /** In run order, the query run's marked. */
  readonly seeds: readonly { readonly seed: number; readonly queryEveryMs?: number | undefined }[];
}

export interface FinishedRun {
  readonly run: SoakRun;
  readonly summary: ParsedChaosSummary | undefined;
  readonly clean: boolean;
}

export function soakTotals(finished: readonly FinishedRun[]): SoakTotals {
  const sum = (field: keyof Omit<ParsedChaosSummary, 'line' | 'failedQueries'>) => finished.reduce((total, { summary }) => total + (summary?.[field] ?? 0), 0);
  return {
    runs: finished.length,
    connections: sum('connections'),
    completedAsExpected: sum('completedAsExpected'),
    unexpectedFailures: sum('unexpectedFailures'),
    stuck: sum('stuck'),
    duplicateAnswers: sum('duplicateAnswers'),
    dataMismatches: sum('dataMismatches'),
    nondeterminism: sum('nondeterminism'),
    replayErrors: sum('replayErrors'),
    failedRuns: finished.filter(({ clean }) => !clean).length,
    seeds: finished.map(({ run }) => ({ seed: run.seed, queryEveryMs: run.queryEveryMs })),
  };
}

/** The soak's last line; its format is fixed (parseSoakSummaryLine). */
export function soakSummaryLine(totals: SoakTotals): string {
  const seeds = totals.seeds
    .map(({ seed, queryEveryMs }) => (queryEveryMs === undefined ? String(seed) : `${seed} (states queried every ${queryEveryMs} ms)`))
    .join(', ');
  return (
    `soak: ${totals.runs} runs, ${totals.connections} connections, ${totals.completedAsExpected} completed as expected, ${totals.unexpectedFailures} unexpected failures, ` +
    `${totals.stuck} stuck, ${totals.duplicateAnswers} duplicate answers, ${totals.dataMismatches} data mismatches, ${totals.nondeterminism} nondeterminism, ` +
    `${totals.replayErrors} replay errors, ${totals.failedRuns} failed runs; seeds ${seeds || 'none'}`
  );
}

const SOAK_SUMMARY =
  /^soak: (\d+) runs, (\d+) connections, (\d+) completed as expected, (\d+) unexpected failures, (\d+) stuck, (\d+) duplicate answers, (\d+) data mismatches, (\d+) nondeterminism, (\d+) replay errors, (\d+) failed runs; seeds (.+)$/m;

/** The soak summary line found in `text` (the soak's whole stdout will do), or undefined. */
export function parseSoakSummaryLine(text: string): (Omit<SoakTotals, 'seeds'> & { readonly line: string; readonly seeds: readonly number[] }) | undefined {
  const match = SOAK_SUMMARY.exec(text);
  if (!match) return undefined;
  const [line, ...groups] = match;
  const [runs, connections, completedAsExpected, unexpectedFailures, stuck, duplicateAnswers, dataMismatches, nondeterminism, replayErrors, failedRuns] = groups
    .slice(0, 10)
    .map(Number);
  const seeds = (groups[10] ?? '').split(', ').flatMap((entry) => (/^\d+/.test(entry) ? [Number(/^\d+/.exec(entry)?.[0])] : []));
  return {
    line,
    runs: runs ?? 0,
    connections: connections ?? 0,
    completedAsExpected: completedAsExpected ?? 0,
    unexpectedFailures: unexpectedFailures ?? 0,
    stuck: stuck ?? 0,
    duplicateAnswers: duplicateAnswers ?? 0,
    dataMismatches: dataMismatches ?? 0,
    nondeterminism: nondeterminism ?? 0,
    replayErrors: replayErrors ?? 0,
    failedRuns: failedRuns ?? 0,
    seeds,
  };
}
