/**
 * The `connections` Nexus service end to end on the real dev server: a lender's caller workflow in its
 * own namespace, with its own data converter and key, reaches the product's connections through a
 * Nexus endpoint (created by scripts/lib/nexus-endpoints.ts), served by the Nexus worker
 * (src/nexus/nexus-worker.ts) beside a product worker (the connection stack, the product's key).
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { Client } from '@temporalio/client';
import type { Payload } from '@temporalio/common';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { EncryptionCodec, KEY_ID_METADATA_KEY, isEncrypted, type EncryptionKeys } from '../../src/codec/encryption-codec.js';
import { metadataText } from '../../src/codec/payload-format.js';
import { SANDBOX_PASSWORD, SCENARIOS, describeScenario } from '../../src/sandbox/scenarios.js';
import { connectionStateQuery } from '../../src/contract/connection-definitions.js';
import { createConfiguredNexusWorkers } from '../../src/nexus/configured-workers.js';
import { relayWorkflowId } from '../../src/nexus/relay-ids.js';
import { ensureNexusEndpoint, prepareNexusCaller } from '../../scripts/lib/nexus-endpoints.js';
import { payloadsIn, passesThroughCodec } from '../helpers/history-payloads.js';
import { startConnectionStack, TEST_ENCRYPTION, type ConnectionStack } from '../helpers/connection-stack.js';
import { createDevEnvironment, uniqueId, waitFor } from '../helpers/temporal.js';
import type { callerCancels, callerConnects, callerExpectsError, CallerError } from './fixtures/caller-workflows.js';

const scenario = SCENARIOS.find((entry) => entry.username === 'security_question') ?? assert.fail('scenario');
const round = describeScenario(scenario).challengeSequence[0] ?? assert.fail('a challenge round');

/** The lender's own key: the product's history must hold nothing it opens, and the reverse. */
const CALLER_KEY: EncryptionKeys = Object.freeze({ keyId: 'lender-own-key', key: randomBytes(32), decryptionKeys: new Map() });
const callerCodec = new EncryptionCodec(CALLER_KEY);
const productCodec = new EncryptionCodec(TEST_ENCRYPTION);

let env: TestWorkflowEnvironment;
let stack: ConnectionStack;
let nexusWorker: Worker;
let nexusRunning: Promise<void>;
let callerWorker: Worker;
let callerRunning: Promise<void>;
let caller: Client;
const tenant = uniqueId('lender');
const callerNamespace = uniqueId('lender-ns');
const endpoint = uniqueId('connections-nexus');
const unmappedEndpoint = uniqueId('unmapped-nexus');
const callerTaskQueue = uniqueId('lender-pipeline');

before(async () => {
  env = await createDevEnvironment();
  const productNamespace = env.namespace ?? 'default';
  stack = await startConnectionStack(env, { customerId: tenant });
  // As the product's worker builds it from NEXUS_ENDPOINT_TENANTS and NEXUS_ENDPOINT_KEY_FILES (src/worker.ts).
  const keyFile = join(mkdtempSync(join(tmpdir(), 'nexus-boundary-')), 'lender.key');
  writeFileSync(keyFile, `${CALLER_KEY.keyId}:${Buffer.from(CALLER_KEY.key).toString('base64')}\n`, { mode: 0o600 });
  const [served] = await createConfiguredNexusWorkers({
    connection: env.nativeConnection,
    namespace: productNamespace,
    taskQueue: stack.taskQueue,
    nexus: { endpointTenants: new Map([[endpoint, tenant]]), keyFiles: new Map([[endpoint, keyFile]]) },
    productCodec,
    productClient: stack.client,
  });
  assert.ok(served);
  nexusWorker = served.worker;
  const nexusTaskQueue = served.taskQueue;
  nexusRunning = nexusWorker.run();
  await prepareNexusCaller(env.connection, { callerNamespace, name: endpoint, targetNamespace: productNamespace, targetTaskQueue: nexusTaskQueue });
  // An endpoint into the same worker that NEXUS_ENDPOINT_TENANTS does not map.
  await ensureNexusEndpoint(env.connection, { name: unmappedEndpoint, targetNamespace: productNamespace, targetTaskQueue: nexusTaskQueue });
  callerWorker = await Worker.create({
    connection: env.nativeConnection,
    namespace: callerNamespace,
    taskQueue: callerTaskQueue,
    workflowsPath: fileURLToPath(new URL('./fixtures/caller-workflows.ts', import.meta.url)),
    dataConverter: { payloadCodecs: [callerCodec] },
  });
  callerRunning = callerWorker.run();
  caller = new Client({ connection: env.connection, namespace: callerNamespace, dataConverter: { payloadCodecs: [callerCodec] } });
});

after(async () => {
  callerWorker?.shutdown();
  nexusWorker?.shutdown();
  await Promise.allSettled([callerRunning, nexusRunning]);
  await stack?.stop();
  await env?.teardown();
});

function liveStart(applicationId: string) {
  return {
    applicationId,
    connection: {
      session: { kind: 'live' as const, institution: scenario.institution, username: scenario.username, password: SANDBOX_PASSWORD, save: true },
      products: { accountsDetail: {} },
      timing: { pollIntervalMs: 100, pollTimeoutMs: 20_000, answerTimeoutMs: 60_000 },
    },
  };
}

async function rawPayloads(namespace: string, workflowId: string): Promise<{ path: string; payload: Payload }[]> {
  const { history } = await env.connection.workflowService.getWorkflowExecutionHistory({ namespace, execution: { workflowId } });
  const events = history?.events ?? [];
  return events.flatMap((event, index) => payloadsIn(event, `event ${index + 1} (${String(event.eventType)})`)).filter(passesThroughCodec);
}

async function opens(codec: EncryptionCodec, payload: Payload): Promise<boolean> {
  try {
    await codec.decode([payload]);
    return true;
  } catch {
    return false;
  }
}

function expectError(outcome: CallerError, type: string, message: RegExp): void {
  assert.equal(outcome.error, 'handler', `a handler error, not ${outcome.message}`);
  assert.equal(outcome.error === 'handler' ? outcome.type : '', type, outcome.message);
  assert.match(outcome.message, message);
}

describe('the connections Nexus service, called from a TypeScript workflow in the lender\'s namespace', () => {
  it('starts a live connection, answers its challenge through the service and receives the typed result', { timeout: 120_000 }, async () => {
    const applicationId = uniqueId('app');
    const outcome = await caller.workflow.execute<typeof callerConnects>('callerConnects', {
      taskQueue: callerTaskQueue,
      workflowId: uniqueId('pipeline'),
      args: [{ endpoint, start: liveStart(applicationId), answers: round.answer }],
      workflowExecutionTimeout: '2 minutes',
    });
    assert.equal(outcome.awaiting.status, 'AwaitingAnswer');
    assert.equal(outcome.awaiting.customerId, tenant);
    expectError(outcome.stale, 'BAD_REQUEST', /^answer refused: /);
    assert.equal(outcome.answer.outcome, 'accepted');
    assert.equal(outcome.result.customerId, tenant);
    assert.ok(outcome.result.accountsDetail, 'the accounts the connection retrieved');
    // The connection is the product's, under the endpoint's tenant's business key.
    const state = await stack.client.workflow.getHandle(`connection-${tenant}:${applicationId}`).query(connectionStateQuery);
    assert.equal(state.status, 'Completed');
  });

  it('cancels the connection when the caller cancels the operation', { timeout: 120_000 }, async () => {
    const applicationId = uniqueId('app');
    const seen = await caller.workflow.execute<typeof callerCancels>('callerCancels', {
      taskQueue: callerTaskQueue,
      workflowId: uniqueId('pipeline'),
      args: [{ endpoint, start: liveStart(applicationId) }],
      workflowExecutionTimeout: '2 minutes',
    });
    assert.match(seen, /^cancelled/);
    const connection = stack.client.workflow.getHandle(`connection-${tenant}:${applicationId}`);
    await waitFor(async () => (await connection.describe()).status.name === 'CANCELLED', { timeoutMs: 30_000, describe: 'the connection cancelled' });
    assert.equal((await connection.query(connectionStateQuery)).status, 'Cancelled');
  });

  it('refuses a bad input with BAD_REQUEST naming the field', { timeout: 60_000 }, async () => {
    const bad = liveStart(uniqueId('app'));
    const outcome = await caller.workflow.execute<typeof callerExpectsError>('callerExpectsError', {
      taskQueue: callerTaskQueue,
      workflowId: uniqueId('pipeline'),
      args: [endpoint, 'start', { ...bad, connection: { ...bad.connection, session: { ...bad.connection.session, username: '' } } }],
    });
    expectError(outcome, 'BAD_REQUEST', /connection\.session\.username: must not be empty/);
    const noId = await caller.workflow.execute<typeof callerExpectsError>('callerExpectsError', {
      taskQueue: callerTaskQueue,
      workflowId: uniqueId('pipeline'),
      args: [endpoint, 'state', { applicationId: 'has a space' }],
    });
    expectError(noId, 'BAD_REQUEST', /applicationId: must start with a letter or digit/);
  });

  it('refuses a tenant the endpoint does not map, and an endpoint mapped to no tenant, with UNAUTHORIZED', { timeout: 60_000 }, async () => {
    const otherTenant = await caller.workflow.execute<typeof callerExpectsError>('callerExpectsError', {
      taskQueue: callerTaskQueue,
      workflowId: uniqueId('pipeline'),
      args: [endpoint, 'start', { ...liveStart(uniqueId('app')), connection: { ...liveStart('x').connection, customerId: 'another-lender' } }],
    });
    expectError(otherTenant, 'UNAUTHORIZED', /not "another-lender"/);
    const otherState = await caller.workflow.execute<typeof callerExpectsError>('callerExpectsError', {
      taskQueue: callerTaskQueue,
      workflowId: uniqueId('pipeline'),
      args: [endpoint, 'state', { applicationId: 'app-1', customerId: 'another-lender' }],
    });
    expectError(otherState, 'UNAUTHORIZED', /not "another-lender"/);
    const otherAnswer = await caller.workflow.execute<typeof callerExpectsError>('callerExpectsError', {
      taskQueue: callerTaskQueue,
      workflowId: uniqueId('pipeline'),
      args: [endpoint, 'answer', { applicationId: 'app-1', customerId: 'another-lender', answer: { challengeSetId: '1', responses: { q: ['a'] } } }],
    });
    expectError(otherAnswer, 'UNAUTHORIZED', /not "another-lender"/);
    const unmapped = await caller.workflow.execute<typeof callerExpectsError>('callerExpectsError', {
      taskQueue: callerTaskQueue,
      workflowId: uniqueId('pipeline'),
      args: [unmappedEndpoint, 'state', { applicationId: 'app-1' }],
    });
    expectError(unmapped, 'UNAUTHORIZED', /is mapped to no tenant/);
  });

  it('keeps each side\'s payloads under its own key: the connection\'s history holds nothing the caller\'s key opens, the caller\'s nothing the product\'s key opens', { timeout: 120_000 }, async () => {
    const applicationId = uniqueId('app');
    const pipelineId = uniqueId('pipeline');
    await caller.workflow.execute<typeof callerConnects>('callerConnects', {
      taskQueue: callerTaskQueue,
      workflowId: pipelineId,
      args: [{ endpoint, start: liveStart(applicationId), answers: round.answer }],
      workflowExecutionTimeout: '2 minutes',
    });
    const product = await rawPayloads(env.namespace ?? 'default', `connection-${tenant}:${applicationId}`);
    const lender = await rawPayloads(callerNamespace, pipelineId);
    assert.ok(product.length > 5 && lender.length > 5, `payloads found: ${product.length} in the connection's history, ${lender.length} in the caller's`);
    for (const { path, payload } of product) {
      assert.ok(isEncrypted(payload), `${path}: sealed`);
      assert.equal(metadataText(payload.metadata, KEY_ID_METADATA_KEY), TEST_ENCRYPTION.keyId, `${path}: under the product's key`);
      assert.equal(await opens(callerCodec, payload), false, `${path}: the caller's key opens it`);
      assert.equal(await opens(productCodec, payload), true, `${path}: the product's key opens it`);
    }
    for (const { path, payload } of lender) {
      assert.ok(isEncrypted(payload), `${path}: sealed`);
      assert.equal(metadataText(payload.metadata, KEY_ID_METADATA_KEY), CALLER_KEY.keyId, `${path}: under the caller's key`);
      assert.equal(await opens(productCodec, payload), false, `${path}: the product's key opens it`);
      assert.equal(await opens(callerCodec, payload), true, `${path}: the caller's key opens it`);
    }
    // The relay between them (product namespace, the Nexus worker's queue): what crosses is the
    // caller's (its input and result), what it hands the connection and gets back is the product's.
    const relay = await rawPayloads(env.namespace ?? 'default', relayWorkflowId(tenant, applicationId));
    const keyIds = new Set(relay.map(({ payload }) => metadataText(payload.metadata, KEY_ID_METADATA_KEY)));
    assert.deepEqual([...keyIds].sort(), [CALLER_KEY.keyId, TEST_ENCRYPTION.keyId].sort());
  });
});
