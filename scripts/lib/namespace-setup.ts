/**
 * A namespace ready for connections on a server we started (the dev server, prod:check's production
 * server): registered, our custom search attributes added through the operator service, and proven
 * usable by starting (and terminating) a workflow that sets all of them, since the frontend's
 * namespace cache learns of both only after a refresh.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { Client, type Connection } from '@temporalio/client';
import { TypedSearchAttributes } from '@temporalio/common';
import { msToTs } from '../../src/sdk/internals.js';
import proto from '@temporalio/proto';
import { CONNECTION_SEARCH_ATTRIBUTES } from '../../src/contract/search-attributes.js';

const { IndexedValueType } = proto.temporal.api.enums.v1;

export class NamespaceSetupError extends Error {
  override readonly name = 'NamespaceSetupError';
}

const alreadyExists = (error: unknown) => /already exists/i.test(error instanceof Error ? error.message : String(error));

/** Registers `namespace` with our search attributes and waits until a start carrying them is accepted; lists them. */
export async function prepareNamespace(connection: Connection, namespace: string, timeoutMs: number): Promise<string> {
  try {
    await connection.workflowService.registerNamespace({ namespace, workflowExecutionRetentionPeriod: msToTs('1 day') });
  } catch (error) {
    if (!alreadyExists(error)) throw error;
  }
  const wanted = Object.fromEntries(
    CONNECTION_SEARCH_ATTRIBUTES.map(({ name, type }) => [
      name,
      IndexedValueType[`INDEXED_VALUE_TYPE_${TypedSearchAttributes.toMetadataType(type).toUpperCase()}` as keyof typeof IndexedValueType],
    ]),
  );
  const client = new Client({ connection, namespace });
  const deadline = Date.now() + timeoutMs;
  let added = false;
  let lastError = '';
  while (Date.now() < deadline) {
    try {
      if (!added) {
        try {
          await connection.operatorService.addSearchAttributes({ namespace, searchAttributes: wanted });
        } catch (error) {
          if (!alreadyExists(error)) throw error;
        }
        added = true;
      }
      const handle = await client.workflow.start('namespaceProbe', {
        taskQueue: 'namespace-probe',
        workflowId: `namespace-probe-${Date.now()}`,
        typedSearchAttributes: CONNECTION_SEARCH_ATTRIBUTES.map((key) => ({ key, value: 'probe' })),
      });
      await handle.terminate('namespace setup: search attribute probe');
      const listed = await connection.operatorService.listSearchAttributes({ namespace });
      return Object.keys(wanted)
        .map((name) => `${name}=${IndexedValueType[listed.customAttributes[name] ?? 0]?.replace('INDEXED_VALUE_TYPE_', '') ?? '?'}`)
        .join(', ');
    } catch (error) {
      lastError = error instanceof Error ? error.message : String(error);
      await delay(200);
    }
  }
  throw new NamespaceSetupError(`namespace ${namespace} or its search attributes not usable within ${timeoutMs} ms: ${lastError}`);
}
