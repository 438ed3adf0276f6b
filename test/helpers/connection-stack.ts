/**
 * The whole product for one test file: the real sandbox over HTTP, the real activities and a real
 * worker on a unique task queue of a real Temporal server (dev or time-skipping).
 */
import { fileURLToPath } from 'node:url';
import type { WorkflowHandleWithFirstExecutionRunId } from '@temporalio/client';
import type { DataConverter } from '@temporalio/common';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { createActivities } from '../../src/activities/connection-activities.js';
import { createInputActivities } from '../../src/activities/input-activities.js';
import { tenantClients } from '../../src/activities/tenant-clients.js';
import { createSandbox } from '../../src/sandbox/server.js';
import type { ConnectionInputArgs } from '../../src/workflows/connection-input.js';
import { connectionStateQuery, type ConnectionState } from '../../src/workflows/definitions.js';
import type { connectionWorkflow } from '../../src/workflows/connection.js';
import { uniqueId, waitFor } from './temporal.js';

export const WORKFLOWS_PATH = fileURLToPath(new URL('../../src/workflows/index.ts', import.meta.url));

export interface ConnectionStack {
  readonly env: TestWorkflowEnvironment;
  readonly sandboxUrl: string;
  readonly customerId: string;
  readonly taskQueue: string;
  readonly worker: Worker;
  /** Every upstream request the activities made, as "METHOD /path" (real HTTP, only observed). */
  readonly upstreamCalls: string[];
  /** Starts a connection on this stack's task queue, with a unique business key. */
  start(input: Omit<ConnectionInputArgs, 'customerId'> & { customerId?: string }, workflowId?: string): Promise<WorkflowHandleWithFirstExecutionRunId<typeof connectionWorkflow>>;
  /** Polls the state query until `predicate` holds. */
  waitForState(workflowId: string, predicate: (state: ConnectionState) => boolean, describe: string): Promise<ConnectionState>;
  /** Creates a saved login for a sandbox scenario (no challenges), for cached connections. */
  savedLogin(username: string): Promise<string>;
  stop(): Promise<void>;
}

export interface ConnectionStackOptions {
  customerId?: string;
  /** The worker's data converter (e.g. the encryption codec); `start` and `waitForState` still use env.client. */
  dataConverter?: DataConverter | undefined;
}

export async function startConnectionStack(env: TestWorkflowEnvironment, options: ConnectionStackOptions = {}): Promise<ConnectionStack> {
  const sandbox = await createSandbox({ port: 0 });
  const customerId = options.customerId ?? uniqueId('tenant');
  const taskQueue = uniqueId('connections');
  const upstreamCalls: string[] = [];
  const observedFetch: typeof fetch = (resource, init) => {
    const url = new URL(resource instanceof Request ? resource.url : String(resource));
    upstreamCalls.push(`${(resource instanceof Request ? resource.method : (init?.method ?? 'GET')).toUpperCase()} ${url.pathname}`);
    return fetch(resource, init);
  };
  const worker = await Worker.create({
    connection: env.nativeConnection,
    namespace: env.namespace ?? 'default',
    taskQueue,
    workflowsPath: WORKFLOWS_PATH,
    activities: { ...createInputActivities(), ...createActivities(tenantClients({ baseUrl: sandbox.url, timeoutMs: 10_000, fetch: observedFetch })) },
    dataConverter: options.dataConverter,
  });
  const running = worker.run();

  return {
    env,
    sandboxUrl: sandbox.url,
    customerId,
    taskQueue,
    worker,
    upstreamCalls,
    start: (input, workflowId = uniqueId('connection')) =>
      env.client.workflow.start('connectionWorkflow', {
        taskQueue,
        workflowId,
        args: [{ customerId, ...input }],
      }) as Promise<WorkflowHandleWithFirstExecutionRunId<typeof connectionWorkflow>>,
    async waitForState(workflowId, predicate, describe) {
      const handle = env.client.workflow.getHandle(workflowId);
      let last: ConnectionState | undefined;
      try {
        await waitFor(
          async () => {
            last = await handle.query(connectionStateQuery);
            return predicate(last);
          },
          { timeoutMs: 30_000, describe },
        );
      } catch (error) {
        const summary = last && { ...last, challengeSet: last.challengeSet && { id: last.challengeSet.id, types: last.challengeSet.challenges.map((c) => c.Type) } };
        throw new Error(`${(error as Error).message}; last state: ${JSON.stringify(summary)}`, { cause: error });
      }
      return last as ConnectionState;
    },
    async savedLogin(username) {
      const response = await fetch(`${sandbox.url}/sandbox/${encodeURIComponent(customerId)}/logins`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username }),
      });
      if (!response.ok) throw new Error(`sandbox refused to create a saved login for ${username}: ${response.status} ${await response.text()}`);
      return ((await response.json()) as { LoginId: string }).LoginId;
    },
    async stop() {
      worker.shutdown();
      await running;
      await sandbox.close();
    },
  };
}
