/**
 * Poison-proof messages and answer bounds: a signal or update whose payload cannot be decoded (one
 * copied from another connection's history among them), or an
 * answer past the size limits, is refused or recorded as a rejection; the connection keeps its
 * deadlines and queries keep answering. With encryption on, a payload that is not sealed is one of
 * them: the right answer sent without the key is refused, never applied. Real dev server, real
 * sandbox, raw gRPC for what our own client would never send.
 */
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { WorkflowFailedError, WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { decodeOptionalFailureToOptionalError } from '../../src/sdk/internals.js';
import proto from '@temporalio/proto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { ENCRYPTED_ENCODING, KEY_ID_METADATA_KEY } from '../../src/codec/encryption-codec.js';
import { SANDBOX_PASSWORD, SCENARIOS, describeScenario } from '../../sandbox/scenarios.js';
import { ANSWER_LIMITS } from '../../src/workflows/connection/challenges.js';
import { answerChallengeSignal, CONNECTION_WORKFLOW_TYPE, submitAnswerUpdate } from '../../src/contract/connection/connection-definitions.js';
import { startConnectionStack, type ConnectionStack } from '../helpers/connection-stack.js';
import { createDevEnvironment } from '../helpers/temporal.js';

const scenario = SCENARIOS.find((entry) => entry.username === 'security_question') ?? assert.fail('scenario');
const round = describeScenario(scenario).challengeSequence[0] ?? assert.fail('a challenge round');
const prompt = round.challenges[0]?.Prompt ?? assert.fail('a prompt');

let env: TestWorkflowEnvironment;
let stack: ConnectionStack;

before(async () => {
  env = await createDevEnvironment();
  // Encryption on, so a payload under a key nobody has can be sent too.
  stack = await startConnectionStack(env, { encryption: { keyId: 'current', key: randomBytes(32), decryptionKeys: new Map() } });
});

after(async () => {
  await stack?.stop();
  await env?.teardown();
});

function start(answerTimeoutMs = 30_000) {
  return stack.start({
    session: { kind: 'live', institution: scenario.institution, username: scenario.username, password: SANDBOX_PASSWORD, save: true },
    products: { accountsDetail: {} },
    timing: { pollIntervalMs: 100, pollTimeoutMs: 20_000, answerTimeoutMs },
  });
}

const { temporal } = proto;
const encoder = new TextEncoder();
type RawPayload = proto.temporal.api.common.v1.IPayload;

/** The connection's own codec: to seal a payload our client would never send. */
async function sealed(payload: RawPayload): Promise<RawPayload> {
  const [codec] = stack.client.options.loadedDataConverter.payloadCodecs;
  const [encoded] = await (codec ?? assert.fail('the stack encrypts')).encode([payload]);
  return encoded ?? assert.fail('one payload sealed');
}

const POISON: { name: string; payload: () => Promise<RawPayload>; reason: RegExp }[] = [
  {
    // The attack: anyone who can call Temporal sends the right answer without the key.
    name: 'a well-formed answer that is not sealed',
    payload: () =>
      Promise.resolve({
        metadata: { encoding: encoder.encode('json/plain') },
        data: encoder.encode(JSON.stringify({ challengeSetId: '1', responses: round.answer })),
      }),
    reason: /payload not sealed: its encoding is "json\/plain"/,
  },
  {
    name: 'an unknown encoding, not sealed',
    payload: () => Promise.resolve({ metadata: { encoding: encoder.encode('binary/whatever') }, data: encoder.encode('"x"') }),
    reason: /encoding is "binary\/whatever"/,
  },
  {
    name: 'sealed data that is not JSON',
    payload: () => sealed({ metadata: { encoding: encoder.encode('json/plain') }, data: encoder.encode('{"challengeSetId": "1", ') }),
    reason: /not valid JSON/,
  },
  {
    name: 'a key nobody has',
    payload: () =>
      Promise.resolve({ metadata: { encoding: encoder.encode(ENCRYPTED_ENCODING), [KEY_ID_METADATA_KEY]: encoder.encode('nobody') }, data: randomBytes(64) }),
    reason: /key id "nobody"/,
  },
];

async function sendRawSignal(workflowId: string, payload: RawPayload): Promise<void> {
  await env.client.workflowService.signalWorkflowExecution({
    namespace: env.namespace ?? 'default',
    workflowExecution: { workflowId },
    signalName: answerChallengeSignal.name,
    input: { payloads: [payload] },
    identity: 'poison-test',
    requestId: randomUUID(),
  });
}

async function sendRawUpdate(workflowId: string, payload: RawPayload): Promise<proto.temporal.api.update.v1.IOutcome | null | undefined> {
  const response = await env.client.workflowService.updateWorkflowExecution({
    namespace: env.namespace ?? 'default',
    workflowExecution: { workflowId },
    request: { meta: { updateId: randomUUID(), identity: 'poison-test' }, input: { name: submitAnswerUpdate.name, args: { payloads: [payload] } } },
    waitPolicy: { lifecycleStage: temporal.api.enums.v1.UpdateWorkflowExecutionLifecycleStage.UPDATE_WORKFLOW_EXECUTION_LIFECYCLE_STAGE_COMPLETED },
  });
  return response.outcome;
}

describe('messages that cannot be decoded', () => {
  for (const poison of POISON) {
    it(`records a signal with ${poison.name} as a rejection; queries answer and the connection completes`, async () => {
      const handle = await start();
      await stack.waitForState(handle.workflowId, (s) => s.status === 'AwaitingAnswer', 'a challenge');
      const callsBefore = stack.upstreamCalls.length;
      await sendRawSignal(handle.workflowId, await poison.payload());
      const state = await stack.waitForState(handle.workflowId, (s) => s.lastRejection !== undefined, 'the rejection recorded');
      assert.equal(state.status, 'AwaitingAnswer', 'the answer was not applied');
      assert.equal(stack.upstreamCalls.length, callsBefore, 'nothing was sent to the service');
      assert.match(state.lastRejection?.message ?? '', /could not be decoded/);
      assert.match(state.lastRejection?.message ?? '', poison.reason);
      await handle.signal(answerChallengeSignal, { challengeSetId: '1', responses: round.answer });
      assert.ok((await handle.result()).accountsDetail, 'the connection completed after the poison signal');
    });

    it(`refuses an update with ${poison.name} before it is recorded`, async () => {
      const handle = await start();
      await stack.waitForState(handle.workflowId, (s) => s.status === 'AwaitingAnswer', 'a challenge');
      const eventsBefore = (await handle.fetchHistory()).events?.length;
      const outcome = await sendRawUpdate(handle.workflowId, await poison.payload());
      // Failure messages are encrypted too: read it back through the stack's codec.
      const failure = await decodeOptionalFailureToOptionalError(stack.client.options.loadedDataConverter, outcome?.failure, {
        namespace: stack.client.options.namespace,
        workflowId: handle.workflowId,
      });
      assert.match(failure?.message ?? '', /could not be decoded/);
      assert.equal((await handle.fetchHistory()).events?.length, eventsBefore, 'no history event was written');
      await handle.executeUpdate(submitAnswerUpdate, { args: [{ challengeSetId: '1', responses: round.answer }] });
      assert.ok((await handle.result()).accountsDetail);
    });
  }

  it("refuses the right answer copied from another connection's history of the same tenant, as a signal and as an update, by name", async () => {
    // The attack: whoever can read one applicant's history and write to the namespace replays its sealed answer into another's connection.
    const first = await start();
    const second = await start();
    await stack.waitForState(first.workflowId, (s) => s.status === 'AwaitingAnswer', 'a challenge');
    await stack.waitForState(second.workflowId, (s) => s.status === 'AwaitingAnswer', 'a challenge');
    await first.signal(answerChallengeSignal, { challengeSetId: '1', responses: round.answer });
    assert.ok((await first.result()).accountsDetail, 'the answer was right for its own connection');
    const signalled = (await first.fetchHistory()).events?.find(
      (event) => event.workflowExecutionSignaledEventAttributes?.signalName === answerChallengeSignal.name,
    );
    const copied = signalled?.workflowExecutionSignaledEventAttributes?.input?.payloads?.[0] ?? assert.fail("the first connection's sealed answer");
    const misbound = new RegExp(`sealed for workflow "${first.workflowId}" sent to workflow "${second.workflowId}"`);
    const callsBefore = stack.upstreamCalls.length;
    await sendRawSignal(second.workflowId, copied);
    const state = await stack.waitForState(second.workflowId, (s) => s.lastRejection !== undefined, 'the rejection recorded');
    assert.equal(state.status, 'AwaitingAnswer', 'the copied answer was not applied');
    assert.match(state.lastRejection?.message ?? '', misbound);
    const outcome = await sendRawUpdate(second.workflowId, copied);
    const failure = await decodeOptionalFailureToOptionalError(stack.client.options.loadedDataConverter, outcome?.failure, {
      namespace: stack.client.options.namespace,
      workflowId: second.workflowId,
    });
    assert.match(failure?.message ?? '', misbound);
    assert.equal(stack.upstreamCalls.length, callsBefore, 'nothing was sent to the service');
    await second.executeUpdate(submitAnswerUpdate, { args: [{ challengeSetId: '1', responses: round.answer }] });
    assert.ok((await second.result()).accountsDetail, "its own operator's answer still completes it");
  });

  it('refuses, within one connection, an answer sealed for the signal sent as the update and one sealed for the update sent as the signal, by name', async () => {
    const handle = await start();
    await stack.waitForState(handle.workflowId, (s) => s.status === 'AwaitingAnswer', 'a challenge');
    // What a copy of the connection's own history would hold: the right answer, bound to this workflow, naming its message.
    const [codec] = stack.client.options.loadedDataConverter.payloadCodecs;
    const sealedAs = async (sentAs: string) => {
      const plain = {
        metadata: { encoding: encoder.encode('json/plain') },
        data: encoder.encode(JSON.stringify({ challengeSetId: '1', responses: round.answer, sentAs })),
      };
      const [sealedPayload] = await (codec ?? assert.fail('the stack encrypts')).encode([plain], {
        type: 'workflow',
        namespace: stack.client.options.namespace,
        workflowId: handle.workflowId,
      });
      return sealedPayload ?? assert.fail('one payload sealed');
    };
    const outcome = await sendRawUpdate(handle.workflowId, await sealedAs(answerChallengeSignal.name));
    const failure = await decodeOptionalFailureToOptionalError(stack.client.options.loadedDataConverter, outcome?.failure, {
      namespace: stack.client.options.namespace,
      workflowId: handle.workflowId,
    });
    assert.match(failure?.message ?? '', /an answer sealed for the answerChallenge message sent as the submitAnswer update/);
    await sendRawSignal(handle.workflowId, await sealedAs(submitAnswerUpdate.name));
    const state = await stack.waitForState(handle.workflowId, (s) => s.lastRejection !== undefined, 'the rejection recorded');
    assert.equal(state.status, 'AwaitingAnswer');
    assert.match(state.lastRejection?.message ?? '', /an answer sealed for the submitAnswer message sent as the answerChallenge signal/);
    // Each as the message it was sent as is taken: the client's own answer names submitAnswer.
    await sendRawSignal(handle.workflowId, await sealedAs(answerChallengeSignal.name));
    assert.ok((await handle.result()).accountsDetail, 'the answer sealed for the signal, sent as the signal, completed it');
  });

  it('keeps its answer deadline after a poison signal: it ends ChallengeAbandoned, not wedged', async () => {
    const handle = await start(1_500);
    await stack.waitForState(handle.workflowId, (s) => s.status === 'AwaitingAnswer', 'a challenge');
    await sendRawSignal(handle.workflowId, (await POISON[0]?.payload()) ?? {});
    const error = await handle.result().then(
      () => assert.fail('expected ChallengeAbandoned'),
      (caught: unknown) => caught,
    );
    assert.ok(error instanceof WorkflowFailedError && error.cause instanceof ApplicationFailure);
    assert.equal(error.cause.type, 'ChallengeAbandoned');
  });
});

describe('a start input that is not sealed', () => {
  it('fails the connection as InvalidConnectionInput naming it, before anything reaches the service', async () => {
    const callsBefore = stack.upstreamCalls.length;
    // The environment's own client has no codec: what anyone who can call Temporal would send.
    const handle = await env.client.workflow.start(CONNECTION_WORKFLOW_TYPE, {
      taskQueue: stack.taskQueue,
      workflowId: `connection-${stack.customerId}:unsealed-${randomUUID()}`,
      args: [
        {
          customerId: stack.customerId,
          session: { kind: 'live', institution: scenario.institution, username: scenario.username, password: SANDBOX_PASSWORD },
          products: { accountsDetail: {} },
        },
      ],
    });
    // Its failure is sealed by the worker: read it through the stack's codec.
    const error = await stack.client.workflow
      .getHandle(handle.workflowId)
      .result()
      .then(
        () => assert.fail('an unsealed input started a connection'),
        (caught: unknown) => caught,
      );
    assert.ok(error instanceof WorkflowFailedError && error.cause instanceof ApplicationFailure, String(error));
    assert.equal(error.cause.type, 'InvalidConnectionInput');
    assert.match(error.cause.message, /payload not sealed: its encoding is "json\/plain"/);
    assert.doesNotMatch(error.cause.message, new RegExp(SANDBOX_PASSWORD));
    assert.equal(stack.upstreamCalls.length, callsBefore, 'nothing was sent to the service');
  });
});

describe('answer size limits', () => {
  it('refuses an oversized answer in the update validator, naming the limit, before it is recorded or sent', async () => {
    const handle = await start();
    await stack.waitForState(handle.workflowId, (s) => s.status === 'AwaitingAnswer', 'a challenge');
    const eventsBefore = (await handle.fetchHistory()).events?.length;
    const callsBefore = stack.upstreamCalls.length;
    const oversized = [
      { responses: { [prompt]: ['x'.repeat(1_000_000)] }, limit: new RegExp(`limit is ${ANSWER_LIMITS.answerChars}`) },
      { responses: { ['p'.repeat(ANSWER_LIMITS.promptChars + 1)]: ['x'] }, limit: new RegExp(`limit is ${ANSWER_LIMITS.promptChars}`) },
      {
        responses: Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`${prompt}${i}`, ['y'.repeat(ANSWER_LIMITS.answerChars)]])),
        limit: new RegExp(`limit is ${ANSWER_LIMITS.totalChars}`),
      },
    ];
    for (const { responses, limit } of oversized) {
      await assert.rejects(handle.executeUpdate(submitAnswerUpdate, { args: [{ challengeSetId: '1', responses }] }), (error: unknown) => {
        assert.ok(error instanceof WorkflowUpdateFailedError);
        assert.match(error.cause?.message ?? '', limit);
        return true;
      });
    }
    assert.equal((await handle.fetchHistory()).events?.length, eventsBefore, 'no history event was written');
    assert.equal(stack.upstreamCalls.length, callsBefore, 'nothing was sent to the service');
    await handle.executeUpdate(submitAnswerUpdate, { args: [{ challengeSetId: '1', responses: round.answer }] });
    assert.ok((await handle.result()).accountsDetail);
  });

  it('records an oversized signal answer as a rejection naming the limit, and keeps waiting', async () => {
    const handle = await start();
    await stack.waitForState(handle.workflowId, (s) => s.status === 'AwaitingAnswer', 'a challenge');
    await handle.signal(answerChallengeSignal, { challengeSetId: '1', responses: { [prompt]: ['x'.repeat(1_000_000)] } });
    const state = await stack.waitForState(handle.workflowId, (s) => s.lastRejection !== undefined, 'the rejection recorded');
    assert.match(state.lastRejection?.message ?? '', new RegExp(`limit is ${ANSWER_LIMITS.answerChars}`));
    assert.ok(state.lastRejection && state.lastRejection.message.length < 500, 'the rejection does not quote the answer');
    await handle.signal(answerChallengeSignal, { challengeSetId: '1', responses: round.answer });
    assert.ok((await handle.result()).accountsDetail);
  });
});
