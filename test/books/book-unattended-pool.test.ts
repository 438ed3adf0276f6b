/**
 * A pool for unattended work (UNATTENDED_POOL=separate): a book's refresh, its logins and their
 * connections run on the unattended pool's queue, served by a worker of their own at a lower CPU
 * priority (WORKER_NICE), while every call to the service still goes through the service queue and
 * its budget. Nothing runs the book until that pool has a worker; its worker killed mid-page, the
 * refresh loses no connection and starts none twice. A held unattended start outside a book
 * (UNATTENDED_ADMISSION=window) runs there too. Real dev server, worker processes from the
 * production bundle, real sandbox.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { connectionKey } from '../../src/client/business-key.js';
import { ConnectionsClient } from '../../src/client/connections.js';
import { admissionGrantSignal } from '../../src/contract/admission/admission-definitions.js';
import { unattendedTaskQueue } from '../../src/contract/task-queues.js';
import { CALL_TIMEOUT_MS } from '../../src/workflows/connection/polling.js';
import { createSandboxLogin } from '../../bench/sandbox-fixtures.js';
import { killProcess } from '../helpers/processes.js';
import { threadsOf } from '../helpers/threads.js';
import { uniqueId, waitFor } from '../helpers/temporal.js';
import { startBookProcessStack, type BookProcessStack } from './book-process-stack.js';
import { onlyCompletedConnection, progressUntil, reportWhenEnded } from './book-waits.js';

let stack: BookProcessStack;
const customerId = uniqueId('tenant');
/** A call in flight on the killed worker is retried once its start-to-close timeout has passed. */
const KILLED_CALL_WAIT_MS = CALL_TIMEOUT_MS + 60_000;
const LOGINS = 6;

before(async () => {
  stack = await startBookProcessStack('book-unattended-pool', { unattendedPool: true });
});

after(async () => {
  await stack?.close();
});

void describe('a pool for unattended work', () => {
  void it("runs the book's refresh, logins and connections on their own queue and worker, their service calls on the service queue", async () => {
    const { client, temporal, taskQueue } = stack;
    const unattendedQueue = unattendedTaskQueue(taskQueue);
    await stack.startWorker({ WORKER_POOL: 'service' });
    const logins: string[] = [];
    for (let index = 0; index < LOGINS; index += 1) {
      const loginId = await createSandboxLogin(stack.sandboxUrl, customerId, `pending_polls_${index + 1}`, 2);
      await client.books.enrol({ customerId, loginId, products: { accountsDetail: {} }, timing: { pollIntervalMs: 300 } });
      logins.push(loginId);
    }
    await waitFor(async () => (await client.books.count({ customerId })) === LOGINS, { describe: `${LOGINS} logins enrolled` });
    const { refreshWorkflowId } = await client.books.run({ customerId }, { pageSize: 4, window: { floor: 1, ceiling: 3, start: 2 } });
    const refresh = temporal.workflow.getHandle(refreshWorkflowId);
    assert.equal((await refresh.describe()).taskQueue, unattendedQueue);

    // The service pool alone does not touch it: its first workflow task waits for the unattended pool.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const waiting = await refresh.fetchHistory();
    assert.deepEqual(
      waiting.events?.map((event) => event.eventType),
      [1, 5],
      'started and a workflow task scheduled, nothing more',
    );

    let unattended = await stack.startWorker({ WORKER_POOL: 'unattended', WORKER_NICE: '5' });
    const nice = threadsOf(unattended.pid!).map((thread) => thread.nice);
    assert.ok(nice.length > 3 && nice.every((value) => value === 5), `every thread of the unattended worker at nice 5: ${nice.join(',')}`);

    await progressUntil(
      client.books,
      refreshWorkflowId,
      (progress) => progress.inFlight >= 1 && progress.started >= 2,
      'connections in flight',
      KILLED_CALL_WAIT_MS,
    );
    await killProcess(unattended);
    unattended = await stack.startWorker({ WORKER_POOL: 'unattended' });

    const report = await reportWhenEnded(client.books, refreshWorkflowId, 2 * KILLED_CALL_WAIT_MS);
    assert.equal(report.status, 'completed');
    assert.equal(report.counts.refreshed, LOGINS, JSON.stringify(report.counts));
    assert.equal(report.counts.failed, 0);
    assert.equal(report.counts.duplicate, 0);
    for (const loginId of logins) {
      const connection = await onlyCompletedConnection(temporal, customerId, loginId, report.night);
      assert.equal(connection.taskQueue, unattendedQueue, 'the connection ran on the unattended pool');
      // Its calls to the service: every activity scheduled on the service queue (the budget's).
      const history = await temporal.workflow.getHandle(connection.workflowId, connection.runId).fetchHistory();
      const activityQueues = new Set(
        history.events
          ?.filter((event) => event.activityTaskScheduledEventAttributes)
          .map((event) => event.activityTaskScheduledEventAttributes?.taskQueue?.name),
      );
      assert.deepEqual([...activityQueues], [taskQueue], `the activities of ${loginId}`);
    }
    await killProcess(unattended);
  });

  void it("polls both queues in one process, the unattended pool's workflow threads alone lowered (WORKER_UNATTENDED_NICE)", async () => {
    const { client, temporal, taskQueue } = stack;
    const both = await stack.startWorker({ WORKER_POOL: 'all', WORKER_UNATTENDED_NICE: '7' });
    const threads = threadsOf(both.pid!);
    const lowered = threads.filter((thread) => thread.nice === 7);
    // One workflow thread for each SDK worker (the SDK's default): the unattended pool's alone lowered,
    // the service queue's at 0.
    assert.ok(lowered.length === 1 && lowered[0]?.name === 'WorkerThread', `the pool's one workflow thread lowered: ${JSON.stringify(threads)}`);
    assert.ok(
      threads.some((thread) => thread.name === 'WorkerThread' && thread.nice === 0),
      `the service queue's workflow thread not lowered: ${JSON.stringify(threads)}`,
    );
    assert.ok(
      threads.filter((thread) => thread.name !== 'WorkerThread').every((thread) => thread.nice === 0),
      `every other thread at 0: ${JSON.stringify(threads)}`,
    );

    const tenant = uniqueId('both-pools');
    for (let index = 0; index < 2; index += 1) {
      // A login per username: the sandbox gives a tenant's same username the same login.
      const loginId = await createSandboxLogin(stack.sandboxUrl, tenant, `pending_polls_${index + 1}`, 2);
      await client.books.enrol({ customerId: tenant, loginId, products: { accountsDetail: {} }, timing: { pollIntervalMs: 300 } });
    }
    await waitFor(async () => (await client.books.count({ customerId: tenant })) === 2, { describe: 'two logins enrolled' });
    const { refreshWorkflowId } = await client.books.run({ customerId: tenant }, { pageSize: 4, window: { floor: 1, ceiling: 2, start: 2 } });
    const report = await reportWhenEnded(client.books, refreshWorkflowId, KILLED_CALL_WAIT_MS);
    assert.equal(report.counts.refreshed, 2, JSON.stringify(report.counts));
    assert.equal((await temporal.workflow.getHandle(refreshWorkflowId).describe()).taskQueue, unattendedTaskQueue(taskQueue));
    await killProcess(both);
  });

  void it('runs held unattended starts outside a book on the unattended pool, found and begun by their admission', async () => {
    const { temporal, taskQueue } = stack;
    const unattendedQueue = unattendedTaskQueue(taskQueue);
    const held = new ConnectionsClient({ client: temporal, taskQueue, unattendedTaskQueue: unattendedQueue, unattendedAdmission: 'window' });
    await stack.startWorker({ WORKER_POOL: 'service', UNATTENDED_ADMISSION: 'window' });
    const unattended = await stack.startWorker({ WORKER_POOL: 'unattended', UNATTENDED_ADMISSION: 'window' });
    const tenant = uniqueId('held-pool');
    const started = await Promise.all(
      Array.from({ length: 3 }, async (_, index) => {
        const loginId = await createSandboxLogin(stack.sandboxUrl, tenant, 'pending_polls_1', 2);
        return await held.start(connectionKey(tenant, `held-${index}`), {
          customerId: tenant,
          session: { kind: 'cached', loginId },
          products: { accountsDetail: {} },
          unattended: true,
          timing: { pollIntervalMs: 300 },
        });
      }),
    );
    for (const { workflowId, runId } of started) {
      await held.result(workflowId);
      const handle = temporal.workflow.getHandle(workflowId, runId);
      assert.equal((await handle.describe()).taskQueue, unattendedQueue, `${workflowId} ran on the unattended pool`);
      const events = (await handle.fetchHistory()).events ?? [];
      assert.equal(events[1]?.workflowExecutionSignaledEventAttributes?.signalName, admissionGrantSignal.name, `${workflowId} was begun by its grant`);
      const activityQueues = new Set(
        events.filter((event) => event.activityTaskScheduledEventAttributes).map((event) => event.activityTaskScheduledEventAttributes?.taskQueue?.name),
      );
      assert.deepEqual([...activityQueues], [taskQueue], `the calls to the service of ${workflowId} on the service queue`);
    }
    await killProcess(unattended);
  });
});
