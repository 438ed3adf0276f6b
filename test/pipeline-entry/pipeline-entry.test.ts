/**
 * The pipeline entry end to end: its HTTP server (src/pipeline-entry/) over the pipeline client
 * on a real dev server, the real worker and the sandbox, as a pipeline without Temporal calls it with
 * its tenant's key: a start, another tenant named and refused, a callback URL outside the tenant's
 * list refused with nothing started, bad and oversized bodies, a key of no tenant, a rotation (two
 * hashes, then the old one removed), the state, a cancel, a second start while running; and a
 * completion callback's result claimed once with the event's token, then refused (410), and a wrong
 * token refused (401). Every start, claim and refusal is in the audit trail, the key never.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { ConnectionNotFoundError, ConnectionsClient } from '../../src/client/index.js';
import { createPipelineEntryServer, PIPELINE_MAX_BODY_BYTES, type PipelineEntryServer } from '../../src/pipeline-entry/app.js';
import { keyHashPrefix, mintPipelineKey, PipelineKeys } from '../../src/identity/pipeline-keys.js';
import type { AuditTrail } from '../../src/audit/audit-trail.js';
import type { AuditEntry } from '../../src/audit/audit-entry.js';
import type { CallbackEvent } from '../../src/contract/callbacks/callback-definitions.js';
import type { CallbackSettings } from '../../src/settings/callbacks.js';
import { SANDBOX_PASSWORD } from '../../sandbox/scenarios.js';
import { startConnectionStack, type ConnectionStack } from '../helpers/connection-stack.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';
import { createDevEnvironment, uniqueId, waitFor } from '../helpers/temporal.js';
import { tempAuditTrail } from '../helpers/audit.js';

const FAST = { pollIntervalMs: 50 };
/** Where the worker says results are fetched; the test sends the reference's path to its own entry. */
const ENTRY_URL = 'https://pipelines.example.test';

const tenantA = uniqueId('lender-a');
const tenantB = uniqueId('lender-b');
const keyA = mintPipelineKey();
const keyB = mintPipelineKey();

let env: TestWorkflowEnvironment;
let stack: ConnectionStack;
let receiver: WebhookReceiver;
let connections: ConnectionsClient;
let audit: AuditTrail;
let entry: PipelineEntryServer;
let baseUrl: string;
let dir: string;
let keyFileA: string;
const callbackUrls = new Map<string, string[]>();

before(async () => {
  env = await createDevEnvironment();
  receiver = await startWebhookReceiver();
  dir = mkdtempSync(join(tmpdir(), 'pipeline-entry-'));
  const secretFile = join(dir, `${tenantA}.secrets`);
  writeFileSync(secretFile, `whsec_${randomBytes(32).toString('base64')}\n`, { mode: 0o600 });
  callbackUrls.set(tenantA, [`${receiver.origin}/hooks`]);
  const callbacks: CallbackSettings = { urls: callbackUrls, secretFiles: new Map([[tenantA, secretFile]]), resultInBody: new Set(), entryUrl: ENTRY_URL };
  stack = await startConnectionStack(env, { customerId: tenantA, callbacks });
  connections = new ConnectionsClient({ client: stack.client, taskQueue: stack.taskQueue });
  keyFileA = join(dir, `${tenantA}.keys`);
  writeFileSync(keyFileA, `# ${tenantA}'s pipeline\n${keyA.hash}\n`);
  const keyFileB = join(dir, `${tenantB}.keys`);
  writeFileSync(keyFileB, `${keyB.hash}\n`);
  // Looked at on every request: the rotation below sees its edit at once.
  const keys = new PipelineKeys(
    new Map([
      [tenantA, keyFileA],
      [tenantB, keyFileB],
    ]),
    { recheckMs: 0 },
  );
  audit = tempAuditTrail();
  entry = createPipelineEntryServer({ connections, keys, callbackUrls, audit, log: () => undefined });
  baseUrl = (await entry.listen(0)).url;
});

after(async () => {
  await entry?.close();
  await stack?.stop();
  await receiver?.close();
  await env?.teardown();
  await audit?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

interface Answer {
  readonly status: number;
  readonly body: Record<string, unknown>;
  readonly authenticate: string | null;
}

async function call(
  method: 'GET' | 'POST',
  path: string,
  { key, body, raw, contentType = 'application/json' }: { key?: string; body?: unknown; raw?: string; contentType?: string } = {},
): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (key !== undefined) headers.authorization = `Bearer ${key}`;
  const text = raw ?? (body === undefined ? undefined : JSON.stringify(body));
  if (text !== undefined) headers['content-type'] = contentType;
  const response = await fetch(`${baseUrl}${path}`, { method, headers, body: text });
  const answer = (await response.json()) as Record<string, unknown>;
  return { status: response.status, body: answer, authenticate: response.headers.get('www-authenticate') };
}

/** A live connection to the sandbox's security-question scenario: it waits for an answer, so it keeps running. */
function awaitingInput() {
  return {
    session: { kind: 'live', institution: 'SandboxBank', username: 'security_question', password: SANDBOX_PASSWORD },
    products: { accountsDetail: { WithTransactions: true } },
    timing: FAST,
  };
}

async function neverStarted(workflowId: string): Promise<void> {
  await assert.rejects(connections.describe(workflowId), ConnectionNotFoundError, `${workflowId} was not started`);
}

async function entriesOf(tenant: string | undefined): Promise<AuditEntry[]> {
  return audit.query({ tenant, limit: 10_000 });
}

async function startAwaiting(key: string, applicationId: string): Promise<{ workflowId: string; runId: string }> {
  const started = await call('POST', '/v1/connections', { key, body: { applicationId, connection: awaitingInput() } });
  assert.equal(started.status, 202, JSON.stringify(started.body));
  return started.body as { workflowId: string; runId: string };
}

void describe('the pipeline entry', () => {
  void it("starts a connection of the key's tenant, recorded under pipeline:<tenant> with the key's hash prefix and never the key", async () => {
    const applicationId = uniqueId('app');
    const { workflowId, runId } = await startAwaiting(keyA.key, applicationId);
    assert.equal(workflowId, `connection-${tenantA}:${applicationId}`);
    assert.match(runId, /^[0-9a-f-]{36}$/);
    const state = await stack.waitForState(workflowId, (each) => each.status === 'AwaitingAnswer', 'the started connection awaiting an answer');
    assert.equal(state.customerId, tenantA);
    const started = (await entriesOf(tenantA)).find((each) => each.action === 'start' && each.target === workflowId);
    assert.ok(started, 'the start is in the audit trail');
    assert.equal(started.outcome, 'ok');
    assert.equal(started.actor.name, `pipeline:${tenantA}`);
    assert.equal(started.actor.subject, `pipeline:${tenantA}:key-sha256:${keyHashPrefix(keyA.hash)}`);
    assert.ok(!JSON.stringify(await entriesOf(undefined)).includes(keyA.key), 'the key itself is nowhere in the trail');
  });

  void it("refuses a body naming another tenant (403, naming it), and reads only the key's own tenant's connections", async () => {
    const applicationId = uniqueId('app');
    for (const body of [
      { applicationId, customerId: tenantB, connection: awaitingInput() },
      { applicationId, connection: { ...awaitingInput(), customerId: tenantB } },
    ]) {
      const refused = await call('POST', '/v1/connections', { key: keyA.key, body });
      assert.equal(refused.status, 403, JSON.stringify(refused.body));
      assert.equal(refused.body.error, 'Forbidden');
      assert.match(String(refused.body.message), new RegExp(`names customerId "${tenantB}", but this key is ${tenantA}'s`));
      assert.equal(refused.body.customerId, tenantB);
    }
    await neverStarted(`connection-${tenantB}:${applicationId}`);
    await neverStarted(`connection-${tenantA}:${applicationId}`);
    const recorded = (await entriesOf(tenantB)).filter((each) => each.action === 'start' && each.outcome === 'refused');
    assert.equal(recorded.length, 2, 'each refusal recorded under the tenant it named');
    assert.equal(recorded[0]?.actor.name, `pipeline:${tenantA}`);
    // B's connection is out of A's reach: A's key names A's application ids only.
    const ofB = await startAwaiting(keyB.key, applicationId);
    assert.equal(ofB.workflowId, `connection-${tenantB}:${applicationId}`);
    assert.equal((await call('GET', `/v1/connections/${applicationId}`, { key: keyA.key })).status, 404);
    assert.equal((await call('POST', `/v1/connections/${applicationId}/cancel`, { key: keyA.key })).status, 404);
    assert.equal((await connections.describe(ofB.workflowId)).executionStatus, 'RUNNING', "B's connection is untouched");
  });

  void it("refuses a callback URL outside the tenant's list at once, with nothing started", async () => {
    const cases = [
      ['https://attacker.example/hooks', /callback\.url is not allowed for tenant .*: it must begin with one of/],
      [`${receiver.origin}/other`, /is not allowed for tenant/],
      [`${receiver.origin.replace('127.0.0.1', 'user:pw@127.0.0.1')}/hooks`, /must not carry credentials/],
    ] as const;
    for (const [url, message] of cases) {
      const applicationId = uniqueId('app');
      const refused = await call('POST', '/v1/connections', { key: keyA.key, body: { applicationId, connection: awaitingInput(), callback: { url } } });
      assert.equal(refused.status, 400, url);
      assert.equal(refused.body.error, 'CallbackUrlRefused');
      assert.match(String(refused.body.message), message);
      await neverStarted(`connection-${tenantA}:${applicationId}`);
    }
    // The result itself in the body: tenant A has not opted in (CALLBACK_RESULT_IN_BODY).
    const inBody = uniqueId('app');
    const resultRefused = await call('POST', '/v1/connections', {
      key: keyA.key,
      body: { applicationId: inBody, connection: awaitingInput(), callback: { url: `${receiver.origin}/hooks/a`, includeResult: true } },
    });
    assert.equal(resultRefused.status, 400);
    assert.equal(resultRefused.body.error, 'CallbackResultRefused');
    await neverStarted(`connection-${tenantA}:${inBody}`);
    // Tenant B has no callback URLs at all.
    const applicationId = uniqueId('app');
    const refused = await call('POST', '/v1/connections', {
      key: keyB.key,
      body: { applicationId, connection: awaitingInput(), callback: { url: `${receiver.origin}/hooks/b` } },
    });
    assert.equal(refused.status, 400);
    assert.match(String(refused.body.message), new RegExp(`tenant ${tenantB} has no callback URLs`));
    await neverStarted(`connection-${tenantB}:${applicationId}`);
  });

  void it('refuses a bad body naming the field, a body that is not JSON, and one of another type', async () => {
    const missing = await call('POST', '/v1/connections', { key: keyA.key, body: { connection: awaitingInput() } });
    assert.equal(missing.status, 400);
    assert.equal(missing.body.error, 'InvalidRequest');
    assert.match(String(missing.body.message), /applicationId/);
    const badId = await call('POST', '/v1/connections', { key: keyA.key, body: { applicationId: 'has space', connection: awaitingInput() } });
    assert.equal(badId.status, 400);
    assert.match(String(badId.body.message), /applicationId: must start with a letter or digit/);
    const applicationId = uniqueId('app');
    const { products: _products, ...noProducts } = awaitingInput();
    const badInput = await call('POST', '/v1/connections', { key: keyA.key, body: { applicationId, connection: noProducts } });
    assert.equal(badInput.status, 400);
    assert.match(String(badInput.body.message), /^invalid connection input: .*products/, "in the pipeline client's words");
    const badSession = await call('POST', '/v1/connections', {
      key: keyA.key,
      body: { applicationId, connection: { ...awaitingInput(), session: { kind: 'live', institution: '', username: 'u', password: 'p' } } },
    });
    assert.equal(badSession.status, 400);
    assert.match(String(badSession.body.message), /session\.institution: must not be empty/);
    await neverStarted(`connection-${tenantA}:${applicationId}`);
    const notJson = await call('POST', '/v1/connections', { key: keyA.key, raw: '{"applicationId": ' });
    assert.equal(notJson.status, 400);
    assert.equal(notJson.body.error, 'InvalidJson');
    const form = await call('POST', '/v1/connections', { key: keyA.key, raw: 'applicationId=x', contentType: 'application/x-www-form-urlencoded' });
    assert.equal(form.status, 415);
    assert.equal(form.body.error, 'UnsupportedMediaType');
    const refusals = (await entriesOf(tenantA)).filter((each) => each.action === 'start' && each.outcome === 'refused').map((each) => each.outcomeDetail);
    for (const code of ['InvalidRequest', 'InvalidJson', 'UnsupportedMediaType']) assert.ok(refusals.includes(code), `${code} recorded`);
  });

  void it('refuses an oversized body (413) before reading it all', async () => {
    const applicationId = uniqueId('app');
    const big = await call('POST', '/v1/connections', {
      key: keyA.key,
      body: { applicationId, connection: { ...awaitingInput(), padding: 'x'.repeat(PIPELINE_MAX_BODY_BYTES) } },
    });
    assert.equal(big.status, 413);
    assert.equal(big.body.error, 'PayloadTooLarge');
    await neverStarted(`connection-${tenantA}:${applicationId}`);
  });

  void it('refuses a key of no tenant and a request without one (401), recording the unknown key by its hash prefix', async () => {
    const stranger = mintPipelineKey();
    for (const key of [stranger.key, undefined, keyA.hash]) {
      const refused = await call('POST', '/v1/connections', { key, body: { applicationId: uniqueId('app'), connection: awaitingInput() } });
      assert.equal(refused.status, 401);
      assert.equal(refused.body.error, 'Unauthorized');
      assert.equal(refused.authenticate, 'Bearer realm="pipeline-entry"');
      assert.equal((await call('GET', '/v1/connections/anything', { key })).status, 401);
    }
    const all = await entriesOf(undefined);
    const unknown = all.filter((each) => each.outcomeDetail === 'UnknownKey');
    assert.ok(
      unknown.some((each) => each.actor.subject === `pipeline:?:key-sha256:${keyHashPrefix(stranger.hash)}`),
      "the stranger's key recorded by its hash prefix",
    );
    assert.ok(unknown.some((each) => each.actor.subject === 'pipeline:?:no-key'));
    assert.ok(!JSON.stringify(all).includes(stranger.key), 'never the key itself');
  });

  void it('takes both keys of a rotation, then refuses the old one once its hash is removed from the file', async () => {
    const next = mintPipelineKey();
    writeFileSync(keyFileA, `${keyA.hash}\n${next.hash}\n`);
    await startAwaiting(keyA.key, uniqueId('app'));
    await startAwaiting(next.key, uniqueId('app'));
    writeFileSync(keyFileA, `# rotated\n${next.hash}\n`);
    const old = await call('POST', '/v1/connections', { key: keyA.key, body: { applicationId: uniqueId('app'), connection: awaitingInput() } });
    assert.equal(old.status, 401, 'the old key is revoked by the edit, without a restart');
    await startAwaiting(next.key, uniqueId('app'));
    // Back to the key the other tests use (with the new one still valid).
    writeFileSync(keyFileA, `${keyA.hash}\n${next.hash}\n`);
    assert.equal((await call('GET', '/v1/connections/none-such', { key: keyA.key })).status, 404);
  });

  void it("reads the state of the key's tenant's connection, 404 for an application with none", async () => {
    const applicationId = uniqueId('app');
    const { workflowId } = await startAwaiting(keyA.key, applicationId);
    const state = await waitFor(
      async () => {
        const read = await call('GET', `/v1/connections/${applicationId}`, { key: keyA.key });
        return read.status === 200 && (read.body.state as { status?: string }).status === 'AwaitingAnswer' ? read : undefined;
      },
      { timeoutMs: 30_000, describe: 'the state awaiting an answer' },
    );
    assert.equal(state.body.workflowId, workflowId);
    assert.equal((state.body.state as { customerId?: string }).customerId, tenantA);
    const none = await call('GET', `/v1/connections/${uniqueId('app')}`, { key: keyA.key });
    assert.equal(none.status, 404);
    assert.equal(none.body.error, 'ConnectionNotFound');
  });

  void it('shows a challenge of a type the spec does not name in the state as it came; its free-text answer by prompt completes it', async () => {
    const applicationId = uniqueId('app');
    const connection = { ...awaitingInput(), session: { ...awaitingInput().session, username: 'unknown_challenge' } };
    const started = await call('POST', '/v1/connections', { key: keyA.key, body: { applicationId, connection } });
    assert.equal(started.status, 202, JSON.stringify(started.body));
    const { workflowId } = started.body as { workflowId: string };
    const read = await waitFor(
      async () => {
        const answer = await call('GET', `/v1/connections/${applicationId}`, { key: keyA.key });
        return answer.status === 200 && (answer.body.state as { status?: string }).status === 'AwaitingAnswer' ? answer : undefined;
      },
      { timeoutMs: 30_000, describe: 'the state awaiting an answer' },
    );
    const set = (read.body.state as { challengeSet?: { id: string; challenges: unknown[] } }).challengeSet;
    const prompt = 'Enter the code we sent by SMS to ***-***-1234';
    assert.deepEqual(set?.challenges, [{ Type: 'SmsCode', Prompt: prompt }]);
    // Answered as the pipeline answers any challenge: by its exact prompt, here with one free-text value.
    const outcome = await connections.answer(workflowId, { challengeSetId: set?.id, responses: { [prompt]: ['246810'] } });
    assert.equal(outcome.outcome, 'accepted');
    await stack.waitForState(workflowId, (each) => each.status === 'Completed', 'the connection completed');
  });

  void it('cancels a running connection (202), then 409 as it has ended, and 404 for none', async () => {
    const applicationId = uniqueId('app');
    const { workflowId, runId } = await startAwaiting(keyA.key, applicationId);
    await stack.waitForState(workflowId, (each) => each.status === 'AwaitingAnswer', 'awaiting an answer');
    const cancelled = await call('POST', `/v1/connections/${applicationId}/cancel`, { key: keyA.key });
    assert.equal(cancelled.status, 202, JSON.stringify(cancelled.body));
    assert.deepEqual(cancelled.body, { workflowId, runId, cancelRequested: true });
    await stack.waitForState(workflowId, (each) => each.status === 'Cancelled', 'the connection cancelled');
    await waitFor(async () => (await connections.describe(workflowId)).executionStatus !== 'RUNNING', { timeoutMs: 30_000, describe: 'the run closed' });
    const again = await call('POST', `/v1/connections/${applicationId}/cancel`, { key: keyA.key });
    assert.equal(again.status, 409);
    assert.equal(again.body.error, 'ConnectionEnded');
    assert.equal((await call('POST', `/v1/connections/${uniqueId('app')}/cancel`, { key: keyA.key })).status, 404);
    const recorded = (await entriesOf(tenantA)).filter((each) => each.action === 'cancel' && each.target === workflowId).map((each) => each.outcome);
    assert.deepEqual(recorded, ['ok', 'refused']);
  });

  void it('refuses a second start of a running application (409), naming the running connection', async () => {
    const applicationId = uniqueId('app');
    const first = await startAwaiting(keyA.key, applicationId);
    const second = await call('POST', '/v1/connections', { key: keyA.key, body: { applicationId, connection: awaitingInput() } });
    assert.equal(second.status, 409);
    assert.equal(second.body.error, 'ConnectionRunning');
    assert.equal(second.body.workflowId, first.workflowId);
    assert.equal(second.body.runId, first.runId);
    assert.match(String(second.body.message), new RegExp(`${first.workflowId} \\(run ${first.runId}\\)`));
  });

  void it("hands a callback's result out once for its token: 200, then 410; a wrong token 401; an unknown reference 404", async () => {
    const loginId = await stack.savedLogin('no_mfa');
    const applicationId = uniqueId('app');
    const started = await call('POST', '/v1/connections', {
      key: keyA.key,
      body: {
        applicationId,
        connection: { session: { kind: 'cached', loginId }, products: { accountsDetail: {} }, timing: FAST },
        callback: { url: `${receiver.origin}/hooks/loans` },
      },
    });
    assert.equal(started.status, 202, JSON.stringify(started.body));
    const { workflowId, runId } = started.body as { workflowId: string; runId: string };
    const message = await waitFor(() => receiver.received.find((each) => each.headers['webhook-id'] === `msg_${runId}`), {
      timeoutMs: 60_000,
      describe: 'the callback received',
    });
    const event = JSON.parse(message.body) as CallbackEvent;
    assert.equal(event.type, 'connection.completed');
    const reference = event.data.resultRef;
    assert.ok(reference, 'the result is sent by reference');
    assert.ok(reference.url.startsWith(`${ENTRY_URL}/v1/results/${tenantA}/msg_${runId}`), reference.url);
    const path = new URL(reference.url).pathname;

    const wrong = await call('GET', path, { key: `${reference.token}x` });
    assert.equal(wrong.status, 401, JSON.stringify(wrong.body));
    assert.equal(wrong.body.error, 'WrongToken');
    const noToken = await call('GET', path);
    assert.equal(noToken.status, 401);
    // A pipeline key is not the token: the reference's token is the only credential.
    assert.equal((await call('GET', path, { key: keyA.key })).status, 401);

    const claimed = await call('GET', path, { key: reference.token });
    assert.equal(claimed.status, 200, JSON.stringify(claimed.body));
    assert.equal(claimed.body.workflowId, workflowId);
    assert.equal(claimed.body.runId, runId);
    assert.ok((claimed.body.result as { accountsDetail?: unknown }).accountsDetail, 'the result as the connection returned it');

    const again = await call('GET', path, { key: reference.token });
    assert.equal(again.status, 410);
    assert.equal(again.body.error, 'ResultClaimed');

    const unknown = await call('GET', `/v1/results/${tenantA}/msg_${'0'.repeat(8)}-0000-4000-8000-${'0'.repeat(12)}`, { key: reference.token });
    assert.equal(unknown.status, 404);
    assert.equal((await call('GET', `/v1/results/${tenantA}/not-a-webhook-id`, { key: reference.token })).status, 404);
    // Another tenant's address with this event's token: no delivery of B has this run.
    assert.equal((await call('GET', `/v1/results/${tenantB}/msg_${runId}`, { key: reference.token })).status, 404);

    const claims = (await entriesOf(tenantA))
      .filter((each) => each.action === 'result.claim' && each.target === `msg_${runId}`)
      .map((each) => [each.outcome, each.outcomeDetail]);
    assert.deepEqual(claims, [
      ['refused', 'WrongToken'],
      ['refused', 'Unauthorized'],
      ['refused', 'WrongToken'],
      ['ok', `${workflowId} run ${runId}`],
      ['refused', 'ResultClaimed'],
    ]);
    assert.ok(!JSON.stringify(await entriesOf(undefined)).includes(reference.token), 'the token is nowhere in the trail');
  });
});
