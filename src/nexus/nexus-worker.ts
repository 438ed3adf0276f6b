/**
 * The worker that serves the `connections` Nexus service for one endpoint: its own task queue (the
 * endpoint's target), the product's namespace, the handler and the relay workflows, and a data
 * converter whose codec seals what crosses the boundary under that endpoint's caller key and the
 * rest under the product's keys (boundary-codec.ts). One per endpoint, because the boundary key is
 * the endpoint's. Beside the product's workers in the same process and on the same NativeConnection.
 */
import { fileURLToPath } from 'node:url';
import type { Client } from '@temporalio/client';
import type { PayloadCodec } from '@temporalio/common';
import { Worker, type NativeConnection, type WorkerOptions } from '@temporalio/worker';
import { FAILURE_CONVERTER_PATH, PAYLOAD_CONVERTER_PATH, WORKFLOW_SANDBOX_OPTIONS } from '../bundle/workflow-code.js';
import type { PriorityPolicy } from '../contract/priority.js';
import { BoundaryCodec } from './boundary-codec.js';
import { connectionsServiceHandler } from './connections-handler.js';

const EXTENSION = new URL(import.meta.url).pathname.endsWith('.ts') ? '.ts' : '.js';
export const RELAY_WORKFLOWS_PATH = fileURLToPath(new URL(`./relay-workflow${EXTENSION}`, import.meta.url));

/** A codec that leaves payloads as they are: the product's side when its encryption is off. */
const PLAIN: PayloadCodec = { encode: (payloads) => Promise.resolve(payloads), decode: (payloads) => Promise.resolve(payloads) };

export interface ConnectionsNexusWorkerOptions {
  readonly connection: NativeConnection;
  readonly namespace: string;
  /** The endpoint's target task queue. */
  readonly taskQueue: string;
  /** Endpoint name → customer id (only this worker's endpoint needs to be there). */
  readonly endpointTenants: ReadonlyMap<string, string>;
  /** The caller's side: its codec (sealing under the endpoint's boundary key) and the key ids it opens. */
  readonly boundary: { readonly codec: PayloadCodec; readonly keyIds: readonly string[] };
  /** The product's codec (undefined: encryption off). */
  readonly productCodec: PayloadCodec | undefined;
  /** A client of the product's namespace with the product's data converter. */
  readonly productClient: Client;
  readonly productTaskQueue: string;
  /** Where book refreshes run (the unattended pool's queue when it is separate); default `productTaskQueue`. */
  readonly refreshTaskQueue?: string | undefined;
  readonly priority?: PriorityPolicy | undefined;
  /** A prebuilt bundle of RELAY_WORKFLOWS_PATH; bundled at create without. */
  readonly workflowBundle?: { readonly code: string } | undefined;
}

/**
 * The Nexus worker's data converter: the product's payload and failure converters, and the codec that
 * seals what crosses the boundary under the endpoint's caller key and the rest under the product's.
 * A replay of the relays' histories uses the same (test/nexus/connections-nexus.test.ts).
 */
export function nexusWorkerDataConverter(
  boundary: ConnectionsNexusWorkerOptions['boundary'],
  productCodec: PayloadCodec | undefined,
): NonNullable<WorkerOptions['dataConverter']> {
  return {
    payloadConverterPath: PAYLOAD_CONVERTER_PATH,
    failureConverterPath: FAILURE_CONVERTER_PATH,
    payloadCodecs: [new BoundaryCodec({ boundary: boundary.codec, boundaryKeyIds: boundary.keyIds, product: productCodec ?? PLAIN })],
  };
}

export async function createConnectionsNexusWorker(options: ConnectionsNexusWorkerOptions): Promise<Worker> {
  return await Worker.create({
    connection: options.connection,
    namespace: options.namespace,
    taskQueue: options.taskQueue,
    // The SDK's option takes ServiceHandler<any>: a typed handler widens to it.
    nexusServices: [
      connectionsServiceHandler({
        endpointTenants: options.endpointTenants,
        productClient: options.productClient,
        productTaskQueue: options.productTaskQueue,
        refreshTaskQueue: options.refreshTaskQueue,
        priority: options.priority,
      }),
    ],
    ...(options.workflowBundle ? { workflowBundle: options.workflowBundle } : { workflowsPath: RELAY_WORKFLOWS_PATH }),
    dataConverter: nexusWorkerDataConverter(options.boundary, options.productCodec),
    ...WORKFLOW_SANDBOX_OPTIONS,
  });
}
