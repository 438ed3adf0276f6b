/**
 * The stack of the book tests that run workers as their own processes (a worker killed, a second
 * build deployed): a real dev server (on a SQLite file, to restart it on, when asked), the client
 * with the tests' key, the sandbox, the production workflow bundle, and workers started from it.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { DevServer } from '../../scripts/lib/dev-server.js';
import { dataConverterFor } from '../../src/codec/data-converter.js';
import { unattendedTaskQueue } from '../../src/contract/task-queues.js';
import { ConnectionsClient } from '../../src/client/index.js';
import { createSandbox } from '../../sandbox/server.js';
import { TEST_ENCRYPTION } from '../helpers/connection-stack.js';
import { stopAllProcesses } from '../helpers/processes.js';
import { registerSearchAttributes, uniqueId } from '../helpers/temporal.js';
import { startWorkerProcess, writeWorkflowBundle } from '../helpers/worker-processes.js';

export interface BookProcessStack {
  readonly server: DevServer;
  readonly temporal: Client;
  readonly client: ConnectionsClient;
  readonly sandboxUrl: string;
  readonly taskQueue: string;
  /** A worker process of the production bundle on the stack's task queue, with more of production's variables if given. */
  startWorker(env?: Readonly<Record<string, string>>): Promise<ChildProcess>;
  close(): Promise<void>;
}

/**
 * `unattendedPool`: the client starts refreshes on the unattended pool's queue (UNATTENDED_POOL=separate),
 * and each worker says which pool it serves (WORKER_POOL in its env).
 */
export async function startBookProcessStack(
  name: string,
  { restartable = false, unattendedPool = false }: { readonly restartable?: boolean; readonly unattendedPool?: boolean } = {},
): Promise<BookProcessStack> {
  const runDir = await mkdtemp(join(tmpdir(), `${name}-`));
  const server = await DevServer.start({ ...(restartable ? { dbFile: join(runDir, 'temporal.sqlite') } : {}), logPath: join(runDir, 'server.log') });
  const connection = await Connection.connect({ address: server.address });
  await registerSearchAttributes(connection);
  const temporal = new Client({ connection, dataConverter: dataConverterFor({ encryption: TEST_ENCRYPTION }) });
  const taskQueue = uniqueId(name);
  const client = new ConnectionsClient({
    client: temporal,
    taskQueue,
    address: server.address,
    ...(unattendedPool ? { unattendedTaskQueue: unattendedTaskQueue(taskQueue) } : {}),
  });
  const sandbox = await createSandbox({ port: 0 });
  const bundle = await writeWorkflowBundle();
  return {
    server,
    temporal,
    client,
    sandboxUrl: sandbox.url,
    taskQueue,
    startWorker: (env) =>
      startWorkerProcess({
        temporalAddress: server.address,
        taskQueue,
        aggregatorUrl: sandbox.url,
        bundlePath: bundle.path,
        env: { ...(unattendedPool ? { UNATTENDED_POOL: 'separate' } : {}), ...env },
      }),
    close: async () => {
      await stopAllProcesses();
      await connection.close();
      await server.close();
      await sandbox.close();
      await bundle.remove();
      await rm(runDir, { recursive: true, force: true });
    },
  };
}
