/**
 * Replay: histories recorded from every flow (RECORD_HISTORIES=1 node scripts/run-tests.mjs
 * connection.test, and books/book-refresh.test for the book refresh's) must replay against the
 * current workflow code without nondeterminism. Needs no server; one workflow bundle serves every history. Some were recorded before encryption
 * existed: the replay converter reads their unsealed payloads, which a running worker refuses; the
 * others replay with the worker's own converter.
 */
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { Worker } from '@temporalio/worker';
import { replayDataConverterFor, workerDataConverterFor } from '../../src/codec/data-converter.js';
import { writtenBeforeEncryption } from '../../scripts/lib/history-payloads.js';
import { TEST_ENCRYPTION } from '../helpers/connection-stack.js';
import { recordedHistories } from '../helpers/histories.js';
import { refreshHistoryShape } from '../helpers/refresh-history.js';
import { productWorkflowCode } from '../helpers/test-tier.js';

const histories = await recordedHistories();
const errors = new Map<string, unknown>();

before(async () => {
  // Those recorded before encryption read their unsealed payloads; any other replays as its worker ran it.
  for (const beforeEncryption of [true, false]) {
    const group = histories.filter(({ history }) => writtenBeforeEncryption(history) === beforeEncryption);
    if (group.length === 0) continue;
    const encryption = { encryption: TEST_ENCRYPTION };
    const replays = Worker.runReplayHistories(
      {
        ...productWorkflowCode(),
        dataConverter: beforeEncryption ? replayDataConverterFor(encryption) : workerDataConverterFor(encryption),
        replayName: 'recorded-histories',
      },
      group.map(({ workflowId, history }) => ({ workflowId, history })),
    );
    // One after another, in the order given: runs of one refresh share its workflow id.
    let index = 0;
    for await (const result of replays) errors.set(group[index++]?.name ?? result.workflowId, result.error);
  }
});

describe('recorded histories', () => {
  it('include every flow: challenges by update and signal, products, recoveries and failures', () => {
    const names = histories.map((entry) => entry.name);
    for (const prefix of ['challenges-', 'cached-', 'failure-', 'recovers-', 'live-then-cached', 'cancelled-', 'book-refresh-']) {
      assert.ok(
        names.some((name) => name.startsWith(prefix)),
        `no recorded history starting with ${prefix}`,
      );
    }
  });

  it("include a book refresh's run paused, resized, with a child terminated mid-window, that continued as new, and the next page's run", async () => {
    const historyOf = (name: string) => {
      const found = histories.find((entry) => entry.name === name);
      assert.ok(found, `no recorded history ${name} (RECORD_HISTORIES=1 node scripts/run-tests.mjs books/book-refresh.test)`);
      return found.history;
    };
    const first = await refreshHistoryShape(historyOf('book-refresh-page-1-paused-resized-terminated'));
    assert.deepEqual(first.updates, ['pauseBook', 'resizeBook', 'resumeBook']);
    assert.ok(
      first.silentChecks.some(({ statuses, othersInFlight }) => statuses.some(({ status }) => status === 'TERMINATED') && othersInFlight >= 1),
      JSON.stringify(first.silentChecks),
    );
    assert.ok(first.continuedAsNew);
    assert.ok((await refreshHistoryShape(historyOf('book-refresh-page-2-after-continue-as-new'))).completed);
  });

  for (const { name } of histories) {
    it(`replays ${name} without nondeterminism`, () => {
      assert.ok(errors.has(name), `${name} was not replayed`);
      assert.equal(errors.get(name), undefined, String(errors.get(name)));
    });
  }
});
