/**
 * A private dev server (scripts/lib/dev-server.ts, in memory) wrapped as the SDK's test environment,
 * for tests and benchmarks that need a server of their own: its teardown also stops the server.
 */
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { DevServer, type DevServerOptions } from './dev-server.js';

/** `devServer`, not `server`: the SDK's environment keeps its own `server` field. */
export type DevEnvironment = TestWorkflowEnvironment & { readonly devServer: DevServer };

export async function startDevEnvironment(options: Partial<DevServerOptions> = {}): Promise<DevEnvironment> {
  const namespace = options.namespace ?? 'default';
  // A log of our own choosing goes with the server at teardown (a bench run by hand wrote one into
  // /tmp each run); one the caller named is the caller's. A start that fails keeps it: its error reads it.
  const ownLog = options.logPath === undefined;
  const logPath = options.logPath ?? join(tmpdir(), `temporal-dev-server-${process.pid}.log`);
  const server = await DevServer.start({ logLevel: 'error', ...options, logPath, namespace });
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
        if (ownLog) await rm(logPath, { force: true });
      }
    },
  });
}
