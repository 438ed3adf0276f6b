/**
 * A private dev server (scripts/lib/dev-server.ts, in memory) wrapped as the SDK's test environment,
 * for tests and benchmarks that need a server of their own: its teardown also stops the server.
 */
import { randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { DevServer, type DevServerOptions } from './dev-server.js';

/** `devServer`, not `server`: the SDK's environment keeps its own `server` field. */
export type DevEnvironment = TestWorkflowEnvironment & { readonly devServer: DevServer };

export async function startDevEnvironment(options: Partial<DevServerOptions> = {}): Promise<DevEnvironment> {
  const namespace = options.namespace ?? 'default';
  // A log of our own choosing (one per environment: two in one process must not share it) goes with
  // the server at teardown, unless the server died (a bench run by hand wrote one into /tmp each
  // run); one the caller named is the caller's. A start that fails keeps it: its error reads it.
  const ownLog = options.logPath === undefined;
  const logPath = options.logPath ?? join(tmpdir(), `temporal-dev-server-${process.pid}-${randomUUID().slice(0, 8)}.log`);
  let died = false;
  const server = await DevServer.start({
    logLevel: 'error',
    ...options,
    logPath,
    namespace,
    onUnexpectedExit: (how) => {
      died = true;
      options.onUnexpectedExit?.(how);
    },
  });
  let env: TestWorkflowEnvironment;
  try {
    env = await TestWorkflowEnvironment.createFromExistingServer({ address: server.address, namespace });
  } catch (error) {
    await server.close();
    throw error;
  }
  const teardown = env.teardown.bind(env);
  return Object.assign(env, {
    devServer: server,
    teardown: async () => {
      try {
        await teardown();
      } finally {
        await server.close();
        if (ownLog && died) process.stderr.write(`the dev server died while it ran; its log: ${logPath}\n`);
        // A log that cannot be removed is left where it is: it must not hide how the teardown went.
        else if (ownLog) await rm(logPath, { force: true }).catch(() => undefined);
      }
    },
  });
}
