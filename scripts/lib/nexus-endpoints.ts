/**
 * Nexus endpoints on a server we started (the dev server, tests): what
 * `temporal operator nexus endpoint create --name <n> --target-namespace <ns> --target-task-queue <tq>`
 * does, through the operator service, idempotent: an endpoint of that name with the same target is
 * kept; one with another target is updated to this one.
 */
import type { Connection } from '@temporalio/client';
import { prepareNamespace } from './namespace-setup.js';

export interface NexusEndpointTarget {
  /** The endpoint's name: what callers put in createNexusServiceClient({ endpoint }). */
  readonly name: string;
  /** The handler's namespace and task queue (the Nexus worker's). */
  readonly targetNamespace: string;
  readonly targetTaskQueue: string;
  readonly description?: string | undefined;
}

/** Creates (or updates) the endpoint; its id. */
export async function ensureNexusEndpoint(connection: Connection, target: NexusEndpointTarget): Promise<string> {
  const spec = {
    name: target.name,
    target: { worker: { namespace: target.targetNamespace, taskQueue: target.targetTaskQueue } },
    ...(target.description === undefined
      ? {}
      : {
          description: { metadata: { encoding: new TextEncoder().encode('json/plain') }, data: new TextEncoder().encode(JSON.stringify(target.description)) },
        }),
  };
  const { endpoints } = await connection.operatorService.listNexusEndpoints({ name: target.name, pageSize: 1 });
  const existing = endpoints?.[0];
  if (existing?.id) {
    const worker = existing.spec?.target?.worker;
    if (worker?.namespace === target.targetNamespace && worker.taskQueue === target.targetTaskQueue) return existing.id;
    const { endpoint } = await connection.operatorService.updateNexusEndpoint({ id: existing.id, version: existing.version, spec });
    return endpoint?.id ?? existing.id;
  }
  const { endpoint } = await connection.operatorService.createNexusEndpoint({ spec });
  if (!endpoint?.id) throw new Error(`the server created Nexus endpoint ${target.name} without an id`);
  return endpoint.id;
}

/** A caller's namespace (registered, our search attributes added) and its endpoint into the product's namespace. */
export async function prepareNexusCaller(
  connection: Connection,
  options: NexusEndpointTarget & { readonly callerNamespace: string; readonly timeoutMs?: number },
): Promise<string> {
  await prepareNamespace(connection, options.callerNamespace, options.timeoutMs ?? 30_000);
  return await ensureNexusEndpoint(connection, options);
}

/** The CLI command that creates the same endpoint (docs, `npm start`'s log). */
export function nexusEndpointCommand(target: NexusEndpointTarget, address?: string): string {
  return `temporal operator nexus endpoint create${address ? ` --address ${address}` : ''} --name ${target.name} --target-namespace ${target.targetNamespace} --target-task-queue ${target.targetTaskQueue}`;
}
