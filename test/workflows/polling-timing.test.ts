/**
 * The spec's timing, with the default settings, on sdk-java's time-skipping server: a pending
 * operation is polled every 10 s and given up at 30 min. Time is read from the workflow history
 * (server time, which the test server skips), never from the wall clock.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import proto from '@temporalio/proto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { startConnectionStack, type ConnectionStack } from '../helpers/connection-stack.js';
import { createTimeSkippingEnvironment } from '../helpers/temporal.js';

type HistoryEvent = proto.temporal.api.history.v1.IHistoryEvent;
const TIMER_STARTED = proto.temporal.api.enums.v1.EventType.EVENT_TYPE_TIMER_STARTED;

let env: TestWorkflowEnvironment;
let stack: ConnectionStack;

before(async () => {
  env = await createTimeSkippingEnvironment();
  // Plain payloads: only the environment's own client skips time while it waits for a result, and it has no codec.
  stack = await startConnectionStack(env, { encryption: 'off' });
});

after(async () => {
  await stack?.stop();
  await env?.teardown();
});

function seconds(timestamp: HistoryEvent['eventTime']): number {
  return Number(timestamp?.seconds ?? 0) + (timestamp?.nanos ?? 0) / 1e9;
}

function durationSeconds(duration: { seconds?: unknown; nanos?: number | null } | null | undefined): number {
  return Number(duration?.seconds ?? 0) + (duration?.nanos ?? 0) / 1e9;
}

async function history(workflowId: string): Promise<HistoryEvent[]> {
  return (await env.client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
}

describe('polling with the default timing', () => {
  it('polls a pending operation every 10 s and fails with PollingTimedOut at 30 min', async () => {
    const loginId = await stack.savedLogin('pending_polls_1000000');
    const handle = await stack.start({ session: { kind: 'cached', loginId }, products: { accountsDetail: {} } });

    const error = await handle.result().then(
      () => assert.fail('expected the connection to time out'),
      (caught: unknown) => caught,
    );
    assert.ok(error instanceof WorkflowFailedError && error.cause instanceof ApplicationFailure);
    assert.equal(error.cause.type, 'PollingTimedOut');

    const events = await history(handle.workflowId);
    const timers = events.filter((event) => event.eventType === TIMER_STARTED);
    // Each wait starts when the previous poll answers, and the test server does not skip the real
    // time a call takes: 180 polls when calls take no time, one fewer for every 10 s the 180 calls
    // took together on a loaded machine. So the count is bounded, and the deadline is exact.
    assert.ok(timers.length > 170 && timers.length <= 180, `${timers.length} polls in 30 min, 10 s apart`);
    assert.match(error.cause.message, new RegExp(`after ${timers.length} polls`));
    // Every wait is 10 s but the last, which is cut so the final poll lands on the deadline.
    for (const timer of timers.slice(0, -1)) assert.equal(durationSeconds(timer.timerStartedEventAttributes?.startToFireTimeout), 10);
    const last = durationSeconds(timers.at(-1)?.timerStartedEventAttributes?.startToFireTimeout);
    assert.ok(last > 0 && last <= 10, `last wait ${last} s`);
    const firstEvent = seconds(events[0]?.eventTime);
    const lastPollAt = seconds(timers.at(-1)?.eventTime) + last;
    assert.ok(
      lastPollAt - firstEvent >= 1800 && lastPollAt - firstEvent < 1810,
      `the last poll ${lastPollAt - firstEvent} s after the start, expected at 30 min`,
    );
    const elapsed = seconds(events.at(-1)?.eventTime) - firstEvent;
    assert.ok(elapsed >= 1800 && elapsed < 1810, `gave up after ${elapsed} s of workflow time, expected 30 min`);
  });

  it('completes an operation that is ready after 5 polls after exactly 5 polls, 10 s apart', async () => {
    const loginId = await stack.savedLogin('pending_polls_5');
    const handle = await stack.start({ session: { kind: 'cached', loginId }, products: { accountsDetail: {} } });
    const result = await handle.result();
    assert.equal(result.totalPolls, 5);
    assert.ok(result.accountsDetail && result.accountsDetail.Accounts.length > 0);

    const events = await history(handle.workflowId);
    const timerIndexes = events.flatMap((event, index) => (event.eventType === TIMER_STARTED ? [index] : []));
    assert.equal(timerIndexes.length, 5);
    const elapsed = seconds(events.at(-1)?.eventTime) - seconds(events[0]?.eventTime);
    assert.ok(elapsed >= 50 && elapsed < 60, `completed after ${elapsed} s of workflow time`);
    // Each poll costs the events between one timer start and the next: the timer (started, fired), a
    // workflow task, the poll as an activity through the queue (scheduled, started, completed: what
    // the budget needs) and the task that reads it: at most 11.
    for (let i = 1; i < timerIndexes.length; i += 1) {
      const perPoll = (timerIndexes[i] ?? 0) - (timerIndexes[i - 1] ?? 0);
      assert.ok(perPoll <= 11, `poll ${i} cost ${perPoll} history events`);
    }
  });
});
