/**
 * The chaos run and the production check, run by tests as a user runs them: the entry as a
 * subprocess in its own process group (a timeout stops it with every server and worker it started),
 * and its one-line summary read and checked against zero.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface HarnessExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  /** stdout and stderr as they came, for failure messages. */
  readonly output: string;
}

/**
 * Runs `entry` (relative to the project) with `args`. At `timeoutMs` the group gets `stopSignal`
 * (SIGTERM lets a harness stop what is not its child, e.g. PostgreSQL), then SIGKILL 5 s later.
 */
export function runHarness(entry: string, args: readonly string[], timeoutMs: number, stopSignal: 'SIGTERM' | 'SIGKILL' = 'SIGKILL'): Promise<HarnessExit> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', entry, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let output = '';
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
      output += chunk.toString('utf8');
    });
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    const timer = setTimeout(() => {
      output += `\n[test] no end after ${timeoutMs} ms: ${stopSignal} to the process group\n`;
      if (child.pid !== undefined) process.kill(-child.pid, stopSignal);
      if (stopSignal !== 'SIGKILL') setTimeout(() => child.pid !== undefined && child.exitCode === null && process.kill(-child.pid, 'SIGKILL'), 5_000).unref();
    }, timeoutMs);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, output });
    });
  });
}

export function tail(output: string, lines = 100): string {
  return output.trimEnd().split('\n').slice(-lines).join('\n');
}

/** Where a harness's report says what went wrong: a title line, up to the next blank line. */
const TROUBLE_TITLES = [/^Connections that did not end as expected$/, /^Stuck: /];
/** Single lines worth reading first wherever they are (a worker's nondeterminism, a replay's, security:check's attack that got through). */
const TROUBLE_LINE = /\[TMPRL1100\]|Nondeterminism|nondeterminism error|^\s*GOT THROUGH /;
const TROUBLE_LINES_KEPT = 10;

/**
 * What a failed harness assertion shows: the report's trouble lines first, then its last lines.
 * The runner keeps a failure's first and last lines only (scripts/lib/failure-excerpt.mjs), and a
 * harness's diagnosis sits in the middle of its report, so it leads here or CI never shows it.
 */
export function failureReport(output: string): string {
  const lines = output.trimEnd().split('\n');
  const trouble: string[] = [];
  for (const [start, line] of lines.entries()) {
    if (TROUBLE_TITLES.some((title) => title.test(line))) {
      const end = lines.findIndex((text, i) => i > start && text.trim() === '');
      trouble.push(...lines.slice(start, end < 0 ? undefined : end));
    } else if (TROUBLE_LINE.test(line)) trouble.push(line);
  }
  const kept = trouble.slice(0, TROUBLE_LINES_KEPT).map((line) => line.slice(0, 280));
  const lead =
    kept.length > 0
      ? [...kept, ...(trouble.length > kept.length ? [`(${trouble.length - kept.length} more trouble line(s) below)`] : []), '--- the last lines ---']
      : [];
  return [...lead, tail(output)].join('\n');
}

/**
 * The summary line `<name>: N connections, N completed as expected, 0 unexpected failures, 0 stuck,
 * 0 duplicate answers, 0 data mismatches` is stdout's last line and the run exited 0.
 */
export function assertCleanSummary(name: string, { code, signal, stdout, output }: HarnessExit): void {
  const pattern = new RegExp(
    `^${name}: (\\d+) connections, (\\d+) completed as expected, (\\d+) unexpected failures, (\\d+) stuck, (\\d+) duplicate answers, (\\d+) data mismatches$`,
    'm',
  );
  const summary = pattern.exec(stdout);
  assert.ok(summary, `no summary line (exit ${code ?? signal}):\n${failureReport(output)}`);
  const [, total, expected, unexpected, stuck, duplicates, mismatches] = summary.map(Number);
  const report = `\n${failureReport(output)}`;
  assert.ok((total ?? 0) > 0, report);
  assert.equal(unexpected, 0, `unexpected failures${report}`);
  assert.equal(stuck, 0, `stuck connections${report}`);
  assert.equal(duplicates, 0, `duplicate answers${report}`);
  assert.equal(mismatches, 0, `data mismatches${report}`);
  assert.equal(expected, total, `every connection completed as expected${report}`);
  assert.equal(stdout.trimEnd().split('\n').at(-1), summary[0], 'the summary line is the last line of stdout');
  assert.equal(code, 0, `exit code${report}`);
}
