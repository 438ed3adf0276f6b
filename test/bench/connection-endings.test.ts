/**
 * bench/connection-endings.ts: a wait that failed on a completed connection is a failed wait; every
 * other unfulfilled wait is a lost connection, grouped by how Temporal says it ended.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { countEndings } from '../../bench/connection-endings.js';
import { ResultWaitFailedError } from '../../src/client/index.js';
import type { ConnectionSummary } from '../../src/client/index.js';

/** How each connection ended, as Temporal would say it; the lookups are recorded. */
function endedAs(statuses: Record<string, string>) {
  const asked: string[] = [];
  return {
    asked,
    describe: (workflowId: string) => {
      asked.push(workflowId);
      return Promise.resolve({ executionStatus: statuses[workflowId] } as unknown as ConnectionSummary);
    },
  };
}

void describe('countEndings', () => {
  void it('tells a failed wait from a lost connection and says how each lost one ended', async () => {
    const ids = ['c-1', 'c-2', 'c-3', 'c-4', 'c-5'];
    const temporal = endedAs({ 'c-2': 'COMPLETED', 'c-3': 'RUNNING', 'c-4': 'COMPLETED', 'c-5': 'FAILED' });
    const waitFailed = new ResultWaitFailedError('c-2', 'UNAVAILABLE', 5);
    const results: PromiseSettledResult<unknown>[] = [
      { status: 'fulfilled', value: {} },
      { status: 'rejected', reason: waitFailed },
      { status: 'rejected', reason: new ResultWaitFailedError('c-3', 'UNAVAILABLE', 5) },
      // Completed, but the wait failed for another reason than Temporal's refusals: lost, not hidden.
      { status: 'rejected', reason: new Error('result undecodable for c-4') },
      { status: 'rejected', reason: new Error('InvalidCredentials') },
    ];
    const endings = await countEndings(temporal, ids, results);
    assert.equal(endings.failedWaits, 1);
    assert.equal(endings.lost, 3);
    assert.deepEqual(temporal.asked, ['c-2', 'c-3', 'c-4', 'c-5'], 'only unfulfilled waits are looked up');
    const reasons = [...endings.lostBy.keys()];
    assert.equal(reasons.length, 3);
    assert.ok(reasons.some((why) => why.startsWith('RUNNING (ResultWaitFailedError')));
    assert.ok(reasons.includes('COMPLETED (Error: result undecodable for <id>)'), reasons.join(' | '));
    assert.ok(reasons.includes('FAILED (Error: InvalidCredentials)'));
  });

  void it('counts nothing lost when every wait was fulfilled', async () => {
    const temporal = endedAs({});
    const endings = await countEndings(
      temporal,
      ['a', 'b'],
      [
        { status: 'fulfilled', value: 1 },
        { status: 'fulfilled', value: 2 },
      ],
    );
    assert.deepEqual(
      { lost: endings.lost, failedWaits: endings.failedWaits, lostBy: endings.lostBy.size, asked: temporal.asked.length },
      { lost: 0, failedWaits: 0, lostBy: 0, asked: 0 },
    );
  });
});
