/**
 * What a chaos run prints: the timeline of kills and the restart, a table per flow, every connection
 * that did not end as expected with what it went through, the stuck ones' diagnoses, the upstream
 * counts, the duplicate answers, failed queries by gRPC code (and what the state watchers of
 * `--query-every-ms` did), the replay of the run's histories and,
 * last, the one summary line (its format is fixed: tests and CI parse it; see parseChaosSummaryLine).
 */
import type { DuplicateReport, Judgement } from './checks.js';
import { diagnosisLine, formatDiagnosis } from './diagnosis.js';
import type { DriveRecord } from './driver.js';
import { FLOWS } from './flows.js';
import { addCounts, formatCodeCounts } from './grpc-codes.js';
import type { ProxyStats } from './proxy.js';
import { renderReplay, type ReplayReport } from './replay-run.js';
import type { ChaosRecord } from './schedule.js';
import { seconds, type TimelineEntry } from './timeline.js';

export interface ConnectionOutcome {
  readonly record: DriveRecord;
  readonly judgement: Judgement;
  /** Differences from the sandbox's own data; empty when equal or not checked. */
  readonly dataProblems: readonly string[];
}

export interface Summary {
  readonly connections: number;
  readonly completedAsExpected: number;
  readonly unexpectedFailures: number;
  readonly stuck: number;
  readonly duplicateAnswers: number;
  readonly dataMismatches: number;
  /** Connections whose end the driver could not learn (not counted as lost, not proven either). */
  readonly unknown: number;
  /** The driver's state queries that failed, by gRPC code name, over every connection. */
  readonly failedQueries: ReadonlyMap<string, number>;
  /** Connections with at least one failed query. */
  readonly connectionsWithFailedQueries: number;
}

export function summarize(outcomes: readonly ConnectionOutcome[], duplicates: DuplicateReport): Summary {
  const count = (verdict: Judgement['verdict']) => outcomes.filter((outcome) => outcome.judgement.verdict === verdict).length;
  const failedQueries = new Map<string, number>();
  for (const { record } of outcomes) addCounts(failedQueries, record.failedQueries);
  return {
    connections: outcomes.length,
    completedAsExpected: count('expected'),
    unexpectedFailures: count('unexpected'),
    stuck: count('stuck'),
    duplicateAnswers: duplicates.count,
    dataMismatches: outcomes.filter((outcome) => outcome.dataProblems.length > 0).length,
    unknown: count('unknown'),
    failedQueries,
    connectionsWithFailedQueries: outcomes.filter(({ record }) => record.failedQueries.size > 0).length,
  };
}

/** The last line of every run, exactly this format (`prod-check` prints the same counters under its own name). */
export function summaryLine(summary: Summary, name = 'chaos'): string {
  return (
    `${name}: ${summary.connections} connections, ${summary.completedAsExpected} completed as expected, ` +
    `${summary.unexpectedFailures} unexpected failures, ${summary.stuck} stuck, ${summary.duplicateAnswers} duplicate answers, ` +
    `${summary.dataMismatches} data mismatches`
  );
}

/**
 * The chaos run's last line: summaryLine, then what its histories' replay found and its failed
 * queries by gRPC code name, e.g.
 *   chaos: 21 connections, 21 completed as expected, 0 unexpected failures, 0 stuck, 0 duplicate answers, 0 data mismatches; replayed 21 histories, 0 nondeterminism, 0 replay errors; failed queries: UNAVAILABLE 4, DEADLINE_EXCEEDED 1
 * ("failed queries: none" when none failed).
 */
export function chaosSummaryLine(summary: Summary, replay: ReplayReport): string {
  return (
    `${summaryLine(summary)}; replayed ${replay.replayed} histories, ${replay.nondeterminism.length} nondeterminism, ${replay.errors.length} replay errors; ` +
    `failed queries: ${formatCodeCounts(summary.failedQueries)}`
  );
}

export interface ParsedChaosSummary {
  readonly line: string;
  readonly connections: number;
  readonly completedAsExpected: number;
  readonly unexpectedFailures: number;
  readonly stuck: number;
  readonly duplicateAnswers: number;
  readonly dataMismatches: number;
  readonly replayed: number;
  readonly nondeterminism: number;
  readonly replayErrors: number;
  readonly failedQueries: ReadonlyMap<string, number>;
}

const CHAOS_SUMMARY =
  /^chaos: (\d+) connections, (\d+) completed as expected, (\d+) unexpected failures, (\d+) stuck, (\d+) duplicate answers, (\d+) data mismatches; replayed (\d+) histories, (\d+) nondeterminism, (\d+) replay errors; failed queries: (none|[A-Za-z0-9_]+ \d+(?:, [A-Za-z0-9_]+ \d+)*)$/m;

/** The chaos summary line found in `text` (a run's whole stdout will do), or undefined. */
export function parseChaosSummaryLine(text: string): ParsedChaosSummary | undefined {
  const match = CHAOS_SUMMARY.exec(text);
  if (!match) return undefined;
  const [line, ...groups] = match;
  const [connections, completedAsExpected, unexpectedFailures, stuck, duplicateAnswers, dataMismatches, replayed, nondeterminism, replayErrors] = groups
    .slice(0, 9)
    .map(Number);
  const failedQueries = new Map<string, number>();
  const codes = groups[9] ?? 'none';
  if (codes !== 'none') {
    for (const entry of codes.split(', ')) {
      const [code = '', count = '0'] = entry.split(' ');
      failedQueries.set(code, Number(count));
    }
  }
  return {
    line,
    connections: connections ?? 0,
    completedAsExpected: completedAsExpected ?? 0,
    unexpectedFailures: unexpectedFailures ?? 0,
    stuck: stuck ?? 0,
    duplicateAnswers: duplicateAnswers ?? 0,
    dataMismatches: dataMismatches ?? 0,
    replayed: replayed ?? 0,
    nondeterminism: nondeterminism ?? 0,
    replayErrors: replayErrors ?? 0,
    failedQueries,
  };
}

/** What the state watchers (`--query-every-ms`) did over the whole run. */
export interface WatchSummary {
  readonly everyMs: number;
  /** Connections that had a watcher (those that started). */
  readonly connections: number;
  readonly sent: number;
  readonly answered: number;
  readonly failed: ReadonlyMap<string, number>;
  readonly skippedTicks: number;
  /** Of the answered queries, in ms; undefined when none was answered. */
  readonly latencyMs?: { readonly median: number; readonly p99: number; readonly max: number } | undefined;
}

function quantile(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? 0;
}

export function summarizeWatch(outcomes: readonly ConnectionOutcome[], everyMs: number): WatchSummary {
  const failed = new Map<string, number>();
  const latencies: number[] = [];
  let connections = 0;
  let sent = 0;
  let skippedTicks = 0;
  for (const { record } of outcomes) {
    const watch = record.watch;
    if (!watch) continue;
    connections += 1;
    sent += watch.sent;
    skippedTicks += watch.skippedTicks;
    addCounts(failed, watch.failed);
    for (const latency of watch.latenciesMs) latencies.push(latency);
  }
  latencies.sort((a, b) => a - b);
  return {
    everyMs,
    connections,
    sent,
    answered: latencies.length,
    failed,
    skippedTicks,
    latencyMs: latencies.length > 0 ? { median: quantile(latencies, 0.5), p99: quantile(latencies, 0.99), max: latencies.at(-1) ?? 0 } : undefined,
  };
}

function milliseconds(ms: number): string {
  return ms < 1_000 ? `${ms} ms` : seconds(ms);
}

/** The report's line on the state watchers. */
export function watchLine(watch: WatchSummary): string {
  const failedCount = [...watch.failed.values()].reduce((sum, count) => sum + count, 0);
  const latency = watch.latencyMs
    ? ` (median ${milliseconds(watch.latencyMs.median)}, p99 ${milliseconds(watch.latencyMs.p99)}, max ${milliseconds(watch.latencyMs.max)})`
    : '';
  return (
    `State watchers: every running connection's state queried every ${watch.everyMs} ms, one query in flight each: ` +
    `${watch.connections} connection(s) watched, ${watch.sent} queries sent, ${watch.answered} answered${latency}, ` +
    `${failedCount} failed (${formatCodeCounts(watch.failed)}); ${watch.skippedTicks} tick(s) skipped while the last query was still out`
  );
}

function recordWatchText(record: DriveRecord): string | undefined {
  const watch = record.watch;
  if (!watch) return undefined;
  return `state watcher: ${watch.sent} queries sent, ${watch.latenciesMs.length} answered, failed: ${formatCodeCounts(watch.failed)}; ${watch.skippedTicks} tick(s) skipped`;
}

/** Success means none lost, failed, stuck, duplicated or wrong, and every end known. */
export function passed(summary: Summary): boolean {
  return summary.unexpectedFailures === 0 && summary.stuck === 0 && summary.duplicateAnswers === 0 && summary.dataMismatches === 0 && summary.unknown === 0;
}

function table(rows: readonly (readonly string[])[], rightAligned: ReadonlySet<number>): string[] {
  const widths = rows[0]?.map((_, column) => Math.max(...rows.map((row) => (row[column] ?? '').length))) ?? [];
  return rows.map((row) =>
    row
      .map((cell, column) => (rightAligned.has(column) ? cell.padStart(widths[column] ?? 0) : cell.padEnd(widths[column] ?? 0)))
      .join('  ')
      .trimEnd(),
  );
}

function median(values: readonly number[]): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)];
}

function flowTable(outcomes: readonly ConnectionOutcome[]): string[] {
  const rows: string[][] = [['flow', 'n', 'answered by update/signal', 'expected', 'unexpected', 'stuck', 'unknown', 'data ✗', 'median time']];
  const order = new Map(FLOWS.map((flow, index) => [flow.name, index]));
  const byFlow = new Map<string, ConnectionOutcome[]>();
  for (const outcome of outcomes) {
    const name = outcome.record.plan.flow.name;
    byFlow.set(name, [...(byFlow.get(name) ?? []), outcome]);
  }
  for (const [name, group] of [...byFlow].sort(([a], [b]) => (order.get(a) ?? 0) - (order.get(b) ?? 0))) {
    const flow = group[0]?.record.plan.flow;
    // Connections that actually sent answers, by channel (no-MFA flows never get a challenge).
    const answeredBy = (channel: 'update' | 'signal') => group.filter(({ record }) => record.answers.some((answer) => answer.channel === channel)).length;
    const verdicts = (verdict: Judgement['verdict']) => String(group.filter((outcome) => outcome.judgement.verdict === verdict).length);
    const durations = group.flatMap(({ record }) =>
      record.startedAtMs !== undefined && record.endedAtMs !== undefined ? [record.endedAtMs - record.startedAtMs] : [],
    );
    const typical = median(durations);
    rows.push([
      `${flow?.group ?? ''}: ${name}`,
      String(group.length),
      answeredBy('update') + answeredBy('signal') > 0 ? `${answeredBy('update')}/${answeredBy('signal')}` : '-',
      verdicts('expected'),
      verdicts('unexpected'),
      verdicts('stuck'),
      verdicts('unknown'),
      String(group.filter((outcome) => outcome.dataProblems.length > 0).length),
      typical === undefined ? '-' : seconds(typical),
    ]);
  }
  return table(rows, new Set([1, 3, 4, 5, 6, 7, 8]));
}

function describeAnswers(record: DriveRecord): string {
  if (record.answers.length === 0) return 'no answer sent';
  return record.answers.map((answer) => `set ${answer.challengeSetId} ${answer.channel} → ${answer.result} @${seconds(answer.atMs)}`).join('; ');
}

function describeTransient(transient: ReadonlyMap<string, number>): string {
  return [...transient].map(([kind, count]) => `${kind} ×${count}`).join(', ');
}

function clipped(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 3)}...` : text;
}

/** The file of full diagnoses of the connections still running at the deadline; undefined when none was. */
export function stuckDiagnosisText(outcomes: readonly ConnectionOutcome[]): string | undefined {
  const lines: string[] = [];
  for (const { record } of outcomes) {
    const end = record.end;
    if (end.kind !== 'running') continue;
    if (lines.length > 0) lines.push('');
    if (end.diagnosis) lines.push(...formatDiagnosis(record.plan.key, end.diagnosis, record.failedQueries));
    else
      lines.push(
        `${record.plan.key} (workflow ${record.workflowId}): not diagnosed: ${end.diagnosisError ?? 'unknown'}`,
        `  failed queries by gRPC code: ${formatCodeCounts(record.failedQueries)}`,
      );
    if (end.state) lines.push(`  its state query answered: ${clipped(JSON.stringify(end.state), 2_000)}`);
    else if (end.stateError) lines.push(`  its state query failed: ${end.stateError}`);
    const watched = recordWatchText(record);
    if (watched) lines.push(`  its ${watched} (counted in the failed queries above)`);
  }
  return lines.length > 0 ? `${lines.join('\n')}\n` : undefined;
}

export interface ReportInput {
  readonly header: string;
  readonly timeline: readonly TimelineEntry[];
  readonly outcomes: readonly ConnectionOutcome[];
  readonly chaos: ChaosRecord;
  readonly proxy: ProxyStats;
  readonly replyDelayMs: number;
  readonly duplicates: DuplicateReport;
  readonly unexpectedWorkerExits: number;
  readonly failedWorkerStarts: number;
  readonly summary: Summary;
  /** Where stuckDiagnosisText was written, if it was. */
  readonly stuckDiagnosisFile?: string | undefined;
  /** The replay of the run's histories: given, the report ends with chaosSummaryLine instead of summaryLine. */
  readonly replay?: ReplayReport | undefined;
  /** The state watchers' interval (`--query-every-ms`): given and above 0, the report says what they did. */
  readonly queryEveryMs?: number | undefined;
}

export function renderReport(input: ReportInput): string[] {
  const { outcomes, chaos, proxy, duplicates } = input;
  const lines: string[] = [input.header, '', 'Timeline'];
  for (const entry of input.timeline) lines.push(`  +${seconds(entry.atMs).padStart(7)}  ${entry.text}`);
  const inWindow = chaos.kills.filter((kill) => kill.inWindow).length;
  lines.push(
    `  ${chaos.kills.length} worker SIGKILL(s), ${inWindow} while the proxy held the worker's Authorize answer reply; ` +
      `${input.unexpectedWorkerExits} polling worker(s) exited on their own, ${input.failedWorkerStarts} replacement(s) could not start; ` +
      `server restart: ${chaos.restart ? `at +${seconds(chaos.restart.atMs)}` : (chaos.restartSkipped ?? 'not asked for')}`,
  );
  for (const error of chaos.errors) lines.push(`  chaos error: ${error}`);

  lines.push('', 'Flows', ...flowTable(outcomes).map((line) => `  ${line}`));

  const troubled = outcomes.filter((outcome) => outcome.judgement.verdict !== 'expected' || outcome.dataProblems.length > 0);
  if (troubled.length > 0) {
    lines.push('', 'Connections that did not end as expected');
    for (const { record, judgement, dataProblems } of troubled) {
      const { plan } = record;
      const answering = record.answers.length > 0 || plan.flow.answers === 'wrong';
      lines.push(`  ${plan.key} [${plan.flow.name}${answering ? `, answers by ${plan.channel}` : ''}]`);
      if (judgement.verdict !== 'expected') lines.push(`    ${judgement.verdict}: ${judgement.detail ?? ''}`);
      for (const problem of dataProblems) lines.push(`    data: ${problem}`);
      if (answering) lines.push(`    answers: ${describeAnswers(record)}`);
      if (record.transient.size > 0) lines.push(`    Temporal calls retried: ${describeTransient(record.transient)}`);
      if (record.failedQueries.size > 0) lines.push(`    failed queries by gRPC code: ${formatCodeCounts(record.failedQueries, '×')}`);
      for (const [text, count] of record.notes) lines.push(`    driver: ${text}${count > 1 ? ` (×${count})` : ''}`);
      const watched = recordWatchText(record);
      if (watched) lines.push(`    ${watched}`);
    }
  }

  const stuck = outcomes.filter(({ record }) => record.end.kind === 'running');
  if (stuck.length > 0) {
    lines.push(
      '',
      `Stuck: ${stuck.length} connection(s) still running at the deadline${input.stuckDiagnosisFile ? `; full diagnoses in ${input.stuckDiagnosisFile}` : ''}`,
    );
    for (const { record } of stuck) {
      const end = record.end;
      if (end.kind !== 'running') continue;
      lines.push(
        `  ${record.plan.key}: ${end.diagnosis ? diagnosisLine(end.diagnosis, record.failedQueries) : `not diagnosed (${end.diagnosisError ?? 'unknown'}); failed queries: ${formatCodeCounts(record.failedQueries)}`}`,
      );
    }
  }

  lines.push('', 'Upstream, as the proxy saw it');
  const operations = [...proxy.byOperation].sort(([a], [b]) => a.localeCompare(b)).map(([operation, count]) => `${operation} ${count}`);
  lines.push(`  requests: ${operations.join(', ')}`);
  lines.push(`  by worker: ${[...proxy.byClient].map(([client, count]) => `${client} ${count}`).join(', ')}`);
  lines.push(
    `  Authorize replies held ${input.replyDelayMs} ms after the sandbox answered: ${proxy.held}; ` +
      `lost because the worker died during the hold: ${proxy.lostReplies} (${proxy.lostAnswerReplies} of them answers)` +
      (proxy.upstreamResets > 0 ? `; sandbox resets passed on: ${proxy.upstreamResets}` : ''),
  );

  const byCustomer = new Map(outcomes.map((outcome) => [outcome.record.plan.customerId, outcome.record.plan]));
  lines.push('', `Duplicate answers: ${duplicates.count} (counted by the ${duplicates.source})`);
  if (duplicates.sandboxNote) lines.push(`  ${duplicates.sandboxNote}`);
  if (duplicates.disagreement) lines.push(`  the sandbox and the proxy disagree: ${duplicates.disagreement}`);
  const shown = duplicates.sandbox ?? duplicates.proxy;
  lines.push(`  answer submissions: ${shown.answers}, credential submissions: ${Number.isFinite(shown.credentials) ? shown.credentials : 'not reported'}`);
  for (const entry of shown.duplicates) {
    const plan = byCustomer.get(entry.customerId);
    lines.push(
      `  ${plan ? `${plan.key} [${plan.flow.name}, by ${plan.channel}]` : entry.customerId}: RequestId ${entry.requestId} got the same answer ${entry.count}×`,
    );
  }

  const transient = new Map<string, number>();
  for (const { record } of outcomes)
    for (const [kind, count] of record.transient) {
      const short = kind.replace(/^[a-z]+: /, '');
      transient.set(short, (transient.get(short) ?? 0) + count);
    }
  lines.push('', `Driver: Temporal calls retried through the chaos: ${transient.size > 0 ? describeTransient(transient) : 'none'}`);
  if (input.summary.unknown > 0) {
    lines.push(
      `  ${input.summary.unknown} connection(s) whose end the driver could not learn (see above): not counted as lost, not proven either; the run fails`,
    );
  }
  lines.push(
    `Failed queries by gRPC code: ${formatCodeCounts(input.summary.failedQueries)}` +
      (input.summary.connectionsWithFailedQueries > 0
        ? ` (over ${input.summary.connectionsWithFailedQueries} connection(s); each stuck or troubled one above has its own)`
        : ''),
  );
  if (input.queryEveryMs !== undefined && input.queryEveryMs > 0) lines.push(watchLine(summarizeWatch(outcomes, input.queryEveryMs)));
  if (input.replay) lines.push('', ...renderReplay(input.replay));
  lines.push('', input.replay ? chaosSummaryLine(input.summary, input.replay) : summaryLine(input.summary));
  return lines;
}
