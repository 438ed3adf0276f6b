/**
 * The `connections` Nexus service end to end on the real dev server: a lender's caller workflow in its
 * own namespace, with its own data converter and key, reaches the product's connections and its book
 * through a Nexus endpoint (created by scripts/lib/nexus-endpoints.ts), served by the Nexus worker
 * (src/nexus/nexus-worker.ts) beside a product worker (the connection stack, the product's key).
 * Last, every relay history this file made is replayed against the relay's code with the Nexus
 * worker's data converter (npm test's closing replay covers the product's workflow types only).
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { Client, WorkflowNotFoundError } from '@temporalio/client';
import type { Payload } from '@temporalio/common';
import proto from '@temporalio/proto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { DeterminismViolationError } from '@temporalio/workflow';
import { createSandboxLogin } from '../../bench/sandbox-fixtures.js';
import { ConnectionsClient } from '../../src/client/index.js';
import { WORKFLOW_SANDBOX_OPTIONS } from '../../src/bundle/workflow-code.js';
import { EncryptionCodec, KEY_ID_METADATA_KEY, isEncrypted, type EncryptionKeys } from '../../src/codec/encryption-codec.js';
import { metadataText } from '../../src/codec/payload-format.js';
import { SANDBOX_PASSWORD, SCENARIOS, describeScenario } from '../../sandbox/scenarios.js';
import { CONNECTION_WORKFLOW_TYPE, connectionStateQuery } from '../../src/contract/connection/connection-definitions.js';
import { ConnectionInput } from '../../src/contract/connection/connection-input.js';
import type { RelayInput } from '../../src/nexus/relay-workflow.js';
import { createConfiguredNexusWorkers } from '../../src/nexus/configured-workers.js';
import { bookRelayWorkflowId, NEXUS_RELAY_WORKFLOW_TYPE, NEXUS_RELAY_WORKFLOW_TYPES, relayWorkflowId } from '../../src/nexus/relay-ids.js';
import { nexusWorkerDataConverter, RELAY_WORKFLOWS_PATH } from '../../src/nexus/nexus-worker.js';
import { ensureNexusEndpoint, prepareNexusCaller } from '../../scripts/lib/nexus-endpoints.js';
import { payloadsIn, passesThroughCodec } from '../helpers/history-payloads.js';
import { startConnectionStack, TEST_ENCRYPTION, type ConnectionStack } from '../helpers/connection-stack.js';
import { createDevEnvironment, uniqueId, waitFor } from '../helpers/temporal.js';
import type {
  callerCancels,
  callerCancelsAtOnce,
  callerConnects,
  callerExpectsError,
  CallerError,
  callerRefreshesBook,
  callerStartsTwice,
} from './fixtures/caller-workflows.js';

type History = proto.temporal.api.history.v1.IHistory;
const { History: HistoryMessage } = proto.temporal.api.history.v1;
const { EventType } = proto.temporal.api.enums.v1;

const scenario = SCENARIOS.find((entry) => entry.username === 'security_question') ?? assert.fail('scenario');
const round = describeScenario(scenario).challengeSequence[0] ?? assert.fail('a challenge round');
/** A challenge type the spec does not name (SmsCode), answered by its prompt with free text. */
const unknownScenario = SCENARIOS.find((entry) => entry.username === 'unknown_challenge') ?? assert.fail('the unknown_challenge scenario');
const unknownRound = describeScenario(unknownScenario).challengeSequence[0] ?? assert.fail('a challenge round');

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
let books: ConnectionsClient['books'];
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
  books = new ConnectionsClient({ client: stack.client, taskQueue: stack.taskQueue }).books;
});

after(async () => {
  callerWorker?.shutdown();
  nexusWorker?.shutdown();
  await Promise.allSettled([callerRunning, nexusRunning]);
  await stack?.stop();
  await env?.teardown();
});

function liveStart(applicationId: string, of: typeof scenario = scenario) {
  return {
    applicationId,
    connection: {
      session: { kind: 'live' as const, institution: of.institution, username: of.username, password: SANDBOX_PASSWORD, save: true },
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

/** Enrols `count` fresh saved logins of the tenant in `cadence`'s book (the sandbox's `pending_polls_<n>` scenarios), as test/books does. */
let loginsMade = 0;
async function seedBook(
  cadence: string,
  count: number,
  { pendingPolls = 1, pollIntervalMs = 50 }: { pendingPolls?: number; pollIntervalMs?: number } = {},
): Promise<string[]> {
  const logins: string[] = [];
  for (let index = 0; index < count; index += 1) {
    loginsMade += 1;
    const loginId = await createSandboxLogin(stack.sandboxUrl, tenant, `pending_polls_${loginsMade}`, pendingPolls);
    await books.enrol({ customerId: tenant, loginId, cadence, products: { accountsDetail: {} }, timing: { pollIntervalMs } });
    logins.push(loginId);
  }
  await waitFor(async () => (await books.count({ customerId: tenant, cadence })) === count, { describe: `${count} logins enrolled in ${cadence}` });
  return logins;
}

/** Whether a workflow of the product's namespace is still running (false once closed or never started). */
async function running(workflowId: string): Promise<boolean> {
  try {
    return (await stack.client.workflow.getHandle(workflowId).describe()).status.name === 'RUNNING';
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return false;
    throw error;
  }
}

function expectError(outcome: CallerError, type: string, message: RegExp): void {
  assert.equal(outcome.error, 'handler', `a handler error, not ${outcome.message}`);
  assert.equal(outcome.error === 'handler' ? outcome.type : '', type, outcome.message);
  assert.match(outcome.message, message);
}

describe("the connections Nexus service, called from a TypeScript workflow in the lender's namespace", () => {
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

  it('relays a challenge of a type the spec does not name as it came, and its free-text answer by prompt', { timeout: 120_000 }, async () => {
    const applicationId = uniqueId('app');
    const outcome = await caller.workflow.execute<typeof callerConnects>('callerConnects', {
      taskQueue: callerTaskQueue,
      workflowId: uniqueId('pipeline'),
      args: [{ endpoint, start: liveStart(applicationId, unknownScenario), answers: unknownRound.answer }],
      workflowExecutionTimeout: '2 minutes',
    });
    assert.equal(outcome.awaiting.status, 'AwaitingAnswer');
    assert.deepEqual(outcome.awaiting.challengeSet?.challenges, unknownRound.challenges, 'the state carries its type and prompt unchanged');
    assert.equal(outcome.awaiting.challengeSet?.challenges[0]?.Type, 'SmsCode');
    assert.equal(outcome.answer.outcome, 'accepted');
    assert.ok(outcome.result.accountsDetail, 'the accounts the connection retrieved');
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
    const badBooks: [unknown, RegExp][] = [
      [{ cadence: 'Night Time' }, /^invalid input to refreshBook: cadence: must be lower-case/],
      [{ pageSize: 0 }, /^invalid input to refreshBook: pageSize: must be a whole number from 1 to 1000/],
      [{ window: { floor: 9, ceiling: 3 } }, /^invalid input to refreshBook: window: floor must be at most ceiling/],
    ];
    for (const [input, message] of badBooks) {
      const outcome = await caller.workflow.execute<typeof callerExpectsError>('callerExpectsError', {
        taskQueue: callerTaskQueue,
        workflowId: uniqueId('pipeline'),
        args: [endpoint, 'refreshBook', input],
      });
      expectError(outcome, 'BAD_REQUEST', message);
    }
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
    const otherBook = await caller.workflow.execute<typeof callerExpectsError>('callerExpectsError', {
      taskQueue: callerTaskQueue,
      workflowId: uniqueId('pipeline'),
      args: [endpoint, 'refreshBook', { cadence: 'nightly', customerId: 'another-lender' }],
    });
    expectError(otherBook, 'UNAUTHORIZED', new RegExp(`^tenant refused: endpoint "${endpoint}" acts for its own tenant only, not "another-lender"$`));
    const unmappedBook = await caller.workflow.execute<typeof callerExpectsError>('callerExpectsError', {
      taskQueue: callerTaskQueue,
      workflowId: uniqueId('pipeline'),
      args: [unmappedEndpoint, 'refreshBook', {}],
    });
    expectError(unmappedBook, 'UNAUTHORIZED', /is mapped to no tenant/);
    // Nothing of another tenant's was started: no refresh listed, and (read strongly, not through
    // visibility, which may lag) no relay under the id a wrongly accepted refreshBook would have used.
    assert.equal((await books.refreshes({ customerId: 'another-lender' })).length, 0);
    await assert.rejects(stack.client.workflow.getHandle(bookRelayWorkflowId('another-lender', 'nightly')).describe(), WorkflowNotFoundError);
    const unmapped = await caller.workflow.execute<typeof callerExpectsError>('callerExpectsError', {
      taskQueue: callerTaskQueue,
      workflowId: uniqueId('pipeline'),
      args: [unmappedEndpoint, 'state', { applicationId: 'app-1' }],
    });
    expectError(unmapped, 'UNAUTHORIZED', /is mapped to no tenant/);
  });

  it(
    'refuses a second start of a running connection with CONFLICT naming it, whether a start operation or the pipeline client started it',
    { timeout: 120_000 },
    async () => {
      const applicationId = uniqueId('app');
      const connectionId = `connection-${tenant}:${applicationId}`;
      const twice = await caller.workflow.execute<typeof callerStartsTwice>('callerStartsTwice', {
        taskQueue: callerTaskQueue,
        workflowId: uniqueId('pipeline'),
        args: [{ endpoint, start: liveStart(applicationId) }],
        workflowExecutionTimeout: '2 minutes',
      });
      expectError(twice.second, 'CONFLICT', new RegExp(`^connection already running: ${connectionId} \\(started by another start operation\\)`));
      assert.match(twice.first, /^cancelled/, 'the first operation went on and was cancelled as asked');
      await waitFor(async () => (await stack.client.workflow.getHandle(connectionId).describe()).status.name === 'CANCELLED', {
        timeoutMs: 30_000,
        describe: 'the one connection cancelled',
      });

      // Started outside the service (the pipeline client): refused before any relay starts.
      const outsideId = uniqueId('app');
      const outside = await stack.start(liveStart(outsideId).connection, `connection-${tenant}:${outsideId}`);
      try {
        const refused = await caller.workflow.execute<typeof callerExpectsError>('callerExpectsError', {
          taskQueue: callerTaskQueue,
          workflowId: uniqueId('pipeline'),
          args: [endpoint, 'start', liveStart(outsideId)],
        });
        expectError(refused, 'CONFLICT', new RegExp(`^connection already running: connection-${tenant}:${outsideId} \\(started outside this service\\)`));
        assert.equal(await running(relayWorkflowId(tenant, outsideId)), false, 'no relay started');
      } finally {
        await outside.cancel();
      }
    },
  );

  it(
    'cancelled right after start returned: the relay ends and no connection is left running, whether or not it had started one',
    { timeout: 120_000 },
    async (t) => {
      const applicationId = uniqueId('app');
      const seen = await caller.workflow.execute<typeof callerCancelsAtOnce>('callerCancelsAtOnce', {
        taskQueue: callerTaskQueue,
        workflowId: uniqueId('pipeline'),
        args: [{ endpoint, start: liveStart(applicationId) }],
        workflowExecutionTimeout: '2 minutes',
      });
      assert.match(seen, /^cancelled/);
      const relay = stack.client.workflow.getHandle(relayWorkflowId(tenant, applicationId));
      await waitFor(async () => (await relay.describe()).status.name !== 'RUNNING', { timeoutMs: 30_000, describe: 'the relay ended' });
      assert.equal((await relay.describe()).status.name, 'CANCELLED');
      const connectionId = `connection-${tenant}:${applicationId}`;
      // Either it never started, or it started and was cancelled with its relay: never left running.
      await waitFor(async () => !(await running(connectionId)), { timeoutMs: 30_000, describe: 'no connection running' });
      let status: string;
      try {
        status = (await stack.client.workflow.getHandle(connectionId).describe()).status.name;
      } catch (error) {
        if (!(error instanceof WorkflowNotFoundError)) throw error;
        status = 'never started';
      }
      // Which it was is the relay's history's to say: a child start initiated, or none.
      const { history } = await env.connection.workflowService.getWorkflowExecutionHistory({
        namespace: env.namespace ?? 'default',
        execution: { workflowId: relayWorkflowId(tenant, applicationId) },
      });
      const initiated = (history?.events ?? []).some((event) => event.eventType === EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED);
      assert.equal(
        status,
        initiated ? 'CANCELLED' : 'never started',
        `the connection: ${status}; the relay ${initiated ? 'initiated' : 'never initiated'} its start`,
      );
      t.diagnostic(
        `the relay ${initiated ? "had initiated the connection's start: it was cancelled with it" : 'was cancelled before it started the connection: none exists'}`,
      );
    },
  );

  it('cancelled before its relay ran at all: the relay ends CANCELLED and never starts the connection', { timeout: 120_000 }, async () => {
    // What a cancel that beats the relay's first workflow task does (the race above, pinned): the
    // relay on a queue no worker polls yet, its cancel requested, then the relay code run as the
    // Nexus worker runs it. Its first task holds both the start and the cancel.
    const applicationId = uniqueId('app');
    const relayId = relayWorkflowId(tenant, applicationId);
    const taskQueue = uniqueId('relay-unpolled');
    const dataConverter = nexusWorkerDataConverter({ codec: callerCodec, keyIds: [CALLER_KEY.keyId] }, productCodec);
    const namespace = env.namespace ?? 'default';
    const relays = new Client({ connection: env.connection, namespace, dataConverter });
    const { connection } = liveStart(applicationId);
    const input: RelayInput = {
      connectionWorkflowId: `connection-${tenant}:${applicationId}`,
      taskQueue: stack.taskQueue,
      input: ConnectionInput.parse({ ...connection, customerId: tenant }),
    };
    const handle = await relays.workflow.start(NEXUS_RELAY_WORKFLOW_TYPE, { workflowId: relayId, taskQueue, args: [input] });
    await handle.cancel();
    const worker = await Worker.create({
      connection: env.nativeConnection,
      namespace,
      taskQueue,
      workflowsPath: RELAY_WORKFLOWS_PATH,
      ...WORKFLOW_SANDBOX_OPTIONS,
      dataConverter,
    });
    await worker.runUntil(waitFor(async () => (await handle.describe()).status.name !== 'RUNNING', { timeoutMs: 60_000, describe: 'the relay ended' }));
    assert.equal((await handle.describe()).status.name, 'CANCELLED');
    const { history } = await env.connection.workflowService.getWorkflowExecutionHistory({ namespace, execution: { workflowId: relayId } });
    const events = history?.events ?? [];
    assert.ok(
      events.some((event) => event.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED),
      'the relay ran',
    );
    assert.ok(
      !events.some((event) => event.eventType === EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED),
      `no ${CONNECTION_WORKFLOW_TYPE} started`,
    );
    assert.equal(await running(input.connectionWorkflowId), false);
    await assert.rejects(stack.client.workflow.getHandle(input.connectionWorkflowId).describe(), WorkflowNotFoundError);
  });

  it("refreshes the endpoint's tenant's book through refreshBook and delivers its report under the caller's key", { timeout: 180_000 }, async () => {
    const cadence = 'nexus-quick';
    const logins = await seedBook(cadence, 3);
    const pipelineId = uniqueId('pipeline');
    const outcome = await caller.workflow.execute<typeof callerRefreshesBook>('callerRefreshesBook', {
      taskQueue: callerTaskQueue,
      workflowId: pipelineId,
      // Two pages: the refresh continues as new under its relay, which still gets the last run's report.
      args: [{ endpoint, refresh: { cadence, pageSize: 2, window: { floor: 1, ceiling: 2, start: 2 } } }],
      workflowExecutionTimeout: '3 minutes',
    });
    const report = outcome.report ?? assert.fail(`a report, not ${outcome.cancelled}`);
    assert.equal(report.customerId, tenant, "the endpoint's tenant's book");
    assert.equal(report.cadence, cadence);
    assert.equal(report.status, 'completed');
    assert.equal(report.total, logins.length);
    assert.equal(report.counts.refreshed, logins.length, JSON.stringify(report.counts));
    assert.equal(report.pages.length, 2);
    assert.match(report.refreshWorkflowId, new RegExp(`^book-${tenant}:${cadence}-\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}Z$`));
    // The product's own refresh, as one run by hand: listed with the book's refreshes, its report the same, started by the book relay.
    // Visibility shows a close a moment after it (a suite run read RUNNING once): listed, then listed as completed.
    const listedCompleted = async () =>
      (await books.refreshes({ customerId: tenant, cadence })).find(
        (entry) => entry.refreshWorkflowId === report.refreshWorkflowId && entry.executionStatus === 'COMPLETED',
      );
    const listed = await waitFor(listedCompleted, { describe: 'the refresh listed as completed' });
    assert.equal(listed.executionStatus, 'COMPLETED');
    assert.deepEqual((await books.report(report.refreshWorkflowId)).counts, report.counts);
    const description = await stack.client.workflow.getHandle(report.refreshWorkflowId).describe();
    assert.equal(description.parentExecution?.workflowId, bookRelayWorkflowId(tenant, cadence));
    // What crossed the boundary: the caller's history holds only its own key's payloads; the relay both kinds.
    const lender = await rawPayloads(callerNamespace, pipelineId);
    assert.ok(lender.length > 2);
    for (const { path, payload } of lender)
      assert.equal(metadataText(payload.metadata, KEY_ID_METADATA_KEY), CALLER_KEY.keyId, `${path}: under the caller's key`);
    const relay = await rawPayloads(env.namespace ?? 'default', bookRelayWorkflowId(tenant, cadence));
    assert.deepEqual(
      [...new Set(relay.map(({ payload }) => metadataText(payload.metadata, KEY_ID_METADATA_KEY)))].sort(),
      [CALLER_KEY.keyId, TEST_ENCRYPTION.keyId].sort(),
    );
  });

  it(
    'refuses refreshBook of a book whose refresh runs with CONFLICT naming it, and cancels the refresh when the caller cancels, its report still written',
    { timeout: 180_000 },
    async () => {
      const cadence = 'nexus-slow';
      await seedBook(cadence, 3, { pendingPolls: 3, pollIntervalMs: 1_000 });
      const window = { floor: 1, ceiling: 1, start: 1 };
      const outcome = await caller.workflow.execute<typeof callerRefreshesBook>('callerRefreshesBook', {
        taskQueue: callerTaskQueue,
        workflowId: uniqueId('pipeline'),
        args: [{ endpoint, refresh: { cadence, window }, duplicate: true, cancelAfterMs: 1_500 }],
        workflowExecutionTimeout: '3 minutes',
      });
      const [refresh] = await books.refreshes({ customerId: tenant, cadence });
      const refreshWorkflowId = refresh?.refreshWorkflowId ?? assert.fail('the refresh');
      expectError(
        outcome.duplicate ?? assert.fail('a second refreshBook'),
        'CONFLICT',
        new RegExp(`^book refresh already running: ${refreshWorkflowId} \\(started by another refreshBook operation\\)`),
      );
      // The refresh's own cancel: no more logins, those in flight cancelled, the report written and delivered.
      const report = outcome.report ?? assert.fail(`the cancelled refresh's report, not ${outcome.cancelled}`);
      assert.equal(report.refreshWorkflowId, refreshWorkflowId);
      assert.equal(report.status, 'cancelled');
      assert.ok(report.counts.refreshed < 3, JSON.stringify(report.counts));
      assert.equal(await running(refreshWorkflowId), false);
      assert.equal(await running(bookRelayWorkflowId(tenant, cadence)), false);

      // A refresh the pipeline client started (or the Schedule): refused, and left alone. Paused at once,
      // so it is still running however long the checks below take on a busy machine (its 3 logins take ~10 s).
      const byHand = await books.run({ customerId: tenant, cadence }, { window });
      try {
        await books.pause(byHand.refreshWorkflowId, 'held running for the test');
        await waitFor(
          async () =>
            (await books.refreshes({ customerId: tenant, cadence, running: true })).some((entry) => entry.refreshWorkflowId === byHand.refreshWorkflowId),
          { describe: 'the refresh by hand listed as running' },
        );
        const refused = await caller.workflow.execute<typeof callerExpectsError>('callerExpectsError', {
          taskQueue: callerTaskQueue,
          workflowId: uniqueId('pipeline'),
          args: [endpoint, 'refreshBook', { cadence }],
        });
        expectError(
          refused,
          'CONFLICT',
          new RegExp(`^book refresh already running: ${byHand.refreshWorkflowId} \\(the ${cadence} book of this tenant: one refresh at a time\\)`),
        );
        assert.equal(await running(byHand.refreshWorkflowId), true, 'the refresh by hand goes on');
      } finally {
        await books.cancel(byHand.refreshWorkflowId, 'test over');
      }
    },
  );

  it(
    "keeps each side's payloads under its own key: the connection's history holds nothing the caller's key opens, the caller's nothing the product's key opens",
    { timeout: 120_000 },
    async () => {
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
    },
  );
});

/** A copy of `history` whose child start names another workflow type: replay must find nondeterminism. */
function renameChild(history: History): History {
  const copy = HistoryMessage.decode(HistoryMessage.encode(history).finish());
  const initiated = copy.events.find((event) => event.eventType === EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED);
  const attributes = initiated?.startChildWorkflowExecutionInitiatedEventAttributes ?? assert.fail('the relay started its child');
  attributes.workflowType = { name: 'notAWorkflowOfThisCode' };
  return copy;
}

describe("the relays' histories", () => {
  it("replay against the relay code with the Nexus worker's data converter, and one with a renamed child is nondeterminism", { timeout: 120_000 }, async () => {
    const namespace = env.namespace ?? 'default';
    const types = NEXUS_RELAY_WORKFLOW_TYPES.map((type) => `WorkflowType = ${JSON.stringify(type)}`).join(' OR ');
    const mine: { workflowId: string; runId: string; type: string }[] = [];
    for await (const info of stack.client.workflow.list({ query: `(${types}) AND ExecutionStatus != 'Running'` })) {
      // This file's tenant's: `nexus-relay-<tenant>:…` (start) and `nexus-relay-book:<tenant>:…` (refreshBook).
      if (info.workflowId.startsWith(relayWorkflowId(tenant, '')) || info.workflowId.startsWith(bookRelayWorkflowId(tenant, ''))) {
        mine.push({ workflowId: info.workflowId, runId: info.runId, type: info.type });
      }
    }
    const histories: { workflowId: string; history: History }[] = [];
    for (const { workflowId, runId } of mine) {
      const events: proto.temporal.api.history.v1.IHistoryEvent[] = [];
      let nextPageToken: Uint8Array | undefined;
      do {
        const page = await env.connection.workflowService.getWorkflowExecutionHistory({ namespace, execution: { workflowId, runId }, nextPageToken });
        events.push(...(page.history?.events ?? []));
        nextPageToken = page.nextPageToken?.length ? page.nextPageToken : undefined;
      } while (nextPageToken);
      histories.push({ workflowId, history: { events } });
    }
    assert.deepEqual([...new Set(mine.map(({ type }) => type))].sort(), [...NEXUS_RELAY_WORKFLOW_TYPES].sort(), 'histories of both relays');
    assert.ok(histories.length >= 7, `${histories.length} relay histories`);
    const tampered =
      histories.find(({ history }) => history.events?.some((event) => event.eventType === EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED)) ??
      assert.fail('a relay that started its child');
    const items = [...histories, { workflowId: `${tampered.workflowId}-renamed`, history: renameChild(tampered.history) }];
    // By position (results come in the order given): a relay id can have several runs (a refreshBook refused CONFLICT is a run of its own).
    const results: { workflowId: string; error: Error | undefined }[] = [];
    const replays = Worker.runReplayHistories(
      {
        workflowsPath: RELAY_WORKFLOWS_PATH,
        ...WORKFLOW_SANDBOX_OPTIONS,
        // As the Nexus worker ran them: the caller's key for what crosses, the product's for the children's.
        dataConverter: nexusWorkerDataConverter({ codec: callerCodec, keyIds: [CALLER_KEY.keyId] }, productCodec),
        replayName: 'nexus-relays',
      },
      items,
    );
    for await (const result of replays) results.push({ workflowId: result.workflowId, error: result.error });
    assert.equal(results.length, items.length, 'every history got a result');
    assert.deepEqual(
      results.map(({ workflowId }) => workflowId),
      items.map(({ workflowId }) => workflowId),
      'in the order given',
    );
    for (const { workflowId, error } of results.slice(0, histories.length)) assert.equal(error, undefined, `${workflowId}: ${String(error)}`);
    const renamed = results.at(-1)?.error;
    assert.ok(renamed instanceof DeterminismViolationError, `the renamed child: ${String(renamed)}`);
  });
});
