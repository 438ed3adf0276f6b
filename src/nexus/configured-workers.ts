/**
 * The Nexus workers the product's worker process runs beside its own (NEXUS_ENDPOINT_TENANTS): one per
 * mapped endpoint, on the endpoint's target task queue, sealing what crosses the boundary under that
 * endpoint's key file (NEXUS_ENDPOINT_KEY_FILES) and everything else under the product's keys.
 */
import { readFileSync } from 'node:fs';
import type { Client } from '@temporalio/client';
import type { NativeConnection, Worker } from '@temporalio/worker';
import type { PayloadCodec } from '@temporalio/common';
import { EncryptionCodec, type EncryptionKeys } from '../codec/encryption-codec.js';
import { nexusTaskQueueOf } from '../settings/nexus.js';
import type { PriorityPolicy } from '../contract/priority.js';
import { createConnectionsNexusWorker } from './nexus-worker.js';

export class NexusKeyFileError extends Error {
  override readonly name = 'NexusKeyFileError';
}

const PLAIN: PayloadCodec = { encode: (payloads) => Promise.resolve(payloads), decode: (payloads) => Promise.resolve(payloads) };

/** A boundary key file: `<keyId>:<base64 of 32 bytes>` (one line). */
export function readBoundaryKey(endpoint: string, path: string): EncryptionKeys {
  let text: string;
  try {
    text = readFileSync(path, 'utf8').trim();
  } catch (error) {
    throw new NexusKeyFileError(`NEXUS_ENDPOINT_KEY_FILES: cannot read the key file of endpoint ${endpoint} (${path}): ${(error as Error).message}`, {
      cause: error,
    });
  }
  const colon = text.lastIndexOf(':');
  const keyId = text.slice(0, colon);
  const key = Buffer.from(text.slice(colon + 1), 'base64');
  if (colon < 1 || key.length !== 32)
    throw new NexusKeyFileError(`NEXUS_ENDPOINT_KEY_FILES: the key file of endpoint ${endpoint} (${path}) must hold <keyId>:<base64 of 32 bytes>`);
  return Object.freeze({ keyId, key, decryptionKeys: new Map() });
}

export interface ConfiguredNexusWorkersOptions {
  readonly connection: NativeConnection;
  readonly namespace: string;
  readonly taskQueue: string;
  readonly nexus: { readonly endpointTenants: ReadonlyMap<string, string>; readonly keyFiles: ReadonlyMap<string, string> };
  readonly productCodec: PayloadCodec | undefined;
  readonly productClient: Client;
  /** Where book refreshes run (config.pool.unattendedTaskQueue); default `taskQueue`. */
  readonly unattendedTaskQueue?: string | undefined;
  readonly priority?: PriorityPolicy | undefined;
}

/** One Nexus worker per mapped endpoint (none when NEXUS_ENDPOINT_TENANTS is empty), with the task queue each serves. */
export async function createConfiguredNexusWorkers(options: ConfiguredNexusWorkersOptions): Promise<{ endpoint: string; taskQueue: string; worker: Worker }[]> {
  return await Promise.all(
    [...options.nexus.endpointTenants.keys()].map(async (endpoint) => {
      const keyFile = options.nexus.keyFiles.get(endpoint);
      const key = keyFile === undefined ? undefined : readBoundaryKey(endpoint, keyFile);
      const taskQueue = nexusTaskQueueOf(options.taskQueue, endpoint);
      const worker = await createConnectionsNexusWorker({
        connection: options.connection,
        namespace: options.namespace,
        taskQueue,
        endpointTenants: new Map([[endpoint, options.nexus.endpointTenants.get(endpoint) ?? '']]),
        boundary: key ? { codec: new EncryptionCodec(key), keyIds: [key.keyId] } : { codec: PLAIN, keyIds: [] },
        productCodec: options.productCodec,
        productClient: options.productClient,
        productTaskQueue: options.taskQueue,
        refreshTaskQueue: options.unattendedTaskQueue,
        priority: options.priority,
      });
      return { endpoint, taskQueue, worker };
    }),
  );
}
