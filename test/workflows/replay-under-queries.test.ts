/**
 * A connection's history replays wherever a query split its workflow tasks. A chaos run once left a
 * connection stuck for good: its worker was SIGKILLed right after it logged "connection completed"
 * (the completion never stored), and every later worker failed the replay with "[TMPRL1100]
 * Nondeterminism error: Non-deprecated patch marker encountered for change retention-notice, but
 * there is no corresponding change command!". Under state queries the SDK completes a workflow task
 * with a local activity's marker and asks for a new one when it answers a query before that
 * activity's result is delivered, so the code after the last poll ran one task later than in the
 * replay. A `patched()` call is only replay-safe where replay reaches it in the same task; today's
 * connection (Pinned to its build) calls none, and records no patch marker.
 *
 * Here: connections polled while clients query their state without pause, then every history
 * replayed.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import proto, { type temporal } from '@temporalio/proto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { workerDataConverterFor } from '../../src/codec/data-converter.js';
import { connectionStateQuery } from '../../src/contract/connection/connection-definitions.js';
import { TEST_ENCRYPTION, startConnectionStack, type ConnectionStack } from '../helpers/connection-stack.js';
import { createDevEnvironment } from '../helpers/temporal.js';
import { productWorkflowCode } from '../helpers/test-tier.js';

type History = temporal.api.history.v1.IHistory;
type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

/** Connections at once, and query loops per connection: enough that a query lands in most tasks. */
const CONNECTIONS = 8;
const QUERY_LOOPS = 4;

const { EVENT_TYPE_WORKFLOW_TASK_SCHEDULED: WORKFLOW_TASK_SCHEDULED, EVENT_TYPE_MARKER_RECORDED: MARKER_RECORDED } = proto.temporal.api.enums.v1.EventType;

function markerName(event: HistoryEvent): string | undefined {
  return event.eventType === MARKER_RECORDED ? (event.markerRecordedEventAttributes?.markerName ?? undefined) : undefined;
}

function patchIdOf(event: HistoryEvent): string | undefined {
  const payload = event.markerRecordedEventAttributes?.details?.['patch-data']?.payloads?.[0];
  return payload?.data ? (JSON.parse(Buffer.from(payload.data).toString()) as { id: string }).id : undefined;
}

/** Local-activity results whose workflow task ended there (the SDK asked for a new task): the code after them ran a task later. */
function splitLocalActivities(history: History): number {
  const events = history.events ?? [];
  return events.filter((event, index) => markerName(event) === 'core_local_activity' && events[index + 1]?.eventType === WORKFLOW_TASK_SCHEDULED).length;
}

let env: TestWorkflowEnvironment;
let stack: ConnectionStack;

before(async () => {
  env = await createDevEnvironment();
  stack = await startConnectionStack(env);
});

after(async () => {
  await stack?.stop();
  await env?.teardown();
});

describe('connections under state queries', () => {
  const histories: { workflowId: string; history: History }[] = [];

  before(async () => {
    const loginId = await stack.savedLogin('pending_polls_3');
    await Promise.all(
      Array.from({ length: CONNECTIONS }, async () => {
        const handle = await stack.start({ session: { kind: 'cached', loginId }, products: { accountsDetail: {} }, timing: { pollIntervalMs: 200 } });
        let ended = false;
        const result = handle.result().finally(() => (ended = true));
        const queries = Array.from({ length: QUERY_LOOPS }, async () => {
          while (!ended) {
            await handle.query(connectionStateQuery).catch(() => undefined);
            await delay(Math.random() * 5);
          }
        });
        await Promise.all([result, ...queries]);
        histories.push({ workflowId: handle.workflowId, history: await handle.fetchHistory() });
      }),
    );
  });

  it('record no patch marker: a Pinned connection needs none', () => {
    for (const { workflowId, history } of histories) {
      const patches = (history.events ?? []).filter((event) => markerName(event) === 'core_patch');
      assert.deepEqual(patches.map(patchIdOf), [], workflowId);
    }
  });

  it(`replays all ${CONNECTIONS} histories without nondeterminism, local-activity results split from the code after them or not`, async () => {
    const splits = histories.map(({ history }) => splitLocalActivities(history));
    process.stdout.write(
      `# replay-under-queries: ${splits.filter((n) => n > 0).length}/${histories.length} histories with a local-activity result split from the code after it (${splits.reduce((a, b) => a + b, 0)} splits)\n`,
    );
    const errors: string[] = [];
    const replays = Worker.runReplayHistories(
      { ...productWorkflowCode(), dataConverter: workerDataConverterFor({ encryption: TEST_ENCRYPTION }), replayName: 'replay-under-queries' },
      histories,
    );
    for await (const result of replays) if (result.error) errors.push(`${result.workflowId}: ${String(result.error)}`);
    assert.deepEqual(errors, []);
  });
});
