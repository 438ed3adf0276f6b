/**
 * `npm start`'s demo caller of the `connections` Nexus service (docs/nexus.md): the namespace
 * `lender-demo` and the endpoint `lender-demo-connections` into the product's namespace, its target
 * the task queue of the worker's Nexus worker for it; the worker maps it to the stack's tenant
 * (NEXUS_ENDPOINT_TENANTS) and seals what crosses it under a demo caller key generated once into the
 * cache (NEXUS_ENDPOINT_KEY_FILES; the demo caller's codec uses the same file). Left alone when
 * NEXUS_ENDPOINT_TENANTS is already set.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Connection } from '@temporalio/client';
import { nexusTaskQueueOf } from '../../src/settings/nexus.js';
import { nexusEndpointCommand, prepareNexusCaller } from './nexus-endpoints.js';

export const DEMO_CALLER_NAMESPACE = 'lender-demo';
export const DEMO_ENDPOINT = 'lender-demo-connections';

export interface DemoNexusCaller {
  /** What the worker's environment gets (nothing when the developer set NEXUS_ENDPOINT_TENANTS). */
  readonly env: NodeJS.ProcessEnv;
  /** For the stack's summary. */
  readonly line: string;
}

export async function prepareDemoNexusCaller(options: {
  address: string;
  productNamespace: string;
  taskQueue: string;
  customerId: string;
  cacheDir: string;
  encrypted: boolean;
  env: NodeJS.ProcessEnv;
}): Promise<DemoNexusCaller> {
  if (options.env.NEXUS_ENDPOINT_TENANTS)
    return { env: {}, line: `  Nexus             NEXUS_ENDPOINT_TENANTS=${options.env.NEXUS_ENDPOINT_TENANTS} (yours; no demo caller)` };
  const target = { name: DEMO_ENDPOINT, targetNamespace: options.productNamespace, targetTaskQueue: nexusTaskQueueOf(options.taskQueue, DEMO_ENDPOINT) };
  const connection = await Connection.connect({ address: options.address });
  try {
    await prepareNexusCaller(connection, { ...target, callerNamespace: DEMO_CALLER_NAMESPACE });
  } finally {
    await connection.close();
  }
  const keyFile = join(options.cacheDir, 'nexus-lender-demo.key');
  if (options.encrypted && !existsSync(keyFile)) writeFileSync(keyFile, `lender-demo:${randomBytes(32).toString('base64')}\n`, { mode: 0o600 });
  return {
    env: {
      NEXUS_ENDPOINT_TENANTS: `${DEMO_ENDPOINT}=${options.customerId}`,
      ...(options.encrypted ? { NEXUS_ENDPOINT_KEY_FILES: `${DEMO_ENDPOINT}=${keyFile}` } : {}),
    },
    line:
      `  Nexus             endpoint ${DEMO_ENDPOINT} → tenant ${options.customerId}, for callers in namespace ${DEMO_CALLER_NAMESPACE}` +
      (options.encrypted ? `; the caller's key: ${keyFile}` : '') +
      `\n                    (the same with the CLI: ${nexusEndpointCommand(target, options.address)})`,
  };
}
