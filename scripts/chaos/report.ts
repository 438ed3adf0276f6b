/**
 * What a chaos run prints: the timeline of kills and the restart, a table per flow, every connection
 * that did not end as expected with what it went through, the upstream counts, the duplicate answers
 * and, last, the one summary line (its format is fixed: tests and CI parse it).
 */
import type { DuplicateReport, Judgement } from './checks.js';
import type { DriveRecord } from './driver.js';
import { FLOWS } from './flows.js';
import type { ProxyStats } from './proxy.js';
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
}

export function summarize(outcomes: readonly ConnectionOutcome[], duplicates: DuplicateReport): Summary {
  const count = (verdict: Judgement['verdict']) => outcomes.filter((outcome) => outcome.judgement.verdict === verdict).length;
  return {
    connections: outcomes.length,
    completedAsExpected: count('expected'),
    unexpectedFailures: count('unexpected'),
    stuck: count('stuck'),
    duplicateAnswers: duplicates.count,
    dataMismatches: outcomes.filter((outcome) => outcome.dataProblems.length > 0).length,
    unknown: count('unknown'),
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
    const durations = group.flatMap(({ record }) => (record.startedAtMs !== undefined && record.endedAtMs !== undefined ? [record.endedAtMs - record.startedAtMs] : []));
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
      for (const [text, count] of record.notes) lines.push(`    driver: ${text}${count > 1 ? ` (×${count})` : ''}`);
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
    lines.push(`  ${plan ? `${plan.key} [${plan.flow.name}, by ${plan.channel}]` : entry.customerId}: RequestId ${entry.requestId} got the same answer ${entry.count}×`);
  }

  const transient = new Map<string, number>();
  for (const { record } of outcomes) for (const [kind, count] of record.transient) {
    const short = kind.replace(/^[a-z]+: /, '');
    transient.set(short, (transient.get(short) ?? 0) + count);
  }
  lines.push('', `Driver: Temporal calls retried through the chaos: ${transient.size > 0 ? describeTransient(transient) : 'none'}`);
  if (input.summary.unknown > 0) {
    lines.push(`  ${input.summary.unknown} connection(s) whose end the driver could not learn (see above): not counted as lost, not proven either; the run fails`);
  }
  lines.push('', summaryLine(input.summary));
  return lines;
}
