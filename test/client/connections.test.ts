/**
 * The pipeline client against the whole stack: a real Temporal dev server, the real worker and
 * activities, and the real sandbox over HTTP.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client } from '@temporalio/client';
import { TypedSearchAttributes } from '@temporalio/common';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import {
  AnswerRejectedError,
  ConnectionAlreadyEndedError,
  ConnectionFailedError,
  ConnectionNotFoundError,
  InvalidBusinessKeyError,
  InvalidConnectionInputError,
  connectionKey,
  type ConnectionsClient,
} from '../../src/client/index.js';
import type { ConnectionInputArgs } from '../../src/client/index.js';
import type { ConnectionStack } from '../helpers/connection-stack.js';
import { CustomerIdKey } from '../../src/contract/search-attributes.js';
import { ANSWER_LIMITS } from '../../src/workflows/connection/challenges.js';
import { uniqueId, waitFor } from '../helpers/temporal.js';
import { liveInput, startClientStack, stopClientStack } from './client-stack.js';
import { correctAnswer } from './scenario-answers.js';

let env: TestWorkflowEnvironment;
let stack: ConnectionStack;
let client: ConnectionsClient;

before(async () => {
  ({ env, stack, client } = await startClientStack());
});

after(async () => {
  await stopClientStack({ stack, env });
});

function live(username: string, institution = 'SandboxBank'): ConnectionInputArgs {
  return liveInput(stack.customerId, username, institution, { WithTransactions: true, WithBalance: true });
}

function key(): string {
  return connectionKey(stack.customerId, uniqueId('app'));
}

void describe('the pipeline client', () => {
  void it('starts a connection and answers at once with its first challenge set', async () => {
    const id = key();
    const first = await client.startAndAwaitFirstStep(id, live('security_question'));
    assert.equal(first.workflowId, id);
    assert.equal(first.step, 'challenge');
    assert.equal(first.step === 'challenge' && first.challengeSet.challenges[0]?.Type, 'QuestionAndAnswer');

    const state = await client.getState(id);
    assert.equal(state.status, 'AwaitingAnswer');
    const set = state.challengeSet;
    assert.ok(set);
    const prompt = set.challenges[0]?.Prompt ?? '';
    const correct = await correctAnswer(stack.sandboxUrl, 'security_question', 0);
    assert.ok(correct[prompt], 'the sandbox lists the answer to the security question');

    const outcome = await client.answer(id, { challengeSetId: set.id, responses: correct });
    assert.equal(outcome.outcome, 'accepted');
    const result = await client.result(id);
    assert.equal(result.customerId, stack.customerId);
    assert.ok(result.accountsDetail && result.accountsDetail.Accounts.length > 0);
  });

  void it('answers "session open" when the institution asks no challenge', async () => {
    const id = key();
    const first = await client.startAndAwaitFirstStep(id, live('no_mfa'));
    assert.equal(first.step, 'session-open');
    assert.match(first.step === 'session-open' ? first.loginId : '', /^[0-9a-f-]{36}$/);
    await client.result(id);
  });

  void it('gives the same connection when the same key is started twice', async () => {
    const id = key();
    const first = await client.startAndAwaitFirstStep(id, live('security_question'));
    const again = await client.startAndAwaitFirstStep(id, live('security_question'));
    await client.start(id, live('security_question'));
    assert.equal(first.step, 'challenge');
    assert.equal(again.step, 'challenge');
    assert.equal(first.step === 'challenge' && again.step === 'challenge' && again.challengeSet.id === first.challengeSet.id, true);
    const runs = await waitFor(
      async () => {
        const found = (await client.list({ customerId: stack.customerId, status: 'AwaitingAnswer' })).filter((c) => c.workflowId === id);
        return found.length > 0 ? found : undefined;
      },
      { describe: 'the connection to appear in visibility' },
    );
    assert.equal(runs.length, 1);
    await client.cancel(id);
  });

  void it('refuses to start again a key whose connection completed, unless asked', async () => {
    const id = key();
    await client.start(id, live('no_mfa'));
    await client.result(id);
    const described = await client.describe(id);
    assert.deepEqual([described.executionStatus, described.status], ['COMPLETED', 'Completed']);
    await assert.rejects(client.start(id, live('no_mfa')), (error: unknown) => error instanceof ConnectionAlreadyEndedError && error.workflowId === id);
    await assert.rejects(client.startAndAwaitFirstStep(id, live('no_mfa')), ConnectionAlreadyEndedError);
    const rerun = await client.startAndAwaitFirstStep(id, live('no_mfa'), { rerun: 'always' });
    assert.equal(rerun.step, 'session-open');
    await client.result(id);
  });

  void it('reports bad credentials as a typed failure with the service code', async () => {
    const id = key();
    const first = await client.startAndAwaitFirstStep(id, live('invalid_password'));
    assert.equal(first.step, 'ended');
    await assert.rejects(client.result(id), (error: unknown) => {
      assert.ok(error instanceof ConnectionFailedError, String(error));
      assert.equal(error.name, 'ConnectionFailedError');
      assert.equal(error.workflowId, id);
      assert.equal(error.type, 'InvalidCredentials');
      assert.equal(error.serviceCode, 'INVALID_PASSWORD');
      assert.ok(error.cause instanceof Error);
      return true;
    });
  });

  void it('refuses a malformed or oversized answer before sending it, naming the problem', async () => {
    const id = key();
    const first = await client.startAndAwaitFirstStep(id, live('reset_questions', 'SandboxCreditUnion'));
    assert.equal(first.step, 'challenge');
    const set = first.step === 'challenge' ? first.challengeSet : undefined;
    assert.ok(set);
    const choice = set.challenges.find((c) => c.Type === 'MultipleChoice');
    assert.ok(choice);
    const responses = Object.fromEntries(set.challenges.map((c) => [c.Prompt, [c.Iterables?.[0] ?? '']]));
    responses[choice.Prompt] = ['Not an option'];

    await assert.rejects(client.answer(id, { challengeSetId: set.id, responses }), (error: unknown) => {
      assert.ok(error instanceof AnswerRejectedError);
      assert.equal(error.source, 'client');
      assert.match(error.problem, /Which of these streets.*not one of the offered options/);
      return true;
    });
    // Sent anyway, the workflow's update validator refuses it with the same words.
    await assert.rejects(client.answer(id, { challengeSetId: set.id, responses }, { checkLocally: false }), (error: unknown) => {
      assert.ok(error instanceof AnswerRejectedError);
      assert.equal(error.source, 'validator');
      assert.match(error.problem, /not one of the offered options/);
      return true;
    });
    // A stale challenge-set id is refused too.
    await assert.rejects(client.answer(id, { challengeSetId: 'nope', responses }), /no longer current/);
    // An oversized answer never reaches Temporal, even when the caller asks not to check the answer.
    const oversized = { ...responses, [choice.Prompt]: ['x'.repeat(5_000_000)] };
    await assert.rejects(client.answer(id, { challengeSetId: set.id, responses: oversized }, { checkLocally: false }), (error: unknown) => {
      assert.ok(error instanceof AnswerRejectedError);
      assert.equal(error.source, 'client');
      assert.match(error.problem, new RegExp(`the limit is ${ANSWER_LIMITS.answerChars} characters an answer`));
      return true;
    });
    const state = await client.getState(id);
    assert.equal(state.status, 'AwaitingAnswer');
    assert.equal(state.challengeSet?.id, set.id, 'nothing reached the service');
    await client.cancel(id);
  });

  void it('lists connections awaiting an answer, filtered by customer and institution', async () => {
    const id = key();
    await client.startAndAwaitFirstStep(id, live('trusted_device', 'SandboxDeviceBank'));
    const listed = await waitFor(
      async () => {
        const found = await client.list({ status: 'AwaitingAnswer', customerId: stack.customerId, institution: 'SandboxDeviceBank' });
        return found.find((c) => c.workflowId === id);
      },
      { describe: 'the connection to be listed as AwaitingAnswer' },
    );
    assert.deepEqual(
      { status: listed.status, customerId: listed.customerId, institution: listed.institution, executionStatus: listed.executionStatus },
      { status: 'AwaitingAnswer', customerId: stack.customerId, institution: 'SandboxDeviceBank', executionStatus: 'RUNNING' },
    );
    assert.equal(typeof listed.startedAt, 'string');
    // A value with quotes is escaped, not interpreted.
    assert.deepEqual(await client.list({ status: 'AwaitingAnswer', institution: 'x" OR WorkflowType = "connectionWorkflow' }), []);
    await client.cancel(id);
  });

  void it("lists a connection whose memo this client cannot open (started raw, unsealed) by its attributes, never failing the listing or the tenants' count", async () => {
    // Anyone who may start workflows can put such a row in visibility under a tenant's id; the SDK's
    // list decodes every memo and one refused would fail the tenant's whole listing.
    const raw = new Client({ connection: env.connection, namespace: env.namespace ?? 'default' });
    const forged = await raw.workflow.start('connectionWorkflow', {
      taskQueue: stack.taskQueue,
      workflowId: key(),
      startDelay: '10 minutes',
      memo: { state: { anything: 'unsealed' } },
      typedSearchAttributes: new TypedSearchAttributes([{ key: CustomerIdKey, value: stack.customerId }]),
    });
    try {
      const listed = await waitFor(async () => (await client.list({ customerId: stack.customerId })).find((c) => c.workflowId === forged.workflowId), {
        describe: 'the raw row listed',
      });
      assert.deepEqual(
        { customerId: listed.customerId, executionStatus: listed.executionStatus },
        { customerId: stack.customerId, executionStatus: 'RUNNING' },
      );
      // The console's tenants are found by each one's newest row: this one, read without its memo.
      assert.ok((await client.counts.tenants(1000)).tenants.includes(stack.customerId), 'the tenant found through the row');
    } finally {
      await forged.terminate('test over');
    }
  });

  void it('ends a cancelled connection with a Cancelled failure', async () => {
    const id = key();
    await client.startAndAwaitFirstStep(id, live('security_question'));
    await client.cancel(id);
    await assert.rejects(client.result(id), (error: unknown) => error instanceof ConnectionFailedError && error.type === 'Cancelled');
  });

  void it('validates the input and the business key before anything is started', async () => {
    const bad = { ...live('no_mfa'), products: {} };
    await assert.rejects(
      client.start(key(), bad),
      (error: unknown) => error instanceof InvalidConnectionInputError && /products: must request at least one/.test(error.message),
    );
    await assert.rejects(
      client.start('connection-someone-else:1', live('no_mfa')),
      (error: unknown) => error instanceof InvalidBusinessKeyError && /must start with "connection-/.test(error.message),
    );
    await assert.rejects(client.start('not a key', live('no_mfa')), InvalidBusinessKeyError);
    assert.throws(() => connectionKey(stack.customerId, 'a b'), InvalidBusinessKeyError);
  });

  void it('names an unknown connection', async () => {
    await assert.rejects(
      client.getState('connection-nobody-here'),
      (error: unknown) => error instanceof ConnectionNotFoundError && error.workflowId === 'connection-nobody-here',
    );
  });
});
