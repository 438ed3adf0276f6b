/**
 * A book refresh survives its worker and its server: the worker process is killed (SIGKILL) with
 * connections in flight and a new one takes over, then the Temporal server is killed and started
 * again on its database; the refresh completes every login exactly once (one connection per login
 * and night), fails none, and its report covers the whole book across its pages. Real dev server
 * process on a SQLite file, real worker processes from the production bundle, real sandbox.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client, Connection } from '@temporalio/client';
import { DevServer } from '../../scripts/lib/dev-server.js';
import { dataConverterFor } from '../../src/codec/data-converter.js';
import { ConnectionsClient } from '../../src/client/index.js';
import { bookConnectionWorkflowId } from '../../src/contract/book-definitions.js';
import { CALL_TIMEOUT_MS } from '../../src/workflows/polling.js';
import { createSandbox } from '../../src/sandbox/server.js';
import { createSandboxLogin } from '../../bench/sandbox-fixtures.js';
import { TEST_ENCRYPTION } from '../helpers/connection-stack.js';
import { killProcess, stopAllProcesses } from '../helpers/processes.js';
import { registerSearchAttributes, uniqueId, waitFor } from '../helpers/temporal.js';
import { progressUntil, reportWhenEnded } from './book-waits.js';
import { startWorkerProcess, writeWorkflowBundle, type WorkflowBundleFile } from '../helpers/worker-processes.js';

let runDir: string;
let server: DevServer;
let connection: Connection;
let temporal: Client;
let client: ConnectionsClient;
let sandbox: Awaited<ReturnType<typeof createSandbox>>;
let bundle: WorkflowBundleFile;
const customerId = uniqueId('tenant');
/**
 * A call in flight on the killed worker is retried only once its start-to-close timeout has passed
 * (CALL_TIMEOUT_MS): the page it belongs to drains that much later. Waits allow for it and a minute more.
 */
const KILLED_CALL_WAIT_MS = CALL_TIMEOUT_MS + 60_000;
const taskQueue = uniqueId('books');

before(async () => {
  runDir = await mkdtemp(join(tmpdir(), 'book-durability-'));
  server = await DevServer.start({ dbFile: join(runDir, 'temporal.sqlite'), logPath: join(runDir, 'server.log') });
  connection = await Connection.connect({ address: server.address });
  await registerSearchAttributes(connection);
  temporal = new Client({ connection, dataConverter: dataConverterFor({ encryption: TEST_ENCRYPTION }) });
  client = new ConnectionsClient({ client: temporal, taskQueue, address: server.address });
  sandbox = await createSandbox({ port: 0 });
  bundle = await writeWorkflowBundle();
});

after(async () => {
  await stopAllProcesses();
  await connection?.close();
  await server?.close();
  await sandbox?.close();
  await bundle?.remove();
  if (runDir) await rm(runDir, { recursive: true, force: true });
});

function startWorker(): Promise<ChildProcess> {
  return startWorkerProcess({ temporalAddress: server.address, taskQueue, aggregatorUrl: sandbox.url, bundlePath: bundle.path });
}

function freshLogin(index: number): Promise<string> {
  return createSandboxLogin(sandbox.url, customerId, `pending_polls_${index + 1}`, 2);
}

void describe('a book refresh through faults', () => {
  void it('loses no connection and starts none twice when its worker is killed mid-page and its server restarted', async () => {
    let worker = await startWorker();
    const logins: string[] = [];
    for (let index = 0; index < 12; index += 1) {
      const loginId = await freshLogin(index);
      await client.books.enrol({ customerId, loginId, products: { accountsDetail: {} }, timing: { pollIntervalMs: 300 } });
      logins.push(loginId);
    }
    await waitFor(async () => (await client.books.count({ customerId })) === 12, { describe: '12 logins enrolled' });
    const { refreshWorkflowId } = await client.books.run({ customerId }, { pageSize: 5, window: { floor: 1, ceiling: 3, start: 2 } });

    await progressUntil(client.books, refreshWorkflowId, (progress) => progress.inFlight >= 1 && progress.started >= 2, 'connections in flight', KILLED_CALL_WAIT_MS);
    await killProcess(worker);
    assert.equal(worker.signalCode, 'SIGKILL');
    worker = await startWorker();

    await progressUntil(client.books, refreshWorkflowId, (progress) => progress.page >= 2 && progress.inFlight >= 1, 'the second page under way', KILLED_CALL_WAIT_MS);
    await server.stop('SIGKILL');
    await server.start();

    const report = await reportWhenEnded(client.books, refreshWorkflowId, 2 * KILLED_CALL_WAIT_MS);

    assert.equal(report.status, 'completed');
    assert.equal(report.counts.refreshed, 12, JSON.stringify(report.counts));
    assert.equal(report.counts.failed, 0);
    assert.equal(report.counts.duplicate, 0);
    assert.equal(report.pages.length, 3);
    for (const loginId of logins) {
      const runs = [];
      for await (const info of temporal.workflow.list({ query: `WorkflowId = ${JSON.stringify(bookConnectionWorkflowId(customerId, loginId, report.night))}` })) runs.push(info);
      assert.equal(runs.length, 1, `one connection for ${loginId}`);
      assert.equal(runs[0]?.status.name, 'COMPLETED');
    }
    await killProcess(worker);
  });
});
