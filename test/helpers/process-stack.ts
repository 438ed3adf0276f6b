/**
 * What the tests that run workers as their own processes share: a dev server, the sandbox, the
 * product's workflow bundle written once, and a client with the tests' payload key; workers are
 * started as production starts them (worker-processes.ts) and all of it is stopped in `stop()`.
 */
import { Client } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { dataConverterFor } from '../../src/codec/data-converter.js';
import { createSandbox, type Sandbox } from '../../sandbox/server.js';
import { TEST_ENCRYPTION } from './connection-stack.js';
import { startProcess, stopAllProcesses, type ProductProcess } from './processes.js';
import { createDevEnvironment } from './temporal.js';
import { workerProcessEnv, writeWorkflowBundle } from './worker-processes.js';

export interface ProcessStack {
  readonly env: TestWorkflowEnvironment;
  readonly client: Client;
  readonly sandbox: Sandbox;
  /** A worker process on the queue, calling the service at `aggregatorUrl` (the sandbox unless given), with more variables. */
  startWorker(taskQueue: string, options?: { aggregatorUrl?: string; env?: Record<string, string> }): Promise<ProductProcess>;
  /** A saved login of the tenant at the sandbox. */
  savedLogin(customerId: string, username: string): Promise<string>;
  stop(): Promise<void>;
}

export async function startProcessStack(): Promise<ProcessStack> {
  const env = await createDevEnvironment();
  const client = new Client({
    connection: env.connection,
    namespace: env.namespace ?? 'default',
    dataConverter: dataConverterFor({ encryption: TEST_ENCRYPTION }),
  });
  const sandbox = await createSandbox({ port: 0 });
  const bundle = await writeWorkflowBundle();
  return {
    env,
    client,
    sandbox,
    startWorker: (taskQueue, { aggregatorUrl = sandbox.url, env: extra = {} } = {}) =>
      startProcess('worker', { ...workerProcessEnv({ temporalAddress: env.address, taskQueue, aggregatorUrl, bundlePath: bundle.path }), ...extra }),
    async savedLogin(customerId, username) {
      const response = await fetch(`${sandbox.url}/sandbox/${customerId}/logins`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username }),
      });
      if (!response.ok) throw new Error(`the sandbox refused a saved login for ${username}: HTTP ${response.status}`);
      return ((await response.json()) as { LoginId: string }).LoginId;
    },
    async stop() {
      await stopAllProcesses();
      await sandbox.close();
      await bundle.remove();
      await env.teardown();
    },
  };
}
