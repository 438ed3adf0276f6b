/** What the client tests share: the pipeline client over the whole stack, and live inputs for sandbox scenarios. */
import assert from 'node:assert/strict';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { ConnectionsClient, connectionKey } from '../../src/client/index.js';
import type { ConnectionInputArgs } from '../../src/client/index.js';
import type { AccountsDetailOptions } from '../../src/aggregator/schemas.js';
import { SANDBOX_PASSWORD } from '../../sandbox/scenarios.js';
import { startConnectionStack, type ConnectionStack } from '../helpers/connection-stack.js';
import { createDevEnvironment, uniqueId } from '../helpers/temporal.js';

export interface ClientStack {
  readonly env: TestWorkflowEnvironment;
  readonly stack: ConnectionStack;
  readonly client: ConnectionsClient;
}

/** A real dev server, worker and sandbox, and a pipeline client on the stack's task queue. */
export async function startClientStack(): Promise<ClientStack> {
  const env = await createDevEnvironment();
  const stack = await startConnectionStack(env);
  return { env, stack, client: new ConnectionsClient({ client: stack.client, taskQueue: stack.taskQueue }) };
}

export async function stopClientStack(shared: Partial<ClientStack>): Promise<void> {
  await shared.stack?.stop();
  await shared.env?.teardown();
}

/** A live connection to a sandbox scenario that polls fast. */
export function liveInput(
  customerId: string,
  username: string,
  institution: string,
  accountsDetail: AccountsDetailOptions = { WithTransactions: true },
): ConnectionInputArgs {
  return {
    customerId,
    session: { kind: 'live', institution, username, password: SANDBOX_PASSWORD },
    products: { accountsDetail },
    timing: { pollIntervalMs: 50 },
  };
}

/** Starts a connection by a fresh business key and checks its first step is a challenge set. */
export async function startAwaiting(client: ConnectionsClient, customerId: string, username: string, institution: string): Promise<string> {
  const id = connectionKey(customerId, uniqueId(username.replace(/_/g, '-')));
  const first = await client.startAndAwaitFirstStep(id, liveInput(customerId, username, institution));
  assert.equal(first.step, 'challenge', `${username} asks a challenge first`);
  return id;
}
