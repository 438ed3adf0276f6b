/**
 * How a book refresh is started and fed, on a real dev server with the real worker and sandbox: a
 * Schedule per tenant and cadence starts it (a refresh still running when the next is due is skipped,
 * and its report counts the skipped runs); a pipeline enrols the login a connection saved through
 * `result(id, { enrol })`; per-login refresh Schedules move into the book with one call.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { ConnectionsClient, connectionKey } from '../../src/client/index.js';
import { bookScheduleId } from '../../src/contract/book/book-definitions.js';
import { createSandboxLogin } from '../../bench/sandbox-fixtures.js';
import { startConnectionStack, type ConnectionStack } from '../helpers/connection-stack.js';
import { createDevEnvironment, uniqueId, waitFor } from '../helpers/temporal.js';
import { reportWhenEnded } from './book-waits.js';
import { liveInput } from '../client/client-stack.js';

let env: TestWorkflowEnvironment;
let stack: ConnectionStack;
let client: ConnectionsClient;
let loginsMade = 0;

before(async () => {
  env = await createDevEnvironment();
  stack = await startConnectionStack(env);
  client = new ConnectionsClient({ client: stack.client, taskQueue: stack.taskQueue });
});

after(async () => {
  await stack?.stop();
  await env?.teardown();
});

/** A fresh saved login (the sandbox derives a LoginId from the username), its data pending for `pendingPolls` polls. */
function freshLogin(pendingPolls: number): Promise<string> {
  loginsMade += 1;
  return createSandboxLogin(stack.sandboxUrl, stack.customerId, `pending_polls_${loginsMade}`, pendingPolls);
}

void describe('book schedules and enrolment', () => {
  void it('refreshes the book on its Schedule, skips a run due while one is still going, and says so in the report', async () => {
    const cadence = 'every-2s';
    for (let index = 0; index < 3; index += 1) {
      await client.books.enrol({
        customerId: stack.customerId,
        loginId: await freshLogin(3),
        cadence,
        products: { accountsDetail: {} },
        timing: { pollIntervalMs: 1_000 },
      });
    }
    const created = await client.books.schedule({
      customerId: stack.customerId,
      cadence,
      when: { kind: 'interval', every: '2s' },
      window: { floor: 1, ceiling: 1, start: 1 },
      pageSize: 50,
    });
    assert.equal(created.created, true);
    assert.equal(created.scheduleId, bookScheduleId(stack.customerId, cadence));
    try {
      const described = await waitFor(() => client.books.describeSchedule({ customerId: stack.customerId, cadence }), { describe: 'the schedule' });
      assert.deepEqual(described.window, { floor: 1, ceiling: 1, start: 1 });
      assert.equal(described.pageSize, 50);
      const ended = await waitFor(async () => (await client.books.refreshes({ customerId: stack.customerId, cadence, running: false }))[0], {
        timeoutMs: 90_000,
        intervalMs: 500,
        describe: 'a scheduled refresh to end',
      });
      assert.ok(ended.refreshWorkflowId.startsWith(`${created.scheduleId}-`), `a run of the schedule: ${ended.refreshWorkflowId}`);
      const report = await reportWhenEnded(client.books, ended.refreshWorkflowId);
      assert.equal(report.counts.refreshed, 3);
      assert.ok(report.skippedWhileRunning >= 1, `the schedule skipped runs while it ran: ${report.skippedWhileRunning}`);
    } finally {
      assert.equal(await client.books.unschedule({ customerId: stack.customerId, cadence }), 'deleted');
    }
  });

  void it("enrols the login a completed connection saved, with that connection's products, through result(id, { enrol })", async () => {
    const key = connectionKey(stack.customerId, uniqueId('enrol'));
    await client.start(key, { ...liveInput(stack.customerId, 'no_mfa', 'SandboxBank', { WithTransactions: true, DaysOfTransactions: 'Days90' }) });
    const result = await client.result(key, { enrol: { cadence: 'weekly' } });
    const entry = await client.books.entry({ customerId: stack.customerId, loginId: result.loginId });
    assert.equal(entry.cadence, 'weekly');
    assert.equal(entry.session, 'cached');
    assert.deepEqual(entry.products, { accountsDetail: { WithTransactions: true, DaysOfTransactions: 'Days90' } });
  });

  void it('moves per-login refresh Schedules into the book with one call, deleting the schedules it replaced', async () => {
    const logins = [await freshLogin(1), await freshLogin(1)];
    for (const loginId of logins) {
      await client.schedules.schedule({
        customerId: stack.customerId,
        loginId,
        products: { investments: true },
        cadence: { kind: 'daily', at: '03:00' },
        paused: true,
      });
    }
    const outcome = await client.books.migrateSchedules({ customerId: stack.customerId, cadence: 'migrated' }, client.schedules);
    assert.deepEqual([...outcome.enrolled].sort(), [...logins].sort());
    assert.equal(outcome.schedulesDeleted, 2);
    for (const loginId of logins) {
      const entry = await client.books.entry({ customerId: stack.customerId, loginId });
      assert.equal(entry.cadence, 'migrated');
      assert.deepEqual(entry.products, { investments: true });
      await assert.rejects(client.schedules.describe({ customerId: stack.customerId, loginId }), /no refresh schedule/);
    }
  });
});
