/**
 * A book refresh across a deploy: each page's run is Pinned to the build it began on and continues
 * as new onto the current build. A refresh is paused mid-page on build 1, build 2's worker starts
 * and is made current, the refresh resumes: the page's run ends on build 1, the next page's run
 * runs on build 2, and every login is refreshed once. Real dev server, real worker processes from
 * the production bundle (two build ids on one task queue), real sandbox.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { WorkerDeployments } from '../../src/client/deployments.js';
import { createSandboxLogin } from '../../bench/sandbox-fixtures.js';
import { uniqueId, waitFor } from '../helpers/temporal.js';
import { startBookProcessStack, type BookProcessStack } from './book-process-stack.js';
import { progressUntil, reportWhenEnded } from './book-waits.js';

let stack: BookProcessStack;
const customerId = uniqueId('tenant');

before(async () => {
  stack = await startBookProcessStack('book-deploy');
});

after(async () => {
  await stack?.close();
});

function startWorker(buildId: string) {
  return stack.startWorker({ WORKER_BUILD_ID: buildId });
}

/** The build each run of a workflow id ran on, and its versioning behavior, oldest run first. */
async function runBuilds(workflowId: string): Promise<{ buildId: string; behavior: string }[]> {
  const { temporal } = stack;
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
    const { client, temporal, taskQueue, sandboxUrl } = stack;
    await startWorker('deploy-1');
    const deployments = new WorkerDeployments(temporal, taskQueue);
    await waitFor(async () => (await deployments.describe())?.currentBuildId === 'deploy-1', { describe: 'build deploy-1 current' });
    for (let index = 0; index < 6; index += 1) {
      const loginId = await createSandboxLogin(sandboxUrl, customerId, `pending_polls_${index + 1}`, 1);
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
