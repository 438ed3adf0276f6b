/**
 * Completion callbacks end to end on the real dev server: connections through the real worker and
 * sandbox, started with a callback URL, post their outcome to a real HTTP receiver, signed in the
 * Standard Webhooks format (checked with the reference library, `standardwebhooks` on npm), with
 * several secrets during a rotation, one webhook-id per event, the result by reference (claimed once)
 * or in the body (opted in), a URL outside the tenant's list refused at start, a name that resolves
 * to an internal address refused at delivery, and every attempt counted.
 */
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client, WorkflowFailedError, WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Webhook } from 'standardwebhooks';
import {
  CALLBACK_DELIVERY_WORKFLOW_TYPE,
  callbackDeliveryStateQuery,
  callbackWorkflowId,
  claimResultUpdate,
  webhookIdOf,
  type CallbackDeliveryInput,
  type CallbackDeliveryState,
  type CallbackEvent,
} from '../../src/contract/callbacks/callback-definitions.js';
import type { CallbackAttemptLabel } from '../../src/metrics/callback-metrics.js';
import { SANDBOX_PASSWORD } from '../../sandbox/scenarios.js';
import { ConnectionsClient } from '../../src/client/connections.js';
import type { ConnectionState } from '../../src/contract/connection/connection-definitions.js';
import { createSandboxLogin } from '../../bench/sandbox-fixtures.js';
import { startConnectionStack, type ConnectionStack } from '../helpers/connection-stack.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';
import { createDevEnvironment, uniqueId, waitFor } from '../helpers/temporal.js';

const FAST = { pollIntervalMs: 50 };
const secret = () => `whsec_${randomBytes(32).toString('base64')}`;
const OLD_SECRET = secret();
const NEW_SECRET = secret();

let env: TestWorkflowEnvironment;
let stack: ConnectionStack;
let receiver: WebhookReceiver;
let secretsDir: string;
const customerId = uniqueId('hooked');
const attempts: CallbackAttemptLabel[] = [];
/** The worker's CALLBACK_* settings, edited by tests as an operator edits the environment. */
const settings: { urls: Map<string, string[]>; secretFiles: Map<string, string>; resultInBody: Set<string>; entryUrl: string } = {
  urls: new Map(),
  secretFiles: new Map(),
  resultInBody: new Set(),
  entryUrl: 'https://pipelines.example.test',
};

before(async () => {
  env = await createDevEnvironment();
  receiver = await startWebhookReceiver();
  secretsDir = mkdtempSync(join(tmpdir(), 'webhook-secrets-'));
  const secretFile = join(secretsDir, `${customerId}.secrets`);
  // A rotation in progress: both secrets sign every message.
  writeFileSync(secretFile, `# ${customerId}\n${OLD_SECRET}\n${NEW_SECRET}\n`, { mode: 0o600 });
  settings.urls.set(customerId, [`${receiver.origin}/hooks`]);
  settings.secretFiles.set(customerId, secretFile);
  stack = await startConnectionStack(env, {
    customerId,
    callbacks: settings,
    callbackMetrics: { attempted: (outcome) => attempts.push(outcome) },
    callbackAttemptTimeoutMs: 1_000,
  });
});

after(async () => {
  await stack?.stop();
  await receiver?.close();
  await env?.teardown();
  if (secretsDir) rmSync(secretsDir, { recursive: true, force: true });
});

function receivedFor(webhookId: string) {
  return receiver.received.filter((request) => request.headers['webhook-id'] === webhookId);
}

async function deliveryState(
  runCustomer: string,
  runId: string,
  until: (state: CallbackDeliveryState) => boolean,
  describe: string,
): Promise<CallbackDeliveryState> {
  const handle = stack.client.workflow.getHandle(callbackWorkflowId(runCustomer, runId));
  return await waitFor(
    async () => {
      try {
        const state = await handle.query(callbackDeliveryStateQuery);
        return until(state) ? state : undefined;
      } catch {
        return undefined;
      }
    },
    { timeoutMs: 30_000, describe },
  );
}

/** Checks the message with the reference library, each secret on its own: either verifies it during the rotation. */
function verified(request: { headers: Record<string, unknown>; body: string }): CallbackEvent {
  const headers = {
    'webhook-id': String(request.headers['webhook-id']),
    'webhook-timestamp': String(request.headers['webhook-timestamp']),
    'webhook-signature': String(request.headers['webhook-signature']),
  };
  const byOld = new Webhook(OLD_SECRET).verify(request.body, headers) as CallbackEvent;
  const byNew = new Webhook(NEW_SECRET).verify(request.body, headers) as CallbackEvent;
  assert.deepEqual(byOld, byNew);
  assert.throws(() => new Webhook(secret()).verify(request.body, headers), /signature/i, 'a secret the tenant does not hold verifies nothing');
  return byNew;
}

void describe('completion callbacks', () => {
  void it('posts a completed connection, signed with both secrets of a rotation, its result by reference claimed once', async () => {
    const loginId = await stack.savedLogin('no_mfa');
    const handle = await stack.start({
      session: { kind: 'cached', loginId },
      products: { accountsDetail: {} },
      timing: FAST,
      callback: { url: `${receiver.origin}/hooks/loans?tenant=a` },
    });
    await handle.result();
    const runId = handle.firstExecutionRunId;
    const webhookId = webhookIdOf(runId);
    const delivered = await deliveryState(customerId, runId, (state) => state.status === 'Delivered', 'the callback delivered');
    assert.equal(delivered.attempts, 1);
    assert.equal(delivered.url, `${receiver.origin}/hooks/loans?…`, 'the URL shown without its query');
    assert.equal(delivered.resultClaim, 'waiting');
    const [message] = receivedFor(webhookId);
    assert.ok(message, 'the receiver got the event');
    assert.equal(message.path, '/hooks/loans?tenant=a');
    assert.equal(message.headers['content-type'], 'application/json');
    assert.equal(String(message.headers['webhook-signature']).split(' ').length, 2, 'one signature per secret');
    const event = verified(message);
    assert.equal(event.type, 'connection.completed');
    assert.equal(event.data.workflowId, handle.workflowId);
    assert.equal(event.data.runId, runId);
    assert.equal(event.data.loginId, loginId);
    assert.equal(event.data.result, undefined, 'the result is not in the body unless the tenant opted in');
    const reference = event.data.resultRef ?? assert.fail('a result reference');
    assert.equal(reference.url, `https://pipelines.example.test/v1/results/${customerId}/${webhookId}`);
    // The connection's state says where its callback is.
    const state = await stack.waitForState(handle.workflowId, (current) => current.callback !== undefined, 'the callback in state');
    assert.deepEqual(state.callback, { deliveryWorkflowId: callbackWorkflowId(customerId, runId), webhookId });
    // What the console's connection page shows on its "Callback" line (GET /api/connections/:id's `callback`).
    const connections = new ConnectionsClient({ client: stack.client, taskQueue: stack.taskQueue });
    assert.equal((await connections.callbackDelivery(state))?.status, 'Delivered');
    assert.equal(await connections.callbackDelivery({ ...state, callback: undefined }), undefined);

    const delivery = stack.client.workflow.getHandle(callbackWorkflowId(customerId, runId));
    await assert.rejects(
      delivery.executeUpdate(claimResultUpdate, { args: [{ token: `${reference.token}x` }] }),
      (error: unknown) => error instanceof WorkflowUpdateFailedError && /wrong token/.test(error.cause?.message ?? ''),
    );
    assert.deepEqual(await delivery.executeUpdate(claimResultUpdate, { args: [{ token: reference.token }] }), { workflowId: handle.workflowId, runId });
    // Claimed, the delivery ends: a second claim finds it closed (the pipeline entry answers 410 Gone).
    const final = (await delivery.result()) as CallbackDeliveryState;
    await assert.rejects(delivery.executeUpdate(claimResultUpdate, { args: [{ token: reference.token }] }), WorkflowNotFoundError);
    assert.equal(final.resultClaim, 'claimed');
    // Refused claims left no trace: one update accepted in the delivery's history.
    const events = (await delivery.fetchHistory()).events ?? [];
    assert.equal(events.filter((entry) => entry.workflowExecutionUpdateAcceptedEventAttributes).length, 1);
  });

  void it('puts the result in the body for a tenant that opted in, and refuses includeResult for one that has not', async () => {
    const loginId = await stack.savedLogin('no_mfa');
    const refused = await stack.start({
      session: { kind: 'cached', loginId },
      products: { accountsDetail: {} },
      timing: FAST,
      callback: { url: `${receiver.origin}/hooks`, includeResult: true },
    });
    await assert.rejects(
      refused.result(),
      (error: unknown) => error instanceof WorkflowFailedError && /callback\.includeResult: tenant .* has not opted in/.test(error.cause?.message ?? ''),
    );

    settings.resultInBody.add(customerId);
    try {
      const handle = await stack.start({
        session: { kind: 'cached', loginId },
        products: { accountsDetail: {} },
        timing: FAST,
        callback: { url: `${receiver.origin}/hooks`, includeResult: true },
      });
      const result = await handle.result();
      await deliveryState(customerId, handle.firstExecutionRunId, (state) => state.status === 'Delivered', 'delivered');
      const [message] = receivedFor(webhookIdOf(handle.firstExecutionRunId));
      const event = verified(message ?? assert.fail('the event'));
      assert.deepEqual(event.data.result, JSON.parse(JSON.stringify(result)));
      assert.equal(event.data.resultRef, undefined);
      // Nothing to claim: the delivery ends once delivered.
      const final = (await stack.client.workflow.getHandle(callbackWorkflowId(customerId, handle.firstExecutionRunId)).result()) as CallbackDeliveryState;
      assert.equal(final.resultClaim, 'none');
    } finally {
      settings.resultInBody.delete(customerId);
    }
  });

  void it("refuses at start a callback URL outside the tenant's list: the connection fails naming it, and never calls the service", async () => {
    for (const url of [
      `${receiver.origin}/other`,
      `${receiver.origin}/hooksx`,
      'https://hooks.attacker.example/hooks',
      'http://169.254.169.254/latest/meta-data',
    ]) {
      const before = stack.upstreamCalls.length;
      const handle = await stack.start({
        session: { kind: 'cached', loginId: '6b3f7a8e-3d2c-4c1b-9a5e-2f1d0c9b8a7e' },
        products: { accountsDetail: {} },
        timing: FAST,
        callback: { url },
      });
      await assert.rejects(
        handle.result(),
        (error: unknown) =>
          error instanceof WorkflowFailedError && error.cause?.message !== undefined && /callback\.url: is not allowed for tenant/.test(error.cause.message),
        url,
      );
      assert.equal(stack.upstreamCalls.length, before, `no call to the service for ${url}`);
      const state = await stack.waitForState(handle.workflowId, (current) => current.status === 'Failed', 'failed');
      assert.equal(state.callback, undefined, 'no callback for a refused URL');
    }
  });

  void it("posts a cancelled connection's outcome without a result, and gives up at once when the URL leaves the list", async () => {
    const handle = await stack.start({
      session: { kind: 'live', institution: 'SandboxBank', username: 'security_question', password: SANDBOX_PASSWORD },
      products: { accountsDetail: {} },
      timing: FAST,
      callback: { url: `${receiver.origin}/hooks/cancelled` },
    });
    await stack.waitForState(handle.workflowId, (state) => state.status === 'AwaitingAnswer', 'a challenge');
    await handle.cancel();
    await assert.rejects(handle.result());
    const delivered = await deliveryState(customerId, handle.firstExecutionRunId, (state) => state.status === 'Delivered', 'the cancellation delivered');
    assert.equal(delivered.resultClaim, 'none');
    const event = verified(receivedFor(webhookIdOf(handle.firstExecutionRunId))[0] ?? assert.fail('the event'));
    assert.equal(event.type, 'connection.cancelled');
    assert.equal(event.data.status, 'Cancelled');
    assert.equal(event.data.resultRef, undefined);

    // The tenant's list changed between the connection's start and its end: a delivery to a URL it no
    // longer allows posts nothing and gives up at once (as the connection's end starts it).
    const runId = randomUUID();
    const delivery: CallbackDeliveryInput = {
      customerId,
      url: `${receiver.origin}/removed/hooks`,
      webhookId: webhookIdOf(runId),
      resultByReference: false,
      event: {
        type: 'connection.completed',
        timestamp: new Date().toISOString(),
        data: { workflowId: `connection-${customerId}:app-1`, runId, customerId, status: 'Completed' },
      },
    };
    await stack.client.workflow.start(CALLBACK_DELIVERY_WORKFLOW_TYPE, {
      taskQueue: stack.taskQueue,
      workflowId: callbackWorkflowId(customerId, runId),
      args: [delivery],
    });
    const givenUp = (await stack.client.workflow.getHandle(callbackWorkflowId(customerId, runId)).result()) as CallbackDeliveryState;
    assert.equal(givenUp.status, 'GivenUp');
    assert.equal(givenUp.attempts, 1);
    assert.match(givenUp.lastError ?? '', /is not allowed for tenant/);
    assert.equal(receivedFor(delivery.webhookId).length, 0);
    // What the console shows of an ended delivery: its final state, read from its result (a client
    // whose queries fail proves no query, which a worker would answer by replaying the history).
    const noQueries = new Client({
      connection: stack.client.connection,
      namespace: stack.client.options.namespace,
      dataConverter: stack.client.options.dataConverter,
      interceptors: { workflow: [{ query: () => Promise.reject(new Error('an ended delivery is read without a query')) }] },
    });
    const shown = await new ConnectionsClient({ client: noQueries, taskQueue: stack.taskQueue }).callbackDelivery({
      callback: { deliveryWorkflowId: callbackWorkflowId(customerId, runId), webhookId: delivery.webhookId },
    } as ConnectionState);
    assert.deepEqual(shown, givenUp);
  });

  void it("sends the same event under the same webhook-id when an attempt's 2xx came too late, and the receiver keeps one", async () => {
    const loginId = await stack.savedLogin('no_mfa');
    // The first answer comes after the attempt's 1 s: the worker counts it failed and posts again.
    let slow = true;
    receiver.answer = () => {
      if (!slow) return { status: 200 };
      slow = false;
      return { status: 200, delayMs: 2_500 };
    };
    try {
      const handle = await stack.start({
        session: { kind: 'cached', loginId },
        products: { accountsDetail: {} },
        timing: FAST,
        callback: { url: `${receiver.origin}/hooks` },
      });
      await handle.result();
      const delivered = await deliveryState(customerId, handle.firstExecutionRunId, (state) => state.status === 'Delivered', 'delivered on the second attempt');
      assert.equal(delivered.attempts, 2);
      const messages = receivedFor(webhookIdOf(handle.firstExecutionRunId));
      assert.equal(messages.length, 2, 'the receiver answered 2xx twice for one event');
      assert.equal(messages[0]?.body, messages[1]?.body, 'the same bytes each time');
      assert.deepEqual(
        messages.map((message) => message.status),
        [200, 200],
      );
      // A receiver that keeps what it has seen by webhook-id keeps one event.
      assert.equal(new Set(messages.map((message) => message.headers['webhook-id'])).size, 1);
    } finally {
      receiver.answer = () => ({ status: 200 });
    }
  });

  void it('refuses to reach an internal address through a DNS name, and retries with the reason in state', async () => {
    // Listed by name (https://localhost), which resolves to 127.0.0.1: an internal address a name never reaches.
    const port = new URL(receiver.origin).port;
    settings.urls.set(customerId, [`${receiver.origin}/hooks`, `https://localhost:${port}/internal`]);
    try {
      const loginId = await stack.savedLogin('no_mfa');
      const handle = await stack.start({
        session: { kind: 'cached', loginId },
        products: { accountsDetail: {} },
        timing: FAST,
        callback: { url: `https://localhost:${port}/internal` },
      });
      await handle.result();
      const retrying = await deliveryState(customerId, handle.firstExecutionRunId, (state) => state.status === 'Retrying', 'retrying');
      assert.match(retrying.lastError ?? '', /localhost resolves to 127\.0\.0\.1, an internal address/);
      assert.ok(retrying.nextAttemptAt);
      assert.equal(receivedFor(webhookIdOf(handle.firstExecutionRunId)).length, 0);
      await stack.client.workflow.getHandle(callbackWorkflowId(customerId, handle.firstExecutionRunId)).terminate('test done');
    } finally {
      settings.urls.set(customerId, [`${receiver.origin}/hooks`]);
    }
  });

  void it("posts a book refresh's counts when it ends, with no login's data", async () => {
    const books = new ConnectionsClient({ client: stack.client, taskQueue: stack.taskQueue }).books;
    const cadence = 'hooked';
    for (const username of ['pending_polls_1', 'pending_polls_2']) {
      const loginId = await createSandboxLogin(stack.sandboxUrl, customerId, username, 1);
      await books.enrol({ customerId, loginId, cadence, products: { accountsDetail: {} }, timing: FAST });
    }
    await waitFor(async () => (await books.count({ customerId, cadence })) === 2, { describe: 'two logins enrolled' });
    const { refreshWorkflowId } = await books.run({ customerId, cadence }, { callback: { url: `${receiver.origin}/hooks/books` } });
    const refresh = stack.client.workflow.getHandle(refreshWorkflowId);
    await refresh.result();
    const { runId } = await refresh.describe();
    await deliveryState(customerId, runId, (state) => state.status === 'Delivered', "the refresh's callback delivered");
    const event = verified(receivedFor(webhookIdOf(runId))[0] ?? assert.fail('the event'));
    assert.equal(event.type, 'book.refresh.completed');
    assert.equal(event.data.workflowId, refreshWorkflowId);
    assert.equal(event.data.counts?.done, 2);
    assert.equal(event.data.counts?.refreshed, 2);
    assert.equal(event.data.result, undefined);
    assert.equal(event.data.resultRef, undefined);
    await assert.rejects(books.run({ customerId, cadence }, { callback: { url: '' } }), /callback\.url: must not be empty/);
  });

  void it('counts every attempt by outcome', () => {
    assert.ok(attempts.includes('delivered'));
    assert.ok(attempts.includes('retrying'));
    assert.ok(attempts.includes('given_up'));
  });
});
