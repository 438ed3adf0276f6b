/**
 * A failed harness assertion must show the harness's own diagnosis in CI, where the runner keeps a
 * failure's first and last lines only: the report leads with the trouble sections it finds.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { failureExcerpt } from '../scripts/lib/failure-excerpt.mjs';
import { failureReport } from './helpers/harness-run.js';

/** A prod-check-shaped report: progress lines, a Stuck section in the middle, tables, the summary. */
function reportWithStuckSection(): string {
  const progress = Array.from({ length: 40 }, (_, i) => `prod-check: +${(i + 1) * 15}.0s ${i}/60 connections ended`);
  const tables = Array.from({ length: 60 }, (_, i) => `  w${i % 4}   ${i}   ran to the end`);
  const stuck = [
    'Stuck: 1 connection(s) still running at the deadline',
    '  connection-c-30:app-30: no workflow task pending; activity pollAccountsDetail attempt 1 (STARTED 91.0s before)',
  ];
  return [
    ...progress,
    '',
    ...stuck,
    '',
    'Upstream, as the proxy saw it',
    ...tables,
    'prod-check: 60 connections, 59 completed as expected, 0 unexpected failures, 1 stuck, 0 duplicate answers, 0 data mismatches',
  ].join('\n');
}

describe('failureReport', () => {
  it("puts the Stuck section where the runner's excerpt keeps it", () => {
    const output = reportWithStuckSection();
    const withoutLead = failureExcerpt(`stuck connections\n${output.split('\n').slice(-100).join('\n')}\n\n1 !== 0`);
    assert.doesNotMatch(withoutLead, /app-30/, 'the plain tail loses the diagnosis (the case this fixes)');
    const excerpt = failureExcerpt(`stuck connections\n${failureReport(output)}\n\n1 !== 0`);
    assert.match(excerpt, /Stuck: 1 connection\(s\) still running/);
    assert.match(excerpt, /app-30: no workflow task pending; activity pollAccountsDetail attempt 1/);
    assert.match(excerpt, /1 stuck/, 'the summary line is still in the tail');
  });

  it('leads with a nondeterminism line found anywhere, and is the plain tail when there is no trouble', () => {
    const lines = Array.from({ length: 150 }, (_, i) => `line ${i}`);
    lines[20] = "2026-11-28T10:00:00Z WARN [TMPRL1100] Nondeterminism error: Activity type of scheduled event 'x' does not match";
    assert.match(failureReport(lines.join('\n')).split('\n')[0] ?? '', /TMPRL1100/);
    const clean = Array.from({ length: 150 }, (_, i) => `line ${i}`).join('\n');
    assert.equal(failureReport(clean), clean.split('\n').slice(-100).join('\n'));
  });

  it("leads with security:check's attack that got through, wherever it sits", () => {
    const lines = Array.from({ length: 150 }, (_, i) => `  refused    attack ${i}: refused for a reason`);
    lines[30] = '  GOT THROUGH  unsealed admission grant to a queued unattended connection: admitted at 2026-11-29T16:36:40.000Z';
    const excerpt = failureExcerpt(`attacks got through\n${failureReport(lines.join('\n'))}\n\n1 !== 0`);
    assert.match(excerpt, /GOT THROUGH {2}unsealed admission grant/);
  });

  it('keeps at most ten trouble lines and says how many more there are', () => {
    const stuck = Array.from({ length: 25 }, (_, i) => `  connection-c-${i}: stuck`);
    const report = failureReport(['Stuck: 25 connection(s) still running at the deadline', ...stuck, '', 'summary'].join('\n'));
    const lead = report.split('--- the last lines ---')[0] ?? '';
    assert.equal(lead.trim().split('\n').length, 11);
    assert.match(lead, /\(16 more trouble line\(s\) below\)/);
  });
});
