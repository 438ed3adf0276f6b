/**
 * The connection workflow end to end: a real dev server, the real sandbox over HTTP, the real
 * activities and worker. Timing is shortened here (poll every 100 ms); the spec's defaults are
 * proven on the time-skipping server in polling-timing.test.ts.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { WorkflowFailedError, WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { Worker } from '@temporalio/worker';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { SCENARIOS, describeScenario } from '../../sandbox/scenarios.js';
import { SANDBOX_PASSWORD } from '../../sandbox/scenarios.js';
import type { ConnectionInputArgs } from '../../src/contract/connection/connection-input.js';
import {
  answerChallengeSignal,
  submitAnswerUpdate,
  type ConnectionFailureType,
  type ConnectionResult,
} from '../../src/contract/connection/connection-definitions.js';
import { workerDataConverterFor } from '../../src/codec/data-converter.js';
import { TEST_ENCRYPTION, startConnectionStack, type ConnectionStack } from '../helpers/connection-stack.js';
import { recordHistory } from '../helpers/histories.js';
import { specInvestments } from '../helpers/spec-data.js';
import { createDevEnvironment } from '../helpers/temporal.js';
import { productWorkflowCode } from '../helpers/test-tier.js';
import { loadTestConfig } from '../../scripts/lib/test-settings.js';

const FAST = { pollIntervalMs: 100, pollTimeoutMs: 20_000, answerTimeoutMs: 20_000 };
const CHALLENGE_SCENARIOS = SCENARIOS.filter((scenario) => scenario.kind === 'challenge');

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

function live(username: string, extra: Partial<ConnectionInputArgs> = {}): Omit<ConnectionInputArgs, 'customerId'> {
  const scenario = SCENARIOS.find((entry) => entry.username === username);
  return {
    session: { kind: 'live', institution: scenario?.institution ?? 'SandboxBank', username, password: SANDBOX_PASSWORD, save: true },
    products: { accountsDetail: { WithTransactions: true } },
    timing: FAST,
    ...extra,
  };
}

/**
 * Keeps a finished workflow's history to replay against the current code at the end of this file
 * (one bundle for all); with RECORD_HISTORIES=1 also under test/workflows/histories/ for
 * replay.test.ts to replay against future code.
 */
const finished: { workflowId: string; name: string }[] = [];
async function replay(workflowId: string, name: string): Promise<void> {
  finished.push({ workflowId, name });
  if (loadTestConfig().recordHistories) await recordHistory(name, await env.client.workflow.getHandle(workflowId).fetchHistory(), workflowId);
}

async function failureOf(promise: Promise<unknown>): Promise<{ type: ConnectionFailureType; message: string; details: unknown[] }> {
  const error = await promise.then(
    () => assert.fail('the connection was expected to fail'),
    (caught: unknown) => caught,
  );
  assert.ok(error instanceof WorkflowFailedError, `expected WorkflowFailedError, got ${String(error)}`);
  assert.ok(error.cause instanceof ApplicationFailure, `expected an ApplicationFailure cause, got ${String(error.cause)}`);
  return { type: error.cause.type as ConnectionFailureType, message: error.cause.message, details: error.cause.details ?? [] };
}

function assertAccounts(result: ConnectionResult): void {
  assert.ok(result.loginId, 'a LoginId');
  assert.ok(result.accountsDetail && result.accountsDetail.Accounts.length >= 2, 'several accounts');
  assert.ok((result.accountsDetail.Accounts[0]?.Transactions?.length ?? 0) > 10, 'transactions');
}

describe('every challenge sequence of the spec', () => {
  for (const scenario of CHALLENGE_SCENARIOS) {
    const rounds = describeScenario(scenario).challengeSequence;

    it(`completes ${scenario.username} answered through the validated update`, async () => {
      const handle = await stack.start(live(scenario.username));
      for (const [index, round] of rounds.entries()) {
        const state = await stack.waitForState(
          handle.workflowId,
          (s) => s.status === 'AwaitingAnswer' && s.challengeSet?.id === String(index + 1),
          `challenge set ${index + 1}`,
        );
        assert.deepEqual(
          state.challengeSet?.challenges.map((c) => c.Prompt),
          round.challenges.map((c) => c.Prompt),
        );
        const outcome = await handle.executeUpdate(submitAnswerUpdate, { args: [{ challengeSetId: String(index + 1), responses: round.answer }] });
        assert.equal(outcome.outcome, 'accepted');
        if (index < rounds.length - 1) assert.equal(outcome.outcome === 'accepted' && outcome.nextChallengeSet?.id, String(index + 2));
      }
      const result = await handle.result();
      assertAccounts(result);
      await replay(handle.workflowId, `challenges-${scenario.username}-update`);
    });

    it(`completes ${scenario.username} answered by signal`, async () => {
      const handle = await stack.start(live(scenario.username));
      for (const [index, round] of rounds.entries()) {
        await stack.waitForState(
          handle.workflowId,
          (s) => s.status === 'AwaitingAnswer' && s.challengeSet?.id === String(index + 1),
          `challenge set ${index + 1}`,
        );
        await handle.signal(answerChallengeSignal, { challengeSetId: String(index + 1), responses: round.answer });
      }
      assertAccounts(await handle.result());
      await replay(handle.workflowId, `challenges-${scenario.username}-signal`);
    });
  }
});

describe('answers', () => {
  const question = describeScenario(SCENARIOS.find((s) => s.username === 'security_question') ?? assert.fail('scenario')).challengeSequence[0];
  const prompt = question?.challenges[0]?.Prompt ?? '';

  it('rejects a bad answer in the update validator, leaving history and the service untouched', async () => {
    const handle = await stack.start(live('security_question'));
    await stack.waitForState(handle.workflowId, (s) => s.status === 'AwaitingAnswer', 'a challenge');
    const eventsBefore = (await handle.fetchHistory()).events?.length;
    const callsBefore = stack.upstreamCalls.length;

    for (const bad of [
      { challengeSetId: '1', responses: { 'what city were you born in?': ['Montreal'] } }, // case changed: not asked
      { challengeSetId: '1', responses: {} },
      { challengeSetId: '7', responses: { [prompt]: ['Montreal'] } }, // stale set
    ]) {
      await assert.rejects(handle.executeUpdate(submitAnswerUpdate, { args: [bad] }), (error: unknown) => {
        assert.ok(error instanceof WorkflowUpdateFailedError);
        assert.ok(error.cause instanceof Error && error.cause.message.length > 10, 'the validator names the problem');
        return true;
      });
    }
    assert.equal((await handle.fetchHistory()).events?.length, eventsBefore, 'no history event was written');
    assert.equal(stack.upstreamCalls.length, callsBefore, 'nothing was sent to the service');

    await handle.executeUpdate(submitAnswerUpdate, { args: [{ challengeSetId: '1', responses: question?.answer ?? {} }] });
    assertAccounts(await handle.result());
  });

  it('records a refused signal answer as the last rejection and keeps waiting', async () => {
    const handle = await stack.start(live('security_question'));
    await stack.waitForState(handle.workflowId, (s) => s.status === 'AwaitingAnswer', 'a challenge');
    await handle.signal(answerChallengeSignal, { challengeSetId: '1', responses: { [prompt]: [] } });
    const state = await stack.waitForState(handle.workflowId, (s) => s.lastRejection !== undefined, 'a rejection');
    assert.equal(state.lastRejection?.source, 'validator');
    assert.equal(state.status, 'AwaitingAnswer');
    await handle.signal(answerChallengeSignal, { challengeSetId: '1', responses: question?.answer ?? {} });
    assertAccounts(await handle.result());
  });

  it('presents the challenge again under a new id when the service refuses an answer, then completes', async () => {
    const handle = await stack.start(live('security_question'));
    await stack.waitForState(handle.workflowId, (s) => s.status === 'AwaitingAnswer', 'a challenge');
    const outcome = await handle.executeUpdate(submitAnswerUpdate, { args: [{ challengeSetId: '1', responses: { [prompt]: ['Toronto'] } }] });
    assert.equal(outcome.outcome, 'rejected');
    assert.equal(outcome.outcome === 'rejected' && outcome.serviceCode, 'INVALID_SECURITY_RESPONSE');
    assert.equal(outcome.outcome === 'rejected' && outcome.nextChallengeSet?.attempt, 2);
    const state = await stack.waitForState(handle.workflowId, (s) => s.challengeSet?.id === '2', 'the set presented again');
    assert.equal(state.lastRejection?.source, 'service');
    await handle.executeUpdate(submitAnswerUpdate, { args: [{ challengeSetId: '2', responses: question?.answer ?? {} }] });
    assertAccounts(await handle.result());
    await replay(handle.workflowId, 'answer-refused-by-service-then-accepted');
  });

  it('fails with InvalidSecurityResponse once the service refused every allowed attempt', async () => {
    const handle = await stack.start(live('security_question', { timing: { ...FAST, maxAnswerAttempts: 2 } }));
    for (const setId of ['1', '2']) {
      await stack.waitForState(handle.workflowId, (s) => s.challengeSet?.id === setId && s.status === 'AwaitingAnswer', `set ${setId}`);
      await handle.executeUpdate(submitAnswerUpdate, { args: [{ challengeSetId: setId, responses: { [prompt]: ['Toronto'] } }] });
    }
    const failure = await failureOf(handle.result());
    assert.equal(failure.type, 'InvalidSecurityResponse');
    await replay(handle.workflowId, 'failure-invalid-security-response');
  });

  it('fails with ChallengeAbandoned when nobody answers in time', async () => {
    const handle = await stack.start(live('triple_question', { timing: { ...FAST, answerTimeoutMs: 300 } }));
    const failure = await failureOf(handle.result());
    assert.equal(failure.type, 'ChallengeAbandoned');
    await replay(handle.workflowId, 'failure-challenge-abandoned');
  });
});

describe('products', () => {
  it('retrieves accounts detail for a cached login', async () => {
    const loginId = await stack.savedLogin('operation_pending');
    const handle = await stack.start({
      session: { kind: 'cached', loginId },
      products: { accountsDetail: { DaysOfTransactions: 'Days365', WithTransactions: true } },
      timing: FAST,
    });
    const result = await handle.result();
    assert.equal(result.loginId, loginId);
    assertAccounts(result);
    assert.equal(result.totalPolls, 3, 'operation_pending answers 202 three times');
    await replay(handle.workflowId, 'cached-accounts-detail-polled');
  });

  it('retrieves investments for a cached login', async () => {
    const loginId = await stack.savedLogin('no_mfa');
    const handle = await stack.start({ session: { kind: 'cached', loginId }, products: { investments: true }, timing: FAST });
    const result = await handle.result();
    assert.ok(result.investments && result.investments.Accounts.length > 0);
    assert.ok(specInvestments(result.investments).Securities.length > 0);
    await replay(handle.workflowId, 'cached-investments');
  });

  it('retrieves a package of attributes after accounts detail', async () => {
    const loginId = await stack.savedLogin('no_mfa');
    const handle = await stack.start({ session: { kind: 'cached', loginId }, products: { attributes: { package: 'GetLendingAttributes' } }, timing: FAST });
    const result = await handle.result();
    assert.ok(result.attributes && Object.keys(result.attributes.Groups).length === 1);
    assert.equal(result.accountsDetail, undefined, 'accounts detail was only the precondition');
    assert.ok(stack.upstreamCalls.some((call) => call.includes('/GetLendingAttributes')));
    await replay(handle.workflowId, 'cached-attributes-package');
  });

  it('retrieves custom attributes after a live session by opening a cached one', async () => {
    const handle = await stack.start({
      ...live('security_question'),
      products: {
        accountsDetail: {},
        attributes: { custom: { MostRecentCached: true, Attributes: { Card: ['balance_min', 'count_nsf', 'sum_employer_income'] } } },
      },
    });
    await stack.waitForState(handle.workflowId, (s) => s.status === 'AwaitingAnswer', 'a challenge');
    const answer = describeScenario(SCENARIOS.find((s) => s.username === 'security_question') ?? assert.fail()).challengeSequence[0]?.answer ?? {};
    await handle.executeUpdate(submitAnswerUpdate, { args: [{ challengeSetId: '1', responses: answer }] });
    const result = await handle.result();
    const card = result.attributes?.Groups.Card;
    assert.ok(card && 'balance_min' in card && 'count_nsf' in card && 'sum_employer_income' in card);
    assert.ok(result.accountsDetail);
    await replay(handle.workflowId, 'live-then-cached-custom-attributes');
  });

  it('rejects attributes for a live login that is not saved, before calling the service', async () => {
    const failure = await failureOf(
      stack
        .start({
          ...live('no_mfa'),
          session: { kind: 'live', institution: 'SandboxBank', username: 'no_mfa', password: SANDBOX_PASSWORD, save: false },
          products: { attributes: { package: 'GetAllAttributes' } },
        })
        .then((h) => h.result()),
    );
    assert.equal(failure.type, 'InvalidConnectionInput');
    assert.match(failure.message, /session\.save/);
  });
});

describe('upstream trouble', () => {
  const cases: { username: string; type: ConnectionFailureType }[] = [
    { username: 'invalid_password', type: 'InvalidCredentials' },
    { username: 'invalid_username', type: 'InvalidCredentials' },
    { username: 'disabled_login', type: 'EndUserActionRequired' },
    { username: 'new_account', type: 'EndUserActionRequired' },
    { username: 'disabled_institution', type: 'InstitutionUnavailable' },
    { username: 'concurrent_session', type: 'ServiceRejected' },
  ];
  for (const { username, type } of cases) {
    it(`ends ${username} as ${type}, carrying the service code`, async () => {
      const handle = await stack.start(live(username));
      const failure = await failureOf(handle.result());
      assert.equal(failure.type, type);
      assert.equal((failure.details[0] as { serviceCode?: string } | undefined)?.serviceCode, username.toUpperCase());
      await replay(handle.workflowId, `failure-${username}`);
    });
  }

  it('fails a cached connection with a LoginId the tenant does not own as InvalidCredentials', async () => {
    const failure = await failureOf(
      (
        await stack.start({ session: { kind: 'cached', loginId: '6f1c1b40-0000-4000-8000-000000000000' }, products: { investments: true }, timing: FAST })
      ).result(),
    );
    assert.equal(failure.type, 'InvalidCredentials');
  });

  for (const username of [
    'retry_later_twice',
    'aggregation_error_once',
    'flaky_503',
    'flaky_reset',
    'rate_limited',
    'flaky_malformed',
    'loading',
    'operation_dispatched',
  ]) {
    it(`recovers from ${username} and completes`, async () => {
      const handle = await stack.start(live(username));
      assertAccounts(await handle.result());
      await replay(handle.workflowId, `recovers-${username}`);
    });
  }

  it('fails with PollingTimedOut when data stays pending past the limit', async () => {
    const loginId = await stack.savedLogin('pending_polls_100000');
    const handle = await stack.start({
      session: { kind: 'cached', loginId },
      products: { accountsDetail: {} },
      timing: { pollIntervalMs: 50, pollTimeoutMs: 500 },
    });
    const failure = await failureOf(handle.result());
    assert.equal(failure.type, 'PollingTimedOut');
    await replay(handle.workflowId, 'failure-polling-timed-out');
  });

  it('ends as Cancelled when the pipeline cancels it while it waits for an answer', async () => {
    const handle = await stack.start(live('trusted_device'));
    await stack.waitForState(handle.workflowId, (s) => s.status === 'AwaitingAnswer', 'a challenge');
    await handle.cancel();
    await assert.rejects(handle.result(), WorkflowFailedError);
    const description = await handle.describe();
    assert.equal(description.status.name, 'CANCELLED');
    await replay(handle.workflowId, 'cancelled-awaiting-answer');
  });
});

describe('replay', () => {
  it('replays the history of every flow above without nondeterminism', async () => {
    assert.ok(finished.length >= 20, `only ${finished.length} histories kept`);
    const histories = finished.map(({ workflowId }) => ({ workflowId, history: env.client.workflow.getHandle(workflowId).fetchHistory() }));
    const resolved = await Promise.all(histories.map(async ({ workflowId, history }) => ({ workflowId, history: await history })));
    const failures: string[] = [];
    for await (const result of Worker.runReplayHistories(
      { ...productWorkflowCode(), dataConverter: workerDataConverterFor({ encryption: TEST_ENCRYPTION }), replayName: 'connection-test' },
      resolved,
    )) {
      if (result.error) failures.push(`${result.workflowId}: ${String(result.error)}`);
    }
    assert.deepEqual(failures, []);
  });
});
