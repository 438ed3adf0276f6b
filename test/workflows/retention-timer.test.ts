/**
 * The retention policy's timer on sdk-java's time-skipping server: with a 30-day policy, a login is
 * handed to the forget workflow 30 days after its last retrieval, and a new retrieval pushes that
 * back. Retrievals are ordinary connections through the real worker and the real sandbox; days pass
 * by skipping time, and every instant is read from workflow time, never from the wall clock.
 *
 * The time-skipping server has neither schedules nor visibility, so the forget workflow the timer
 * starts cannot run its steps here (test/workflows/forget.test.ts runs them on the dev server): this
 * file checks that it was started, when, and for what.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client, WorkflowNotFoundError } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { createAggregatorClient } from '../../src/aggregator/client.js';
import { forgetWorkflowId, retentionWorkflowId } from '../../src/contract/login-keys.js';
import type { ForgetInput } from '../../src/contract/retention/forget-definitions.js';
import { retentionStateQuery, retrievalNoticeSignal, type RetentionOutcome } from '../../src/contract/retention/retention-definitions.js';
import { startConnectionStack, type ConnectionStack } from '../helpers/connection-stack.js';
import { createTimeSkippingEnvironment, uniqueId } from '../helpers/temporal.js';

const DAY_MS = 24 * 60 * 60_000;
const RETENTION_DAYS = 30;

let env: TestWorkflowEnvironment;
let stack: ConnectionStack;
const customerId = uniqueId('retained');
/** The worker's RETENTION_DAYS, read at each use: a test edits it as an operator edits the environment. */
const policy: Record<string, number> = { [customerId]: RETENTION_DAYS };

before(async () => {
  env = await createTimeSkippingEnvironment();
  // Plain payloads: only the environment's own client skips time while it waits for a result, and it has no codec.
  stack = await startConnectionStack(env, { encryption: 'off', customerId, retentionDays: policy });
});

after(async () => {
  await stack?.stop();
  await env?.teardown();
});

/**
 * A cached connection of the login, run to completion: a retrieval. Awaited through a plain client:
 * the environment's own client lets the server skip time while it waits, and the retention timer
 * started at the connection's end would be skipped to its end before the test could look at it.
 */
async function retrieve(loginId: string): Promise<string> {
  const plain = new Client({ connection: env.connection, namespace: env.namespace ?? 'default' });
  const handle = await plain.workflow.start('connectionWorkflow', {
    taskQueue: stack.taskQueue,
    workflowId: uniqueId('retrieval'),
    args: [{ customerId, session: { kind: 'cached', loginId }, products: { accountsDetail: {} }, timing: { pollIntervalMs: 50 } }],
  });
  const result = (await handle.result()) as { loginId: string };
  assert.equal(result.loginId, loginId);
  return handle.workflowId;
}

/** When a workflow completed (its last event), in workflow time. */
async function completedAt(workflowId: string): Promise<number> {
  const events = (await env.client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
  const last = events.at(-1)?.eventTime;
  return Number(last?.seconds ?? 0) * 1_000 + Math.floor((last?.nanos ?? 0) / 1e6);
}

async function forgetExists(loginId: string): Promise<boolean> {
  return env.client.workflow
    .getHandle(forgetWorkflowId(customerId, loginId))
    .describe()
    .then(
      () => true,
      (error: unknown) => {
        if (error instanceof WorkflowNotFoundError) return false;
        throw error;
      },
    );
}

void describe('the retention timer', () => {
  void it('ends without forgetting when the tenant turns its policy off', async () => {
    const loginId = await stack.savedLogin('security_question');
    await retrieve(loginId);
    const timer = env.client.workflow.getHandle(retentionWorkflowId(customerId, loginId));
    // What a retrieval by a worker without a policy for the tenant sends (retention-activities.ts).
    await timer.signal(retrievalNoticeSignal, { at: new Date(Date.now()).toISOString(), days: null });
    const outcome = (await timer.result()) as RetentionOutcome;
    assert.equal(outcome.outcome, 'policy-off');
    assert.equal(await forgetExists(loginId), false);
  });

  void it('reads the policy again when due: a tenant that has dropped it keeps the login', async () => {
    const loginId = await stack.savedLogin('triple_question');
    await retrieve(loginId);
    const timer = env.client.workflow.getHandle(retentionWorkflowId(customerId, loginId));
    assert.equal((await timer.query(retentionStateQuery)).days, RETENTION_DAYS);
    delete policy[customerId];
    try {
      const outcome = (await timer.result()) as RetentionOutcome;
      assert.equal(outcome.outcome, 'policy-off');
      assert.equal(await forgetExists(loginId), false);
    } finally {
      policy[customerId] = RETENTION_DAYS;
    }
  });

  // Last: the forget it starts fails its first step here and retries; an activity in flight can hold
  // the server's time still, so no test that needs time skipped may follow it.
  void it(`forgets a login ${RETENTION_DAYS} days after its last retrieval, pushed back by a new retrieval`, async () => {
    const loginId = await stack.savedLogin('no_mfa');
    const timer = env.client.workflow.getHandle(retentionWorkflowId(customerId, loginId));

    const first = await retrieve(loginId);
    const firstState = await timer.query(retentionStateQuery);
    assert.equal(firstState.status, 'waiting');
    assert.equal(firstState.days, RETENTION_DAYS);
    const firstAt = Date.parse(firstState.lastRetrievalAt ?? '');
    assert.ok(Math.abs(firstAt - (await completedAt(first))) < 60_000, "the retrieval time is the connection's (workflow time)");
    assert.equal(Date.parse(firstState.forgetAt ?? ''), firstAt + RETENTION_DAYS * DAY_MS);

    await env.sleep(20 * DAY_MS);
    await retrieve(loginId);
    const secondState = await timer.query(retentionStateQuery);
    const secondAt = Date.parse(secondState.lastRetrievalAt ?? '');
    assert.ok(secondAt >= firstAt + 20 * DAY_MS, 'the second retrieval is 20 days later');
    assert.equal(Date.parse(secondState.forgetAt ?? ''), secondAt + RETENTION_DAYS * DAY_MS, 'pushed back to 30 days after the new retrieval');
    assert.equal(secondState.notices, 2);

    // 35 days after the first retrieval (5 past its original due time): still kept.
    await env.sleep(15 * DAY_MS);
    assert.equal((await timer.query(retentionStateQuery)).status, 'waiting');
    assert.equal(await forgetExists(loginId), false, 'no forget started at the original due time');
    const sandbox = createAggregatorClient({ baseUrl: stack.sandboxUrl, customerId });
    assert.equal((await sandbox.authorizeCached(loginId)).kind, 'ready', 'the card is still at the service');

    // Waiting for the timer's result skips to its due time.
    const outcome = (await timer.result()) as RetentionOutcome;
    assert.equal(outcome.outcome, 'forget-started');
    if (outcome.outcome !== 'forget-started') return;
    assert.equal(outcome.days, RETENTION_DAYS);
    assert.equal(Date.parse(outcome.lastRetrievalAt), secondAt);
    const startedAfter = Date.parse(outcome.forgetStartedAt) - secondAt;
    assert.ok(
      startedAfter >= RETENTION_DAYS * DAY_MS && startedAfter < RETENTION_DAYS * DAY_MS + 60_000,
      `forget started ${startedAfter / DAY_MS} days after the last retrieval`,
    );
    assert.equal(outcome.alreadyForgetting, false);

    const forget = env.client.workflow.getHandle(outcome.forgetWorkflowId);
    const started = (await forget.fetchHistory()).events?.[0]?.workflowExecutionStartedEventAttributes;
    const input = JSON.parse(Buffer.from(started?.input?.payloads?.[0]?.data ?? new Uint8Array()).toString('utf8')) as ForgetInput;
    assert.deepEqual(input, { customerId, loginId, trigger: 'retention' });
    // Its steps need schedules and visibility, which this server lacks: they run on the dev server (forget.test.ts).
    await forget.terminate('the time-skipping server cannot run the forget steps');
  });
});
