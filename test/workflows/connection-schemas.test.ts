/**
 * The state, result, first step and answer outcome schemas (src/contract/connection/connection-schemas.ts)
 * describe what a real connection answers: connections run to completion on a real dev server against
 * the real sandbox, and every state query answer on the way, the first step, the answer's outcome and
 * every result parse. The Python models are generated from these
 * schemas, so a Python caller reads the same.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SANDBOX_PASSWORD, SCENARIOS, describeScenario } from '../../sandbox/scenarios.js';
import { awaitFirstStepUpdate, connectionStateQuery, submitAnswerUpdate } from '../../src/contract/connection/connection-definitions.js';
import { AnswerOutcomeSchema, ConnectionResultSchema, ConnectionStateSchema, FirstStepSchema } from '../../src/contract/connection/connection-schemas.js';
import { connectionStackOfFile } from '../helpers/connection-stack.js';

const FAST = { pollIntervalMs: 100, pollTimeoutMs: 20_000, answerTimeoutMs: 20_000 };

const file = connectionStackOfFile();

/** Parses with the schema, failing the test with zod's issues (path and message) when it does not. */
function parses<T>(
  schema: { safeParse(value: unknown): { success: true; data: T } | { success: false; error: { issues: unknown[] } } },
  value: unknown,
  what: string,
): T {
  const parsed = schema.safeParse(value);
  if (!parsed.success) assert.fail(`${what} does not parse: ${JSON.stringify(parsed.error.issues)}`);
  return parsed.data;
}

describe('the connection state and result schemas', () => {
  it('parse a live connection answered through a challenge: the first step, the challenge state, the outcome, the completed state, the result', async () => {
    const scenario = SCENARIOS.find((entry) => entry.username === 'security_question') ?? assert.fail('scenario');
    const [round] = describeScenario(scenario).challengeSequence;
    const handle = await file.stack.start({
      session: { kind: 'live', institution: scenario.institution, username: scenario.username, password: SANDBOX_PASSWORD, save: true },
      products: { accountsDetail: { WithTransactions: true }, investments: true },
      timing: FAST,
    });
    const first = parses(FirstStepSchema, await handle.executeUpdate(awaitFirstStepUpdate), 'the first step');
    assert.equal(first.step === 'challenge' && first.challengeSet.challenges[0]?.Prompt, round?.challenges[0]?.Prompt);
    const waiting = await file.stack.waitForState(handle.workflowId, (s) => s.status === 'AwaitingAnswer', 'a challenge');
    const challenged = parses(ConnectionStateSchema, waiting, 'the AwaitingAnswer state');
    assert.equal(challenged.challengeSet?.challenges[0]?.Prompt, round?.challenges[0]?.Prompt);

    const outcome = await handle.executeUpdate(submitAnswerUpdate, {
      args: [{ challengeSetId: waiting.challengeSet?.id ?? '', responses: round?.answer ?? {} }],
    });
    assert.equal(parses(AnswerOutcomeSchema, outcome, 'the answer outcome').outcome, 'accepted');
    const result = parses(ConnectionResultSchema, await handle.result(), 'the result');
    assert.ok(result.accountsDetail && result.accountsDetail.Accounts.length > 0, 'accounts detail');
    assert.ok(result.investments && result.investments.Accounts.length > 0, 'investments');

    const completed = parses(ConnectionStateSchema, await handle.query(connectionStateQuery), 'the Completed state');
    assert.equal(completed.status, 'Completed');
    assert.deepEqual([...completed.retrieved].sort(), ['accountsDetail', 'investments']);
  });

  it('parse a cached connection with attributes, and a failed connection state', async () => {
    const loginId = await file.stack.savedLogin('no_mfa');
    const handle = await file.stack.start({
      session: { kind: 'cached', loginId },
      products: { attributes: { package: 'GetLendingAttributes' } },
      timing: FAST,
    });
    const result = parses(ConnectionResultSchema, await handle.result(), 'the result');
    assert.equal(Object.keys(result.attributes?.Groups ?? {}).length, 1, 'one attribute group');

    const failing = await file.stack.start({
      session: { kind: 'live', institution: 'SandboxBank', username: 'invalid_password', password: SANDBOX_PASSWORD, save: false },
      products: { accountsDetail: {} },
      timing: FAST,
    });
    await assert.rejects(failing.result());
    const failed = parses(ConnectionStateSchema, await failing.query(connectionStateQuery), 'the Failed state');
    assert.equal(failed.status, 'Failed');
    assert.equal(failed.failure?.type, 'InvalidCredentials');
  });

  it('refuse a state whose field breaks the contract, naming the field', () => {
    const parsed = ConnectionStateSchema.safeParse({
      status: 'Sleeping',
      mode: 'live',
      customerId: 'c',
      totalPolls: 0,
      sessionRestarts: 0,
      retrieved: [],
      startedAt: 'x',
      updatedAt: 'x',
    });
    assert.equal(parsed.success, false);
    assert.deepEqual(
      parsed.error?.issues.map((issue) => issue.path),
      [['status']],
    );
    const outcome = AnswerOutcomeSchema.safeParse({ outcome: 'rejected', serviceCode: 'INVALID_SECURITY_RESPONSE' });
    assert.deepEqual(
      outcome.error?.issues.map((issue) => issue.path),
      [['message']],
    );
    assert.equal(FirstStepSchema.safeParse({ step: 'waiting' }).success, false);
  });
});
