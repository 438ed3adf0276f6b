/**
 * A callback's delivery over hours and days, on sdk-java's time-skipping server: a receiver down for
 * ten minutes gets the event after, under the same webhook-id and bytes on every attempt; one down
 * for good is given up after a day of backed-off attempts, counted once as given up; a result sent
 * by reference that nobody claims expires after two days. The delivery workflow runs on the real
 * worker's activities against a real HTTP receiver; hours pass by skipping time.
 */
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import {
  CALLBACK_DELIVERY_WINDOW_MS,
  CALLBACK_DELIVERY_WORKFLOW_TYPE,
  callbackDeliveryStateQuery,
  callbackWorkflowId,
  RESULT_CLAIM_WINDOW_MS,
  webhookIdOf,
  type CallbackDeliveryInput,
  type CallbackDeliveryState,
} from '../../src/contract/callbacks/callback-definitions.js';
import type { CallbackSettings } from '../../src/callbacks/callback-policy.js';
import type { CallbackAttemptLabel } from '../../src/metrics/callback-metrics.js';
import { startConnectionStack, type ConnectionStack } from '../helpers/connection-stack.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';
import { createTimeSkippingEnvironment, uniqueId, waitFor } from '../helpers/temporal.js';

let env: TestWorkflowEnvironment;
let stack: ConnectionStack;
let receiver: WebhookReceiver;
let dir: string;
const customerId = uniqueId('patient');
const attempts: CallbackAttemptLabel[] = [];

before(async () => {
  env = await createTimeSkippingEnvironment();
  receiver = await startWebhookReceiver();
  dir = mkdtempSync(join(tmpdir(), 'webhook-secrets-'));
  const secretFile = join(dir, 'secrets');
  writeFileSync(secretFile, `whsec_${randomBytes(32).toString('base64')}\n`);
  const settings: CallbackSettings = {
    urls: new Map([[customerId, [`${receiver.origin}/hooks`]]]),
    secretFiles: new Map([[customerId, secretFile]]),
    resultInBody: new Set(),
    entryUrl: 'https://pipelines.example.test',
  };
  // Plain payloads: only the environment's own client skips time while it waits, and it has no codec.
  stack = await startConnectionStack(env, {
    encryption: 'off',
    customerId,
    callbacks: settings,
    callbackMetrics: { attempted: (outcome) => attempts.push(outcome) },
  });
});

after(async () => {
  await stack?.stop();
  await receiver?.close();
  await env?.teardown();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** A delivery as a connection's end starts it, for a run that never existed (the event is all it needs). */
async function startDelivery(resultByReference: boolean) {
  const runId = randomUUID();
  const input: CallbackDeliveryInput = {
    customerId,
    url: `${receiver.origin}/hooks`,
    webhookId: webhookIdOf(runId),
    resultByReference,
    event: {
      type: 'connection.completed',
      timestamp: new Date().toISOString(),
      data: { workflowId: `connection-${customerId}:app-1`, runId, customerId, status: 'Completed' },
    },
  };
  // Started without skipping (a plain client): the test decides when time passes.
  const plain = new Client({ connection: env.connection, namespace: env.namespace ?? 'default' });
  await plain.workflow.start(CALLBACK_DELIVERY_WORKFLOW_TYPE, { taskQueue: stack.taskQueue, workflowId: callbackWorkflowId(customerId, runId), args: [input] });
  return { webhookId: input.webhookId, handle: env.client.workflow.getHandle(callbackWorkflowId(customerId, runId)) };
}

void describe('a callback delivery over time', () => {
  void it('reaches a receiver that was down for ten minutes, the same webhook-id and bytes on every attempt', async () => {
    receiver.answer = () => ({ status: 503 });
    const { webhookId, handle } = await startDelivery(false);
    await waitFor(async () => (await handle.query(callbackDeliveryStateQuery)).status === 'Retrying', { describe: 'the first attempt refused' });
    await env.sleep('10 minutes');
    receiver.answer = () => ({ status: 204 });
    const state = (await handle.result()) as CallbackDeliveryState;
    assert.equal(state.status, 'Delivered');
    const seen = receiver.received.filter((request) => request.headers['webhook-id'] === webhookId);
    assert.equal(seen.length, state.attempts);
    assert.ok(state.attempts >= 7, `attempts: ${state.attempts} (5 s doubling: at least 7 within ten minutes)`);
    assert.deepEqual(
      seen.map((request) => request.status),
      [...Array<number>(seen.length - 1).fill(503), 204],
    );
    assert.equal(new Set(seen.map((request) => request.body)).size, 1, 'the same body on every attempt');
    const waited = Date.parse(state.deliveredAt ?? '') - Date.parse(state.firstAttemptAt ?? '');
    assert.ok(waited >= 10 * 60_000 && waited < 30 * 60_000, `delivered ${waited} ms after the first attempt (workflow time)`);
  });

  void it('gives up after a day of attempts on a receiver down for good, counted once as given up', async () => {
    receiver.answer = () => ({ status: 500 });
    const before = attempts.length;
    const { webhookId, handle } = await startDelivery(false);
    const state = (await handle.result()) as CallbackDeliveryState;
    assert.equal(state.status, 'GivenUp');
    assert.match(state.lastError ?? '', /the receiver answered 500: receiver down/);
    const span = Date.parse(state.givenUpAt ?? '') - Date.parse(state.firstAttemptAt ?? '');
    assert.ok(span > CALLBACK_DELIVERY_WINDOW_MS - 60 * 60_000 && span <= CALLBACK_DELIVERY_WINDOW_MS, `gave up ${span} ms after the first attempt`);
    assert.ok(state.attempts >= 25 && state.attempts <= 40, `attempts: ${state.attempts} (backoff to an hour, for a day)`);
    const counted = attempts.slice(before);
    assert.equal(counted.length, state.attempts);
    assert.deepEqual(
      counted.filter((label) => label !== 'retrying'),
      ['given_up'],
    );
    assert.equal(receiver.received.filter((request) => request.headers['webhook-id'] === webhookId).length, state.attempts);
  });

  void it('lets an unclaimed result reference expire after its window', async () => {
    receiver.answer = () => ({ status: 200 });
    const { handle } = await startDelivery(true);
    const state = (await handle.result()) as CallbackDeliveryState;
    assert.equal(state.status, 'Delivered');
    assert.equal(state.resultClaim, 'expired');
    const events = (await handle.fetchHistory()).events ?? [];
    const last = events.at(-1)?.eventTime;
    const first = events[0]?.eventTime;
    const lasted = (Number(last?.seconds ?? 0) - Number(first?.seconds ?? 0)) * 1000;
    assert.ok(lasted >= RESULT_CLAIM_WINDOW_MS - 1000, `the claim stayed open ${lasted} ms`);
  });
});
