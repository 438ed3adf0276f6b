/**
 * The Python client end to end: a real Temporal dev server, the TypeScript worker (the product's
 * workflows and activities, its codec) and the sandbox over HTTP, then the pytest module
 * python/tests/e2e/ run in the venv against them, with the stack's addresses in the variables a
 * pipeline sets (and, for the key rotation's own worker processes, the sandbox's address and a prebuilt
 * workflow bundle). A pytest run that fails, skips or collects no test fails here.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { startConnectionStack, TEST_ENCRYPTION_ENV, type ConnectionStack } from '../helpers/connection-stack.js';
import { runPython } from '../helpers/python-env.js';
import { writeWorkflowBundle, type WorkflowBundleFile } from '../helpers/worker-processes.js';
import { createDevEnvironment } from '../helpers/temporal.js';

describe('the Python client against the TypeScript worker', () => {
  let env: TestWorkflowEnvironment;
  let stack: ConnectionStack;
  let dir: string;
  let bundle: WorkflowBundleFile;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'python-e2e-'));
    env = await createDevEnvironment();
    stack = await startConnectionStack(env);
    bundle = await writeWorkflowBundle();
  });
  after(async () => {
    await stack?.stop();
    await bundle?.remove();
    await env?.teardown();
    await rm(dir, { recursive: true, force: true });
  });

  it('starts, answers, reads, cancels and lists connections from Python, with typed errors, across a key rotation', async () => {
    const report = join(dir, 'pytest.xml');
    const result = await runPython(['-m', 'pytest', '-p', 'no:cacheprovider', `--junitxml=${report}`, 'tests/e2e'], {
      TEMPORAL_ADDRESS: env.address,
      TEMPORAL_NAMESPACE: env.namespace ?? 'default',
      TEMPORAL_TASK_QUEUE: stack.taskQueue,
      ...TEST_ENCRYPTION_ENV,
      E2E_CUSTOMER_ID: stack.customerId,
      E2E_AGGREGATOR_BASE_URL: stack.sandboxUrl,
      E2E_WORKFLOW_BUNDLE: bundle.path,
    });
    process.stdout.write(result.stdout.split('\n').slice(-15).join('\n'));
    assert.equal(result.code, 0, `pytest failed:\n${result.stdout.slice(-8000)}\n${result.stderr.slice(-4000)}`);
    const suite = /<testsuite [^>]*>/.exec(await readFile(report, 'utf8'))?.[0] ?? '';
    const count = (name: string) => Number(new RegExp(`\\b${name}="(\\d+)"`).exec(suite)?.[1] ?? 0);
    assert.ok(count('tests') >= 8, `pytest collected ${count('tests')} tests (report: ${suite})`);
    assert.equal(count('skipped'), 0, `pytest skipped tests: the module did not see its variables (report: ${suite})`);
  });
});
