/**
 * A book refresh across a deploy: each page's run is Pinned to the build it began on and continues
 * as new onto the current build. A refresh is paused mid-page on build 1, build 2's worker starts
 * and is made current, the refresh resumes: the page's run ends on build 1, the next page's run
 * runs on build 2, and every login is refreshed once. Real dev server, real worker processes from
 * the production bundle (two build ids on one task queue), real sandbox.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client, Connection } from '@temporalio/client';
import { DevServer } from '../../scripts/lib/dev-server.js';
import { dataConverterFor } from '../../src/codec/data-converter.js';
import { ConnectionsClient } from '../../src/client/index.js';
import { WorkerDeployments } from '../../src/client/deployments.js';
import { createSandbox } from '../../src/sandbox/server.js';
import { createSandboxLogin } from '../../bench/sandbox-fixtures.js';
import { TEST_ENCRYPTION } from '../helpers/connection-stack.js';
import { stopAllProcesses } from '../helpers/processes.js';
import { registerSearchAttributes, uniqueId, waitFor } from '../helpers/temporal.js';
import { startWorkerProcess, writeWorkflowBundle, type WorkflowBundleFile } from '../helpers/worker-processes.js';
import { progressUntil, reportWhenEnded } from './book-waits.js';

let runDir: string;
let server: DevServer;
let connection: Connection;
let temporal: Client;
let client: ConnectionsClient;
let sandbox: Awaited<ReturnType<typeof createSandbox>>;
let bundle: WorkflowBundleFile;
const customerId = uniqueId('tenant');
const taskQueue = uniqueId('book-deploy');

before(async () => {
  runDir = await mkdtemp(join(tmpdir(), 'book-deploy-'));
  server = await DevServer.start({ logPath: join(runDir, 'server.log') });
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

function startWorker(buildId: string) {
  return startWorkerProcess({ temporalAddress: server.address, taskQueue, aggregatorUrl: sandbox.url, bundlePath: bundle.path, env: { WORKER_BUILD_ID: buildId } });
}

/** The build each run of a workflow id ran on, and its versioning behavior, oldest run first. */
async function runBuilds(workflowId: string): Promise<{ buildId: string; behavior: string }[]> {
  const runs = [];
  for await (const info of temporal.workflow.list({ query: `WorkflowId = ${JSON.stringify(workflowId)}` })) runs.push(info);
  runs.sort((a, b) => a.startTime.getTime() - b.startTime.getTime());
  return Promise.all(
    runs.map(async (info) => {
      const versioning = (await temporal.workflow.getHandle(workflowId, info.runId).describe()).raw.workflowExecutionInfo?.versioningInfo;
      return { buildId: versioning?.deploymentVersion?.buildId ?? '', behavior: String(versioning?.behavior ?? '') };
    }),
  );
}

void describe('a book refresh across a deploy', () => {
  void it('finishes a page on the build it began on and runs the next page on the new current build', async () => {
    // The first build becomes current on its own (WORKER_BECOME_CURRENT defaults to when-unset).
    await startWorker('deploy-1');
    const deployments = new WorkerDeployments(temporal, taskQueue);
    await waitFor(async () => (await deployments.describe())?.currentBuildId === 'deploy-1', { describe: 'build deploy-1 current' });
    for (let index = 0; index < 6; index += 1) {
      const loginId = await createSandboxLogin(sandbox.url, customerId, `pending_polls_${index + 1}`, 1);
      await client.books.enrol({ customerId, loginId, products: { accountsDetail: {} }, timing: { pollIntervalMs: 200 } });
    }
    await waitFor(async () => (await client.books.count({ customerId })) === 6, { describe: '6 logins enrolled' });
    const { refreshWorkflowId } = await client.books.run({ customerId }, { pageSize: 3, window: { floor: 1, ceiling: 1, start: 1 } });
    await progressUntil(client.books, refreshWorkflowId, (progress) => progress.started >= 1, 'the first page under way');
    await client.books.pause(refreshWorkflowId, 'a deploy');

    // The deploy: build 2's worker beside build 1's, then made current.
    await startWorker('deploy-2');
    await deployments.setCurrent('deploy-2', { waitMs: 60_000 });
    await client.books.resume(refreshWorkflowId);

    const report = await reportWhenEnded(client.books, refreshWorkflowId, 180_000);
    assert.equal(report.status, 'completed');
    assert.equal(report.counts.refreshed, 6, JSON.stringify(report.counts));
    assert.equal(report.counts.duplicate, 0);
    const builds = await runBuilds(refreshWorkflowId);
    assert.ok(builds.length >= 2, `a run per page: ${JSON.stringify(builds)}`);
    assert.equal(builds[0]?.buildId, 'deploy-1', `the first page's run stayed on the build it began on: ${JSON.stringify(builds)}`);
    assert.match(builds[0]?.behavior ?? '', /PINNED|^1$/, `the first page's run is pinned: ${JSON.stringify(builds)}`);
    assert.equal(builds.at(-1)?.buildId, 'deploy-2', `the last page's run moved to the new build: ${JSON.stringify(builds)}`);
  });
});
