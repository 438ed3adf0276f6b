/**
 * A worker whose heap is capped (NODE_OPTIONS=--max-old-space-size, the way to bound its RSS) gets a
 * tiny SDK-default workflow cache; it must say so at start and name the variable that fixes it.
 * Real worker processes against a real dev server.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { TEST_ENCRYPTION_ENV } from './helpers/connection-stack.js';
import { startProcess, stopAllProcesses } from './helpers/processes.js';
import { createDevEnvironment, uniqueId, waitFor } from './helpers/temporal.js';
import { writeWorkflowBundle, type WorkflowBundleFile } from './helpers/worker-processes.js';

const WARNING = 'so the SDK caches only';

/** The "worker started" line as JSON. */
function startedLine(output: string): { workflowCache: number; heapLimitMiB: number } {
  const line = output.split('\n').find((text) => text.includes('"worker started"'));
  assert.ok(line, `no "worker started" line in:\n${output}`);
  return JSON.parse(line) as { workflowCache: number; heapLimitMiB: number };
}

describe('the worker start-up report of its workflow cache', () => {
  let env: TestWorkflowEnvironment;
  let bundle: WorkflowBundleFile;

  before(async () => {
    env = await createDevEnvironment();
    bundle = await writeWorkflowBundle();
  });
  after(async () => {
    await stopAllProcesses();
    await bundle?.remove();
    await env?.teardown();
  });

  function startWorker(extra: Record<string, string>) {
    return startProcess('worker', {
      TEMPORAL_ADDRESS: env.address,
      TEMPORAL_TASK_QUEUE: uniqueId('cache-warning'),
      // Never called: no connection is started here.
      AGGREGATOR_BASE_URL: 'http://127.0.0.1:9',
      WORKER_WORKFLOW_BUNDLE: bundle.path,
      WORKER_METRICS_PORT: '0',
      ...TEST_ENCRYPTION_ENV,
      ...extra,
    });
  }

  it('warns, naming WORKER_MAX_CACHED_WORKFLOWS, when a capped heap leaves the default cache small', async () => {
    const worker = await startWorker({ NODE_OPTIONS: '--max-old-space-size=256' });
    const output = await waitFor(() => (worker.output().includes(WARNING) ? worker.output() : undefined), { describe: 'the cache warning' });
    const started = startedLine(output);
    assert.ok(started.heapLimitMiB < 1024, `heap limit ${started.heapLimitMiB} MiB`);
    // 145 on Node 24 with this cap (V8's young generation counts in the limit); an uncapped worker here caches ~2,400.
    assert.ok(started.workflowCache < 400, `default cache ${started.workflowCache}`);
    const warning = output.split('\n').find((line) => line.includes(WARNING)) ?? '';
    assert.match(warning, /"level":"WARN"/);
    assert.match(warning, new RegExp(`capped at ${started.heapLimitMiB} MiB, so the SDK caches only ${started.workflowCache} workflows`));
    assert.match(warning, /Set WORKER_MAX_CACHED_WORKFLOWS/);
  });

  it('stays quiet when the cache is set explicitly, and reports it', async () => {
    const worker = await startWorker({ NODE_OPTIONS: '--max-old-space-size=256', WORKER_MAX_CACHED_WORKFLOWS: '2100' });
    assert.equal(startedLine(worker.output()).workflowCache, 2100);
    // The warning is written right after the started line; give it the chance to appear.
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.doesNotMatch(worker.output(), new RegExp(WARNING));
  });

  it('stays quiet on an uncapped heap: a worker on a prebuilt bundle starts without a single WARN', async () => {
    const worker = await startWorker({});
    const started = startedLine(worker.output());
    assert.ok(started.heapLimitMiB >= 1024, `heap limit ${started.heapLimitMiB} MiB`);
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.doesNotMatch(worker.output(), new RegExp(WARNING));
    // The SDK warned on every start that it ignores workflow interceptor modules given beside a bundle.
    assert.doesNotMatch(worker.output(), /"level":"WARN"/);
  });
});
