/**
 * A book refresh survives its worker and its server: the worker process is killed (SIGKILL) with
 * connections in flight and a new one takes over, then the Temporal server is killed and started
 * again on its database; the refresh completes every login exactly once (one connection per login
 * and night), fails none, and its report covers the whole book across its pages. Real dev server
 * process on a SQLite file, real worker processes from the production bundle, real sandbox.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CALL_TIMEOUT_MS } from '../../src/workflows/connection/polling.js';
import { createSandboxLogin } from '../../bench/sandbox-fixtures.js';
import { killProcess } from '../helpers/processes.js';
import { uniqueId, waitFor } from '../helpers/temporal.js';
import { startBookProcessStack, type BookProcessStack } from './book-process-stack.js';
import { onlyCompletedConnection, progressUntil, reportWhenEnded } from './book-waits.js';

let stack: BookProcessStack;
const customerId = uniqueId('tenant');
/**
 * A call in flight on the killed worker is retried only once its start-to-close timeout has passed
 * (CALL_TIMEOUT_MS): the page it belongs to drains that much later. Waits allow for it and a minute more.
 */
const KILLED_CALL_WAIT_MS = CALL_TIMEOUT_MS + 60_000;

before(async () => {
  stack = await startBookProcessStack('book-durability', { restartable: true });
});

after(async () => {
  await stack?.close();
});

function freshLogin(index: number): Promise<string> {
  return createSandboxLogin(stack.sandboxUrl, customerId, `pending_polls_${index + 1}`, 2);
}

void describe('a book refresh through faults', () => {
  void it('loses no connection and starts none twice when its worker is killed mid-page and its server restarted', async () => {
    const { client, temporal, server } = stack;
    let worker = await stack.startWorker();
    const logins: string[] = [];
    for (let index = 0; index < 12; index += 1) {
      const loginId = await freshLogin(index);
      await client.books.enrol({ customerId, loginId, products: { accountsDetail: {} }, timing: { pollIntervalMs: 300 } });
      logins.push(loginId);
    }
    await waitFor(async () => (await client.books.count({ customerId })) === 12, { describe: '12 logins enrolled' });
    const { refreshWorkflowId } = await client.books.run({ customerId }, { pageSize: 5, window: { floor: 1, ceiling: 3, start: 2 } });

    await progressUntil(
      client.books,
      refreshWorkflowId,
      (progress) => progress.inFlight >= 1 && progress.started >= 2,
      'connections in flight',
      KILLED_CALL_WAIT_MS,
    );
    await killProcess(worker);
    assert.equal(worker.signalCode, 'SIGKILL');
    worker = await stack.startWorker();

    await progressUntil(
      client.books,
      refreshWorkflowId,
      (progress) => progress.page >= 2 && progress.inFlight >= 1,
      'the second page under way',
      KILLED_CALL_WAIT_MS,
    );
    await server.stop('SIGKILL');
    await server.start();

    const report = await reportWhenEnded(client.books, refreshWorkflowId, 2 * KILLED_CALL_WAIT_MS);

    assert.equal(report.status, 'completed');
    assert.equal(report.counts.refreshed, 12, JSON.stringify(report.counts));
    assert.equal(report.counts.failed, 0);
    assert.equal(report.counts.duplicate, 0);
    assert.equal(report.pages.length, 3);
    for (const loginId of logins) {
      await onlyCompletedConnection(temporal, customerId, loginId, report.night);
    }
    await killProcess(worker);
  });
});
