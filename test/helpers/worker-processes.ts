/**
 * Workers as their own processes, started as production starts them (src/worker.ts from a prebuilt
 * bundle, payloads encrypted with the tests' key), for tests that SIGKILL a worker mid-connection.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { productWorkflowBundle } from '../../scripts/lib/workflow-bundle.js';
import { loadTestConfig } from '../../scripts/lib/test-settings.js';
import { TEST_ENCRYPTION_ENV } from './connection-stack.js';
import { startProcess } from './processes.js';

export interface WorkflowBundleFile {
  readonly path: string;
  remove(): Promise<void>;
}

/** The product's workflow bundle as a file for every worker process of a test file: the run's shared one, else written once to a temporary file. */
export async function writeWorkflowBundle(): Promise<WorkflowBundleFile> {
  const shared = loadTestConfig().workflowBundlePath;
  if (shared) return { path: shared, remove: async () => {} };
  const dir = await mkdtemp(join(tmpdir(), 'workflow-bundle-'));
  const path = join(dir, 'workflow-bundle.js');
  await writeFile(path, await productWorkflowBundle());
  return { path, remove: () => rm(dir, { recursive: true, force: true }) };
}

export interface WorkerProcessOptions {
  readonly temporalAddress: string;
  readonly taskQueue: string;
  readonly aggregatorUrl: string;
  readonly bundlePath: string;
  /** More of production's variables (a build id, for a test of a deploy). */
  readonly env?: Readonly<Record<string, string>> | undefined;
}

/** The environment a test worker process runs with: production's variables, the tests' key. */
export function workerProcessEnv({ temporalAddress, taskQueue, aggregatorUrl, bundlePath, env }: WorkerProcessOptions): Record<string, string> {
  return {
    ...env,
    TEMPORAL_ADDRESS: temporalAddress,
    TEMPORAL_TASK_QUEUE: taskQueue,
    AGGREGATOR_BASE_URL: aggregatorUrl,
    ...TEST_ENCRYPTION_ENV,
    WORKER_WORKFLOW_BUNDLE: bundlePath,
    WORKER_METRICS_PORT: '0',
    LOG_LEVEL: 'INFO',
  };
}

/** Starts `src/worker.ts` as its own process and resolves once it polls; stopAllProcesses() ends it. */
export async function startWorkerProcess(options: WorkerProcessOptions): Promise<ChildProcess> {
  return (await startProcess('worker', workerProcessEnv(options))).child;
}
