/**
 * `npm run chaos:soak`: the chaos harness run again and again with different seeds, by default ten
 * runs of `--connections 150 --reply-delay-ms 2000` and one more with every running connection's
 * state queried every 100 ms (`--query-every-ms`), one after another, each as a subprocess
 * (`chaos.ts` in its own process group). Each run's summary line is printed with its seed as the run
 * ends. Every run is started with --keep-logs; the directory of a clean run is then deleted (unless
 * the soak's own --keep-logs), that of any other run kept with the run's whole output in
 * chaos-output.txt beside its stuck-diagnosis.txt, database, logs, histories and payload key.
 * It ends with one line (soakSummaryLine):
 *   soak: <n> runs, <n> connections, <n> completed as expected, <n> unexpected failures, <n> stuck, <n> duplicate answers, <n> data mismatches, <n> nondeterminism, <n> replay errors, <n> failed runs; seeds <s>, ...
 * Exit 0 only when every run is clean; 2 for a bad argument; 1 otherwise; 130 when interrupted.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { existsSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ChaosArgumentError } from './options.js';
import { parseChaosSummaryLine, type ParsedChaosSummary } from './report.js';
import {
  CHAOS_OUTPUT_FILE,
  isClean,
  parseSoakArgs,
  soakSummaryLine,
  soakTotals,
  SOAK_USAGE,
  type FinishedRun,
  type SoakOptions,
  type SoakRun,
} from './soak-options.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CHAOS_ENTRY = 'scripts/chaos/chaos.ts';
/** After a SIGTERM, chaos kills its processes and exits; if it has not after this long, SIGKILL to its group. */
const STOP_GRACE_MS = 15_000;
/** chaos.ts's run directories: mkdtemp(join(tmpdir(), 'aggregation-chaos-')). */
const RUN_DIR_PREFIX = 'aggregation-chaos-';
const STUCK_DIAGNOSIS_FILE = 'stuck-diagnosis.txt';
/** Lines of a troubled section of chaos's report repeated in the soak's output. */
const MAX_SECTION_LINES = 40;

function log(line: string): void {
  process.stdout.write(`${line}\n`);
}

function duration(ms: number): string {
  const total = Math.round(ms / 1_000);
  const minutes = Math.floor(total / 60);
  return minutes > 0 ? `${minutes}m ${String(total % 60).padStart(2, '0')}s` : `${(ms / 1_000).toFixed(1)}s`;
}

function runLabel(run: SoakRun, of: number): string {
  return `run ${run.index}/${of}${run.queryEveryMs === undefined ? '' : ` (states queried every ${run.queryEveryMs} ms)`}, seed ${run.seed}`;
}

interface ChaosExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  /** stdout and stderr as they came. */
  readonly output: string;
  readonly timedOut: boolean;
}

/** The chaos run under way, so an interrupted or exiting soak stops it (with everything it started). */
let current: ChildProcess | undefined;
let interrupted = false;

function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // Already gone.
  }
}

/** SIGTERM to the run's group (chaos kills its servers and workers and keeps its directory), SIGKILL if it lingers. */
function stopRun(child: ChildProcess): void {
  signalGroup(child, 'SIGTERM');
  setTimeout(() => signalGroup(child, 'SIGKILL'), STOP_GRACE_MS).unref();
}

function runChaos(args: readonly string[], timeoutMs: number): Promise<ChaosExit> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', CHAOS_ENTRY, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    current = child;
    let stdout = '';
    let output = '';
    let timedOut = false;
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
      output += chunk.toString('utf8');
    });
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    const timer = setTimeout(() => {
      timedOut = true;
      output += `\n[soak] no end after ${timeoutMs} ms: SIGTERM to the run's process group\n`;
      stopRun(child);
    }, timeoutMs);
    child.once('error', (error) => {
      clearTimeout(timer);
      current = undefined;
      reject(error);
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      current = undefined;
      resolvePromise({ code, signal, stdout, output, timedOut });
    });
  });
}

/** A run directory chaos made (never anything else: the soak deletes it). */
function chaosRunDir(stdout: string): string | undefined {
  const dir = /^chaos: run directory (\S+)$/m.exec(stdout)?.[1];
  if (dir === undefined) return undefined;
  const path = resolve(dir);
  return dirname(path) === resolve(tmpdir()) && basename(path).startsWith(RUN_DIR_PREFIX) ? path : undefined;
}

/** A section of chaos's report (from its title line to the next blank line), clipped. */
function section(stdout: string, title: RegExp): string[] {
  const lines = stdout.split('\n');
  const start = lines.findIndex((line) => title.test(line));
  if (start < 0) return [];
  const end = lines.findIndex((line, i) => i > start && line.trim() === '');
  const body = lines.slice(start, end < 0 ? undefined : end);
  return body.length > MAX_SECTION_LINES
    ? [...body.slice(0, MAX_SECTION_LINES), `... (${body.length - MAX_SECTION_LINES} more lines in the run's ${CHAOS_OUTPUT_FILE})`]
    : body;
}

function verdictOf(exit: ChaosExit, summary: ParsedChaosSummary | undefined): string {
  if (summary) return summary.line;
  const how = exit.timedOut ? 'stopped at the run timeout' : exit.signal ? `ended by ${exit.signal}` : `exit ${exit.code ?? '?'}`;
  return `no summary line (${how})`;
}

async function soakRun(run: SoakRun, options: SoakOptions): Promise<FinishedRun> {
  const of = options.runs.length;
  log(`soak: ${runLabel(run, of)}: started ${new Date().toISOString()}: chaos ${run.args.join(' ')}`);
  const startedAt = Date.now();
  const exit = await runChaos(run.args, options.runTimeoutMs);
  const took = Date.now() - startedAt;
  const summary = parseChaosSummaryLine(exit.stdout);
  const clean = isClean(exit.code, summary) && !exit.timedOut;
  log(`soak: ${runLabel(run, of)}, ${duration(took)}${clean ? '' : `, NOT CLEAN (exit ${exit.code ?? exit.signal ?? '?'})`}: ${verdictOf(exit, summary)}`);
  if (run.queryEveryMs !== undefined) for (const line of section(exit.stdout, /^State watchers: /).slice(0, 1)) log(`soak:   ${line}`);

  const runDir = chaosRunDir(exit.stdout);
  if (clean && !options.keepLogs) {
    if (runDir) await rm(runDir, { recursive: true, force: true });
    return { run, summary, clean };
  }
  if (runDir && existsSync(runDir)) {
    await writeFile(join(runDir, CHAOS_OUTPUT_FILE), exit.output);
    const diagnosis = join(runDir, STUCK_DIAGNOSIS_FILE);
    log(
      `soak:   run directory kept: ${runDir} (its output in ${CHAOS_OUTPUT_FILE}${existsSync(diagnosis) ? `; stuck connections diagnosed in ${diagnosis}` : ''})`,
    );
  } else if (!clean) {
    log(`soak:   no run directory to keep${runDir ? ` (${runDir} is gone)` : ''}; the run's last output:`);
    for (const line of exit.output.trimEnd().split('\n').slice(-30)) log(`soak:   | ${line}`);
  }
  if (!clean) {
    for (const line of [...section(exit.stdout, /^Connections that did not end as expected$/), ...section(exit.stdout, /^Stuck: /)]) log(`soak:   | ${line}`);
  }
  return { run, summary, clean };
}

async function main(): Promise<number> {
  let options: SoakOptions | undefined;
  try {
    options = parseSoakArgs(process.argv.slice(2), () => randomInt(0, 2 ** 31));
  } catch (error) {
    if (error instanceof ChaosArgumentError) {
      process.stderr.write(`soak: ${error.message}\n\n${SOAK_USAGE}\n`);
      return 2;
    }
    throw error;
  }
  if (options === undefined) {
    log(SOAK_USAGE);
    return 0;
  }

  const finished: FinishedRun[] = [];
  const onSignal = (signal: NodeJS.Signals) => {
    if (interrupted) return;
    interrupted = true;
    process.stderr.write(`\nsoak: ${signal}: stopping the run under way (its directory is kept)\n`);
    if (current) stopRun(current);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  const queryRuns = options.runs.filter((run) => run.queryEveryMs !== undefined);
  log(
    `soak: seed ${options.soakSeed}; ${options.runs.length} run(s) of chaos ${options.chaosArgs.join(' ')}` +
      (queryRuns.length > 0 ? ` (${options.runs.length - queryRuns.length} + 1 with states queried every ${queryRuns[0]?.queryEveryMs} ms)` : '') +
      `; run seeds ${options.runs.map((run) => run.seed).join(', ')}`,
  );
  const startedAt = Date.now();
  for (const run of options.runs) {
    if (interrupted) break;
    finished.push(await soakRun(run, options));
  }
  const totals = soakTotals(finished);
  log(`soak: ${interrupted ? `interrupted after ${finished.length} of ${options.runs.length} run(s), ` : ''}${duration(Date.now() - startedAt)} in all`);
  log(soakSummaryLine(totals));
  if (interrupted) return 130;
  return totals.failedRuns === 0 && finished.length === options.runs.length ? 0 : 1;
}

// No chaos run outlives the soak.
process.on('exit', () => {
  if (current) signalGroup(current, 'SIGKILL');
});
main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`soak: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
