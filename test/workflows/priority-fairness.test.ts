/**
 * Who waits decides the order, on a real dev server with the product's server settings (fairness on,
 * one partition per queue: scripts/lib/server-dynamic-config.ts): a backlog piles up on a queue no
 * worker polls yet, then one worker with two workflow-task slots drains it. The order Temporal
 * dispatched in is read from each connection's history (its first workflow task's start), never
 * from the clock of this test.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { ConnectionsClient } from '../../src/client/connections.js';
import { dataConverterFor } from '../../src/codec/data-converter.js';
import type { ConnectionInputArgs } from '../../src/contract/connection/connection-input.js';
import { SANDBOX_PASSWORD } from '../../sandbox/scenarios.js';
import { connectionStateQuery } from '../../src/contract/connection/connection-definitions.js';
import { startConnectionStack, TEST_ENCRYPTION, type ConnectionStack } from '../helpers/connection-stack.js';
import { createDevEnvironment, uniqueId } from '../helpers/temporal.js';

let env: TestWorkflowEnvironment;
const stacks: ConnectionStack[] = [];

before(async () => {
  env = await createDevEnvironment();
});

after(async () => {
  for (const stack of stacks) await stack.stop();
  await env?.teardown();
});

function liveNoMfa(customerId: string): ConnectionInputArgs {
  return {
    customerId,
    session: { kind: 'live', institution: 'SandboxBank', username: 'no_mfa', password: SANDBOX_PASSWORD, save: false },
    products: { accountsDetail: {} },
    timing: { pollIntervalMs: 100 },
  };
}

/** A pipeline client on a queue nobody polls yet, with the tests' payload key and these tenant weights. */
function pipelineClient(taskQueue: string, tenantWeights: Record<string, number> = {}): ConnectionsClient {
  const client = new Client({
    connection: env.connection,
    namespace: env.namespace ?? 'default',
    dataConverter: dataConverterFor({ encryption: TEST_ENCRYPTION }),
  });
  return new ConnectionsClient({
    client,
    taskQueue,
    priority: { keys: { live: 1, pipeline: 2, scheduled: 3, maintenance: 4 }, tenantWeights: new Map(Object.entries(tenantWeights)) },
  });
}

/** When Temporal handed each connection's first workflow task to the worker, in that order. */
async function dispatchOrder(client: Client, workflowIds: readonly string[]): Promise<string[]> {
  const started = await Promise.all(
    workflowIds.map(async (workflowId) => {
      const history = await client.workflow.getHandle(workflowId).fetchHistory();
      const event = history.events?.find((candidate) => candidate.workflowTaskStartedEventAttributes);
      const time = event?.eventTime;
      return { workflowId, at: Number(time?.seconds ?? 0) * 1e9 + (time?.nanos ?? 0), eventId: Number(event?.eventId ?? 0) };
    }),
  );
  return started.sort((a, b) => a.at - b.at).map((entry) => entry.workflowId);
}

async function drain(taskQueue: string, workflowIds: readonly string[]): Promise<Client> {
  const stack = await startConnectionStack(env, { taskQueue, slots: { workflowTasks: 2, activities: 2 } });
  stacks.push(stack);
  await Promise.all(workflowIds.map((workflowId) => stack.client.workflow.getHandle(workflowId).result()));
  return stack.client;
}

void describe('priority and fairness', () => {
  void it('runs a live end user before a backlog of unattended refreshes queued ahead of it, and shows its priority', async () => {
    const taskQueue = uniqueId('priority');
    const connections = pipelineClient(taskQueue);
    const customerId = uniqueId('tenant');
    const backlog: string[] = [];
    for (let index = 0; index < 24; index += 1) {
      // The unattended class's key, as a schedule would start them (live sessions here: no saved login needed).
      const { workflowId } = await connections.start(`connection-${customerId}:backlog-${index}`, liveNoMfa(customerId), { priority: 3 });
      backlog.push(workflowId);
    }
    const { workflowId: live } = await connections.start(`connection-${customerId}:live`, liveNoMfa(customerId));
    const client = await drain(taskQueue, [...backlog, live]);

    const order = await dispatchOrder(client, [...backlog, live]);
    assert.ok(
      order.indexOf(live) <= 2,
      `the live connection was dispatched at position ${order.indexOf(live)} of ${order.length}, behind ${order.indexOf(live)} queued before it`,
    );
    const state = await client.workflow.getHandle(live).query(connectionStateQuery);
    assert.deepEqual(state.priority, { key: 1, fairnessKey: customerId, fairnessWeight: 1 });
  });

  void it('shares a queue between tenants by weight: a backlog of one tenant does not starve the other', async () => {
    const taskQueue = uniqueId('fairness');
    const heavy = uniqueId('lender-a');
    const light = uniqueId('lender-b');
    const connections = pipelineClient(taskQueue, { [heavy]: 3, [light]: 1 });
    const ids = new Map<string, string>();
    // Tenant A's whole burst is queued first; B's arrives after it.
    for (const [customerId, count] of [
      [heavy, 30],
      [light, 10],
    ] as const) {
      for (let index = 0; index < count; index += 1) {
        const { workflowId } = await connections.start(`connection-${customerId}:c${index}`, liveNoMfa(customerId), { priority: 2 });
        ids.set(workflowId, customerId);
      }
    }
    const client = await drain(taskQueue, [...ids.keys()]);
    const order = await dispatchOrder(client, [...ids.keys()]);
    const firstTwenty = order.slice(0, 20).map((workflowId) => ids.get(workflowId));
    const lightShare = firstTwenty.filter((customerId) => customerId === light).length;
    // Weights 3:1 give B about a quarter of the first twenty (5), though all of A's were queued first;
    // in arrival order B would get none.
    assert.ok(
      lightShare >= 3 && lightShare <= 8,
      `tenant B got ${lightShare} of the first 20 dispatches (weights 3:1: about 5); order ${firstTwenty.join(',')}`,
    );
  });
});
