/**
 * Forgetting a login on a real dev server, with the real worker, the real sandbox over HTTP and a
 * local payload-store directory: the schedule, the card at the service, the stored payloads and the
 * histories of the login's connections are deleted, CARD_IN_USE is waited out on durable timers,
 * the record is found by LoginId, and forgetting twice succeeds.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import proto from '@temporalio/proto';
import { MockActivityEnvironment, type TestWorkflowEnvironment } from '@temporalio/testing';
import { createForgetActivities } from '../../src/activities/forget-activities.js';
import { tenantClients } from '../../src/activities/tenant-clients.js';
import { createAggregatorClient } from '../../src/aggregator/client.js';
import { AggregatorServiceError } from '../../src/aggregator/errors.js';
import {
  ConnectionNotFoundError,
  ConnectionsClient,
  ForgetFailedError,
  InvalidLoginRefError,
  RefreshScheduleNotFoundError,
  connectionKey,
  type ConnectionInputArgs,
} from '../../src/client/index.js';
import { forgetWorkflowId } from '../../src/contract/login-keys.js';
import { workflowKeyPrefix } from '../../src/payload-store/object-keys.js';
import { forgetStateQuery, FORGET_WORKFLOW_TYPE } from '../../src/contract/retention/forget-definitions.js';
import { startConnectionStack, type ConnectionStack } from '../helpers/connection-stack.js';
import { createDevEnvironment, uniqueId, waitFor } from '../helpers/temporal.js';

const TIMER_STARTED = proto.temporal.api.enums.v1.EventType.EVENT_TYPE_TIMER_STARTED;

let env: TestWorkflowEnvironment;
let stack: ConnectionStack;
let client: ConnectionsClient;
let directory: string;

before(async () => {
  directory = await mkdtemp(join(tmpdir(), 'forget-payloads-'));
  env = await createDevEnvironment();
  // A low threshold: every result of a connection goes to the store.
  stack = await startConnectionStack(env, { payloadStore: { kind: 'local', directory, thresholdBytes: 1024 } });
  client = new ConnectionsClient({ client: stack.client, taskQueue: stack.taskQueue });
});

after(async () => {
  await stack?.stop();
  await env?.teardown();
  if (directory) await rm(directory, { recursive: true, force: true });
});

function cached(loginId: string): ConnectionInputArgs {
  return {
    customerId: stack.customerId,
    session: { kind: 'cached', loginId },
    products: { accountsDetail: { WithTransactions: true, DaysOfTransactions: 'Days365' } },
    timing: { pollIntervalMs: 50 },
  };
}

/** Runs a cached connection of the login to completion and waits until visibility lists it by LoginId. */
async function retrieve(loginId: string): Promise<string> {
  const key = connectionKey(stack.customerId, uniqueId('app'));
  await client.start(key, cached(loginId));
  await client.result(key);
  await waitFor(
    async () =>
      (await client.list({ customerId: stack.customerId, loginId })).some((summary) => summary.workflowId === key && summary.executionStatus === 'COMPLETED'),
    {
      describe: `${key} listed by LoginId`,
    },
  );
  return key;
}

async function storedFiles(workflowId: string): Promise<string[]> {
  return readdir(join(directory, workflowKeyPrefix(env.namespace ?? 'default', workflowId))).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return [];
    throw error;
  });
}

function sandboxClient() {
  return createAggregatorClient({ baseUrl: stack.sandboxUrl, customerId: stack.customerId });
}

void describe('forgetting a login', () => {
  void it('deletes its schedule, its card, its stored payloads and histories, and records it by LoginId; forgetting again succeeds', async () => {
    const loginId = await stack.savedLogin('no_mfa');
    const ref = { customerId: stack.customerId, loginId };
    const key = await retrieve(loginId);
    assert.ok((await storedFiles(key)).length > 0, 'the connection stored payloads');
    await client.schedules.schedule({ ...ref, products: { accountsDetail: {} }, cadence: { kind: 'daily', at: '03:00' } });

    const record = await client.logins.forget(ref);
    assert.equal(record.customerId, stack.customerId);
    assert.equal(record.loginId, loginId);
    assert.equal(record.trigger, 'request');
    assert.equal(record.schedule, 'deleted');
    assert.equal(record.retentionTimer, 'none');
    assert.equal(record.card, 'deleted');
    assert.equal(record.cardInUseWaits, 0);
    assert.deepEqual(record.connections, { count: 1, workflowIds: [key] });
    assert.equal(record.payloads.store, resolve(directory));
    assert.ok('deleted' in record.payloads && record.payloads.deleted > 0, JSON.stringify(record.payloads));
    assert.ok(record.completedAt >= record.startedAt);

    await assert.rejects(client.schedules.describe(ref), RefreshScheduleNotFoundError);
    await assert.rejects(
      sandboxClient().authorizeCached(loginId),
      (error: unknown) => error instanceof AggregatorServiceError && error.serviceCode === 'INVALID_LOGIN',
    );
    assert.deepEqual(await storedFiles(key), [], 'no payload of the connection is left');
    // Temporal deletes a history asynchronously (about 30 s later on the dev server).
    await waitFor(
      () =>
        client.describe(key).then(
          () => false,
          (error: unknown) => error instanceof ConnectionNotFoundError,
        ),
      { timeoutMs: 120_000, intervalMs: 1_000, describe: `the history of ${key} to be deleted` },
    );

    const records = await waitFor(async () => (await client.logins.forgetRecords(ref)).filter((summary) => summary.record), {
      describe: 'the forget record listed by LoginId',
    });
    assert.equal(records[0]?.workflowId, forgetWorkflowId(stack.customerId, loginId));
    assert.deepEqual(records[0]?.record, record);

    const again = await client.logins.forget(ref);
    assert.equal(again.schedule, 'none');
    assert.equal(again.card, 'not-found');
    assert.deepEqual(again.connections, { count: 0, workflowIds: [] });
    assert.deepEqual(again.payloads, { store: resolve(directory), deleted: 0 });
    await waitFor(async () => (await client.logins.forgetRecords(ref)).filter((summary) => summary.record).length === 2, { describe: 'both records listed' });
  });

  void it('waits out CARD_IN_USE on durable timers, then deletes the card', async () => {
    const loginId = await stack.savedLogin('pending_polls_3');
    const ref = { customerId: stack.customerId, loginId };
    // A data operation of the card runs at the service (pending for 3 polls): DeleteCard answers CARD_IN_USE.
    const sandbox = sandboxClient();
    const session = await sandbox.authorizeCached(loginId);
    assert.equal(session.kind, 'ready');
    assert.equal((await sandbox.getAccountsDetail(session.requestId)).kind, 'pending');

    const { workflowId } = await client.logins.startForget(ref, { timing: { cardInUseRetryMs: 200 } });
    const handle = stack.client.workflow.getHandle(workflowId);
    await waitFor(async () => (await handle.query(forgetStateQuery)).cardInUseWaits >= 1, { describe: 'DeleteCard answered CARD_IN_USE' });
    assert.equal((await handle.query(forgetStateQuery)).step, 'card');
    // The operation finishes: the next DeleteCard goes through.
    await waitFor(async () => (await sandbox.getAccountsDetailAsync(session.requestId)).kind === 'ready', { describe: 'the operation to finish' });

    const record = await client.logins.forget(ref); // joins the forget already running
    assert.equal(record.card, 'deleted');
    assert.ok(record.cardInUseWaits >= 1);
    const timers = (await handle.fetchHistory()).events?.filter((event) => event.eventType === TIMER_STARTED) ?? [];
    assert.equal(timers.length, record.cardInUseWaits, 'one durable timer per CARD_IN_USE');
    await assert.rejects(sandbox.authorizeCached(loginId), AggregatorServiceError);
  });

  void it('records "off" for payloads when no payload store is configured', async () => {
    const loginId = await stack.savedLogin('operation_pending');
    const key = await retrieve(loginId);
    const activities = createForgetActivities({ temporal: stack.client, clientFor: tenantClients({ baseUrl: stack.sandboxUrl }) });
    const forgotten = await new MockActivityEnvironment().run((input: { customerId: string; loginId: string }) => activities.deleteLoginConnections(input), {
      customerId: stack.customerId,
      loginId,
    });
    assert.deepEqual(forgotten, { count: 1, workflowIds: [key], payloads: { store: 'off' } });
  });

  void it('refuses a bad login reference, and a forget started by hand with a bad input fails typed', async () => {
    await assert.rejects(
      client.logins.forget({ customerId: stack.customerId, loginId: '' }),
      (error: unknown) => error instanceof InvalidLoginRefError && /loginId: must not be empty/.test(error.message),
    );
    await assert.rejects(client.logins.forget({ customerId: 'a:b', loginId: '00000000-0000-4000-8000-000000000000' }), InvalidLoginRefError);
    const handle = await stack.client.workflow.start(FORGET_WORKFLOW_TYPE, {
      taskQueue: stack.taskQueue,
      workflowId: uniqueId('forget-by-hand'),
      args: [{ customerId: stack.customerId, loginId: 'nope', trigger: 'request' }],
    });
    await assert.rejects(handle.result(), (error: unknown) => {
      const mapped = error as { cause?: { type?: string; message?: string } };
      return mapped.cause?.type === 'InvalidForgetInput' && /loginId: must be a UUID/.test(mapped.cause.message ?? '');
    });
  });

  void it('gives up with ForgetFailedError (CardInUse) when the card stays in use past its timeout', async () => {
    const loginId = await stack.savedLogin('pending_polls_1000000');
    const sandbox = sandboxClient();
    const session = await sandbox.authorizeCached(loginId);
    assert.equal(session.kind, 'ready');
    assert.equal((await sandbox.getAccountsDetail(session.requestId)).kind, 'pending');
    await assert.rejects(
      client.logins.forget({ customerId: stack.customerId, loginId }, { timing: { cardInUseRetryMs: 100, cardInUseTimeoutMs: 500 } }),
      (error: unknown) => {
        assert.ok(error instanceof ForgetFailedError, String(error));
        assert.equal(error.type, 'CardInUse');
        assert.match(error.reason, /still answered CARD_IN_USE/);
        return true;
      },
    );
    assert.equal((await sandbox.authorizeCached(loginId)).kind, 'ready', 'the card is still there');
  });
});
