/**
 * security:check's attack on the `connections` Nexus service (docs/nexus.md): a lender's caller
 * workflow, in its own namespace, reaching another tenant's connections through its endpoint (mapped
 * to tenant A by the worker's NEXUS_ENDPOINT_TENANTS) by naming tenant B, and through an endpoint
 * mapped to no tenant pointed at the same Nexus task queue. The caller has no codec: what is attacked
 * is the handler's tenant check (src/nexus/connections-handler.ts), not the boundary key.
 */
import { fileURLToPath } from 'node:url';
import { Client, WorkflowNotFoundError, type Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import type { ConnectionsClient } from '../../src/client/index.js';
import { bookRelayWorkflowId, relayWorkflowId } from '../../src/nexus/relay-ids.js';
import { nexusTaskQueueOf } from '../../src/settings/nexus.js';
import { ensureNexusEndpoint, prepareNexusCaller } from '../lib/nexus-endpoints.js';
import { liveInput, RIGHT_ANSWER, type AttackResult } from './attacks.js';
import type { nexusCallerTries, NexusTry, NexusTryOutcome } from './nexus-caller-workflows.js';

const EXTENSION = new URL(import.meta.url).pathname.endsWith('.ts') ? '.ts' : '.js';
const CALLER_WORKFLOWS_PATH = fileURLToPath(new URL(`./nexus-caller-workflows${EXTENSION}`, import.meta.url));

/** The run's Nexus names: tenant A's endpoint and the caller's namespace, and an endpoint mapped to no tenant. */
export interface NexusCallerSetup {
  readonly endpoint: string;
  readonly unmappedEndpoint: string;
  readonly callerNamespace: string;
  readonly tenant: string;
  /** What the product's worker process gets: the endpoint mapped to tenant A (a plain caller: no key file). */
  readonly workerEnv: Readonly<Record<string, string>>;
}

export function nexusCallerSetup(runTag: string, tenant: string): NexusCallerSetup {
  const endpoint = `security-${runTag}-lender-a`;
  return {
    endpoint,
    unmappedEndpoint: `security-${runTag}-unmapped`,
    callerNamespace: `security-${runTag}-lender-a`,
    tenant,
    workerEnv: { NEXUS_ENDPOINT_TENANTS: `${endpoint}=${tenant}` },
  };
}

export interface NexusAttackTarget {
  /** The dev server's address (the caller's worker connects on its own) and a connection to it (operator service). */
  readonly address: string;
  readonly connection: Connection;
  /** The product's namespace, task queue, client (state of B's connection) and a client without the key (describe). */
  readonly productNamespace: string;
  readonly taskQueue: string;
  readonly connections: ConnectionsClient;
  readonly raw: Client;
  readonly otherTenant: string;
  /** Tenant B's connection awaiting an answer. */
  readonly otherWorkflowId: string;
}

/** The caller's worker logs warnings only (the SDK's default prints every state change and the bundle to stdout). */
function quietRuntime(): void {
  try {
    Runtime.install({ logger: new DefaultLogger('WARN') });
  } catch {
    // Installed already: its logger stays.
  }
}

async function exists(raw: Client, workflowId: string): Promise<boolean> {
  try {
    await raw.workflow.getHandle(workflowId).describe();
    return true;
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return false;
    throw error;
  }
}

/**
 * Refused when, through endpoint A, `start`, `state` and `answer` naming tenant B (B's connection, its
 * presented challenge answered rightly) and, through the unmapped endpoint, `state` of B's connection
 * are each refused UNAUTHORIZED, and so is `refreshBook` naming B's book; B's connection still awaits
 * the same challenge; and no connection, relay or book relay exists under what `start` and `refreshBook` named.
 */
export async function nexusCallerOnOtherTenant(setup: NexusCallerSetup, target: NexusAttackTarget): Promise<AttackResult> {
  const name = "a lender's Nexus caller on another tenant's connections";
  const targetTaskQueue = nexusTaskQueueOf(target.taskQueue, setup.endpoint);
  await prepareNexusCaller(target.connection, {
    callerNamespace: setup.callerNamespace,
    name: setup.endpoint,
    targetNamespace: target.productNamespace,
    targetTaskQueue,
  });
  await ensureNexusEndpoint(target.connection, { name: setup.unmappedEndpoint, targetNamespace: target.productNamespace, targetTaskQueue });

  const before = await target.connections.getState(target.otherWorkflowId);
  const applicationOfB = target.otherWorkflowId.slice(target.otherWorkflowId.indexOf(':') + 1);
  const startedApplication = `nexus-attack-${setup.endpoint}`;
  const other = liveInput(target.otherTenant);
  const tries: NexusTry[] = [
    // Not the bank's password: the caller's history is the attacker's, in clear.
    {
      endpoint: setup.endpoint,
      operation: 'start',
      input: { applicationId: startedApplication, connection: { ...other, session: { ...other.session, password: 'nexus-attacker' } } },
    },
    { endpoint: setup.endpoint, operation: 'state', input: { applicationId: applicationOfB, customerId: target.otherTenant } },
    {
      endpoint: setup.endpoint,
      operation: 'answer',
      input: {
        applicationId: applicationOfB,
        customerId: target.otherTenant,
        answer: { challengeSetId: before.challengeSet?.id ?? RIGHT_ANSWER.challengeSetId, responses: RIGHT_ANSWER.responses },
      },
    },
    { endpoint: setup.unmappedEndpoint, operation: 'state', input: { applicationId: applicationOfB, customerId: target.otherTenant } },
    { endpoint: setup.endpoint, operation: 'refreshBook', input: { cadence: 'nightly', customerId: target.otherTenant } },
  ];

  quietRuntime();
  const native = await NativeConnection.connect({ address: target.address });
  let outcomes: NexusTryOutcome[];
  try {
    const callerTaskQueue = `${setup.callerNamespace}-pipeline`;
    const worker = await Worker.create({
      connection: native,
      namespace: setup.callerNamespace,
      taskQueue: callerTaskQueue,
      workflowsPath: CALLER_WORKFLOWS_PATH,
    });
    const caller = new Client({ connection: target.connection, namespace: setup.callerNamespace });
    outcomes = await worker.runUntil(async () => {
      return await caller.workflow.execute<typeof nexusCallerTries>('nexusCallerTries', {
        taskQueue: callerTaskQueue,
        workflowId: `${setup.callerNamespace}-tries`,
        args: [tries],
        workflowExecutionTimeout: '3 minutes',
      });
    });
  } finally {
    await native.close();
  }

  const expected = [/^tenant refused: /, /^tenant refused: /, /^tenant refused: /, /^tenant unknown: .* mapped to no tenant/, /^tenant refused: /];
  const allRefused =
    tries.length === outcomes.length && outcomes.every((outcome, index) => outcome.type === 'UNAUTHORIZED' && expected[index]?.test(outcome.message) === true);
  const after = await target.connections.getState(target.otherWorkflowId);
  const stillAwaiting = before.status === 'AwaitingAnswer' && after.status === 'AwaitingAnswer' && after.challengeSet?.id === before.challengeSet?.id;
  const startedIds = [target.otherTenant, setup.tenant].flatMap((tenant) => [
    `connection-${tenant}:${startedApplication}`,
    relayWorkflowId(tenant, startedApplication),
    bookRelayWorkflowId(tenant, 'nightly'),
  ]);
  const started = (await Promise.all(startedIds.map(async (workflowId) => ((await exists(target.raw, workflowId)) ? workflowId : undefined)))).filter(
    (id) => id !== undefined,
  );
  const labels = ['start naming B', 'state of B', 'answer to B', 'state through the unmapped endpoint', "refreshBook of B's book"];
  const seen = outcomes
    .map((outcome, index) => `${labels[index] ?? tries[index]?.operation}: ${outcome.type}${outcome.type === 'UNAUTHORIZED' ? '' : ` (${outcome.message})`}`)
    .join('; ');
  return {
    name,
    refused: allRefused && stillAwaiting && started.length === 0,
    detail: `${seen}; B's connection ${after.status}${after.challengeSet ? ` on challenge set ${after.challengeSet.id}` : ''}; ${started.length === 0 ? 'nothing started' : `started ${started.join(', ')}`}`,
  };
}
