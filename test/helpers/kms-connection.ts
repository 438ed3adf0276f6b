/**
 * One connection end to end on a KMS key provider (vault-transit-history.test.ts,
 * aws-kms-history.test.ts): a real dev server, the real sandbox over HTTP, a worker and a pipeline
 * client whose `encryption` sections come from the variables an operator sets; the connection runs to
 * its result, and its raw history (what Temporal stores, no codec) is kept with its own payloads'
 * key fields.
 */
import type { Payload } from '@temporalio/common';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { ConnectionsClient, connectionKey, type ConnectionResult } from '../../src/client/index.js';
import type { EncryptionSettings } from '../../src/codec/key-provider.js';
import { SANDBOX_PASSWORD } from '../../sandbox/scenarios.js';
import { loadClientConfig } from '../../src/settings/client.js';
import { loadWorkerConfig } from '../../src/settings/worker.js';
import { startConnectionStack, TEST_ENCRYPTION_ENV, type ConnectionStack } from './connection-stack.js';
import { isCoreBookkeeping, isPatchMarker, payloadsIn } from './history-payloads.js';
import { createDevEnvironment, uniqueId } from './temporal.js';

const text = (bytes: Uint8Array | null | undefined) => Buffer.from(bytes ?? new Uint8Array()).toString('utf8');

export interface KmsConnection {
  readonly stack: ConnectionStack;
  readonly workflowId: string;
  /** The variables the worker and the client loaded (the client's task queue included). */
  readonly variables: Readonly<Record<string, string>>;
  readonly result: ConnectionResult;
  /** The completion event's result as Temporal stores it (encrypted). */
  readonly storedResult: Payload;
  /** Each payload of the history but Temporal's own bookkeeping, with its key fields as stored. */
  readonly payloads: readonly { path: string; encoding: string; format: string; keyId: string; version: string; wrappedKey: string; tenant: string }[];
  stop(): Promise<void>;
}

/**
 * Runs one connection with `variables` (the provider's PAYLOAD_* settings; the static test key stays,
 * decrypt-only, as it would after a switch, and no local key file is made). `adjust` may complete a
 * loaded section with what the settings do not carry (the tests' AWS credentials).
 */
export async function runKmsConnection(
  name: string,
  variables: Record<string, string>,
  adjust: (encryption: EncryptionSettings | undefined) => EncryptionSettings | undefined = (encryption) => encryption,
): Promise<KmsConnection> {
  const env: TestWorkflowEnvironment = await createDevEnvironment();
  let stack: ConnectionStack | undefined;
  let client: ConnectionsClient | undefined;
  const stop = async () => {
    await client?.close();
    await stack?.stop();
    await env.teardown();
  };
  try {
    const all = { TEMPORAL_ADDRESS: env.address, TEMPORAL_NAMESPACE: env.namespace ?? 'default', PAYLOAD_STORE: 'off', ...TEST_ENCRYPTION_ENV, ...variables };
    const workerEncryption = adjust(loadWorkerConfig(all).encryption);
    stack = await startConnectionStack(env, workerEncryption ? { encryption: workerEncryption } : {});
    const clientVariables = { ...all, TEMPORAL_TASK_QUEUE: stack.taskQueue };
    const clientConfig = loadClientConfig(clientVariables);
    const clientEncryption = adjust(clientConfig.encryption);
    client = await ConnectionsClient.connect(clientEncryption ? { ...clientConfig, encryption: clientEncryption } : clientConfig);
    const workflowId = connectionKey(stack.customerId, uniqueId(name));
    await client.startAndAwaitFirstStep(workflowId, {
      customerId: stack.customerId,
      session: { kind: 'live', institution: 'SandboxBank', username: 'no_mfa', password: SANDBOX_PASSWORD },
      products: { accountsDetail: { WithTransactions: true } },
      timing: { pollIntervalMs: 50 },
    });
    const result = await client.result(workflowId);
    // env.client has no codec: what Temporal stores.
    const rawEvents = (await env.client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
    const payloads = rawEvents
      .flatMap((event, index) => payloadsIn(event, `event ${index + 1}`))
      .filter((entry) => !isCoreBookkeeping(entry) && !isPatchMarker(entry))
      .map(({ path, payload }) => ({
        path,
        encoding: text(payload.metadata?.encoding),
        format: text(payload.metadata?.['encryption-format']),
        keyId: text(payload.metadata?.['encryption-key-id']),
        version: text(payload.metadata?.['encryption-key-version']),
        wrappedKey: text(payload.metadata?.['encryption-wrapped-key']),
        tenant: text(payload.metadata?.['encryption-tenant']),
      }));
    const stored = rawEvents.find((event) => event.workflowExecutionCompletedEventAttributes)?.workflowExecutionCompletedEventAttributes?.result?.payloads?.[0];
    if (!stored) throw new Error(`${workflowId}: no completion result in its history`);
    const storedResult: Payload = { metadata: stored.metadata ?? {}, data: stored.data ?? new Uint8Array() };
    return { stack, workflowId, variables: clientVariables, result, storedResult, payloads, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
