/**
 * PAYLOAD_KEY_PROVIDER=aws-kms end to end: moto's server standing in for AWS KMS, a real dev server,
 * the real sandbox over HTTP. The worker and the pipeline client each load their settings from the
 * variables an operator sets (the SDK's credentials are handed to both, as the default chain would
 * find them), so each holds its own data key and reads the other's payloads through Decrypt; the
 * connection completes, and every payload of its raw history is envelope-v1 naming the key ARN.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type proto from '@temporalio/proto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { ConnectionsClient, connectionKey, type ConnectionResult } from '../../src/client/index.js';
import type { EncryptionSettings } from '../../src/codec/key-provider.js';
import { SANDBOX_PASSWORD } from '../../src/sandbox/scenarios.js';
import { loadClientConfig } from '../../src/settings/client.js';
import { loadWorkerConfig } from '../../src/settings/worker.js';
import { startConnectionStack, TEST_ENCRYPTION_ENV, type ConnectionStack } from '../helpers/connection-stack.js';
import { isCoreBookkeeping, isPatchMarker, payloadsIn } from '../helpers/history-payloads.js';
import { MOTO_CREDENTIALS, startMoto, type MotoServer } from '../helpers/moto.js';
import { createDevEnvironment, uniqueId } from '../helpers/temporal.js';

type HistoryEvent = proto.temporal.api.history.v1.IHistoryEvent;
const text = (bytes: Uint8Array | null | undefined) => Buffer.from(bytes ?? new Uint8Array()).toString('utf8');

/** The loaded section with moto's credentials, as the SDK's default chain would find them in AWS_ACCESS_KEY_ID. */
function withCredentials(encryption: EncryptionSettings | undefined): EncryptionSettings {
  assert.ok(encryption?.provider === 'aws-kms', 'the aws-kms section');
  return { ...encryption, aws: { ...encryption.aws, credentials: MOTO_CREDENTIALS } };
}

let moto: MotoServer;
let env: TestWorkflowEnvironment;
let stack: ConnectionStack;
let client: ConnectionsClient;
let result: ConnectionResult;
let rawEvents: HistoryEvent[];

before(async () => {
  moto = await startMoto();
  env = await createDevEnvironment();
  // The static test key stays, decrypt-only, as it would after a switch (and no local key file is made).
  // By key id: payloads still name the key ARN KMS answered.
  const variables = { TEMPORAL_ADDRESS: env.address, TEMPORAL_NAMESPACE: env.namespace ?? 'default', ...moto.variables(moto.keyUuid), PAYLOAD_STORE: 'off', ...TEST_ENCRYPTION_ENV };
  stack = await startConnectionStack(env, { encryption: withCredentials(loadWorkerConfig(variables).encryption) });
  const clientConfig = loadClientConfig({ ...variables, TEMPORAL_TASK_QUEUE: stack.taskQueue });
  client = await ConnectionsClient.connect({ ...clientConfig, encryption: withCredentials(clientConfig.encryption) });

  const workflowId = connectionKey(stack.customerId, uniqueId('aws-kms'));
  await client.startAndAwaitFirstStep(workflowId, {
    customerId: stack.customerId,
    session: { kind: 'live', institution: 'SandboxBank', username: 'no_mfa', password: SANDBOX_PASSWORD },
    products: { accountsDetail: { WithTransactions: true } },
    timing: { pollIntervalMs: 50 },
  });
  result = await client.result(workflowId);
  // env.client has no codec: what Temporal stores.
  rawEvents = (await env.client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
});

after(async () => {
  await client?.close();
  await stack?.stop();
  await env?.teardown();
  await moto?.stop();
});

describe('a connection with PAYLOAD_KEY_PROVIDER=aws-kms (moto standing in for AWS KMS)', () => {
  it("completes, its input written by the client and its result read back, each through the other's data key", () => {
    assert.equal(result.customerId, stack.customerId);
    assert.ok((result.accountsDetail?.Accounts[0]?.Transactions?.length ?? 0) > 0, 'transactions came back decrypted');
  });

  it('stores every payload of its history as envelope-v1 naming the key ARN, version 1, with the wrapped data key', () => {
    const ours = rawEvents.flatMap((event, index) => payloadsIn(event, `event ${index + 1}`)).filter((entry) => !isCoreBookkeeping(entry) && !isPatchMarker(entry));
    assert.ok(ours.length >= 5, `payloads found: ${ours.length}`);
    const fields = ours.map(({ path, payload }) => ({
      path,
      encoding: text(payload.metadata?.encoding),
      format: text(payload.metadata?.['encryption-format']),
      keyId: text(payload.metadata?.['encryption-key-id']),
      version: text(payload.metadata?.['encryption-key-version']),
    }));
    assert.deepEqual(
      fields.filter((field) => field.encoding !== 'binary/encrypted' || field.format !== 'envelope-v1' || field.keyId !== `aws-kms:${moto.keyArn}` || field.version !== '1'),
      [],
    );
    const wrapped = new Set(ours.map(({ payload }) => text(payload.metadata?.['encryption-wrapped-key'])));
    for (const key of wrapped) assert.match(key, /^[A-Za-z0-9+/]+=*$/);
    assert.equal(wrapped.size, 2, "two data keys: the client's (the input) and the worker's (the rest)");
  });
});
