/**
 * Results of any size, end to end: a real dev server, a worker and a client whose data converters
 * carry the encryption codec and the SDK's External Storage, and a workflow whose input, activity
 * result and result are large (the result 3 MB, over the server's 2 MiB payload limit). For the
 * local-directory driver and for S3 (MinIO): the workflow completes, the value reads back equal, the
 * raw history (read without codec or storage) holds no payload over 256 KiB, and what was stored is
 * ciphertext (the codecs run before the store).
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { Client } from '@temporalio/client';
import type { DataConverter, Payload } from '@temporalio/common';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { bundleWorkflowCode, DefaultLogger, Worker, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { EncryptionCodec, isEncrypted } from '../../src/codec/encryption-codec.js';
import { deserializePayload } from '../../src/payload-store/stored-payload.js';
import { HISTORY_PAYLOAD_LIMIT_BYTES, payloadStoreFor, type PayloadStore, type PayloadStoreSettings } from '../../src/payload-store/index.js';
import { startMinio, type MinioServer } from '../helpers/minio.js';
import { createDevEnvironment, uniqueId } from '../helpers/temporal.js';
import * as activities from './fixtures/large-payload-activities.js';
import type { LargePayloadInput, LargePayloadResult, largePayloadWorkflow } from './fixtures/large-payload-workflow.js';
import { largeValue } from './fixtures/large-value.js';
import { encodedSize, fetchRawHistory, isReference, payloadsIn, type RawHistory } from '../helpers/raw-history.js';

const RESULT_BYTES = 3 * 1024 * 1024;
const INPUT_PADDING_BYTES = 300 * 1024;
const workflowsPath = fileURLToPath(new URL('./fixtures/large-payload-workflow.ts', import.meta.url));

let env: TestWorkflowEnvironment;
let namespace: string;
let minio: MinioServer;
let bundle: WorkflowBundleWithSourceMap;
let directory: string;

before(async () => {
  [env, minio, bundle, directory] = await Promise.all([
    createDevEnvironment(),
    startMinio(),
    bundleWorkflowCode({ workflowsPath, logger: new DefaultLogger('ERROR') }),
    mkdtemp(join(tmpdir(), 'large-payloads-')),
  ]);
  namespace = env.namespace ?? 'default';
});

after(async () => {
  await Promise.all([env?.teardown(), minio?.stop(), directory ? rm(directory, { recursive: true, force: true }) : undefined]);
});

interface Run {
  readonly workflowId: string;
  readonly marker: string;
  readonly input: LargePayloadInput;
  readonly result: LargePayloadResult;
  readonly client: Client;
  readonly history: RawHistory;
}

/** Runs the workflow once through a worker and client configured like production's. */
async function runLargeWorkflow(store: PayloadStore, encrypted: boolean): Promise<Run> {
  const codec = encrypted ? new EncryptionCodec({ keyId: 'test', key: randomBytes(32) }) : undefined;
  const dataConverter: DataConverter = { payloadCodecs: codec ? [codec] : [], externalStorage: store.externalStorage };
  const taskQueue = uniqueId('large-payloads');
  const worker = await Worker.create({
    connection: env.nativeConnection,
    namespace,
    taskQueue,
    workflowBundle: { code: bundle.code },
    activities,
    dataConverter,
  });
  const client = new Client({ connection: env.connection, namespace, dataConverter });
  const marker = `PLAINTEXT-MARKER-${randomBytes(6).toString('hex')}`;
  const workflowId = uniqueId('large-payload');
  const input: LargePayloadInput = { marker, resultBytes: RESULT_BYTES, padding: largeValue(marker, INPUT_PADDING_BYTES) };
  const result = await worker.runUntil(client.workflow.execute<typeof largePayloadWorkflow>('largePayloadWorkflow', { taskQueue, workflowId, args: [input] }));
  return { workflowId, marker, input, result, client, history: await fetchRawHistory(env.connection, namespace, workflowId) };
}

/** How each driver's stored objects are read back for inspection. */
interface StoreUnderTest {
  readonly name: string;
  settings(): PayloadStoreSettings;
  /** The stored bytes of every object filed under the workflow id. */
  storedObjects(workflowId: string): Promise<Uint8Array[]>;
}

const localStore: StoreUnderTest = {
  name: 'the local-directory driver',
  settings: () => ({ kind: 'local', directory }),
  storedObjects: async (workflowId) => {
    const folder = join(directory, namespace, 'workflows', workflowId);
    const names = await readdir(folder).catch(() => []);
    return Promise.all(names.map((name) => readFile(join(folder, name))));
  },
};

const s3Store: StoreUnderTest = {
  name: 'the S3 driver on MinIO',
  settings: () => ({
    kind: 's3',
    bucket: minio.bucket,
    prefix: 'history-payloads',
    endpoint: minio.endpoint,
    region: minio.region,
    forcePathStyle: true,
    credentials: minio.credentials,
  }),
  storedObjects: async (workflowId) => {
    const page = await minio.client.send(new ListObjectsV2Command({ Bucket: minio.bucket, Prefix: `history-payloads/${namespace}/workflows/${workflowId}/` }));
    return Promise.all(
      (page.Contents ?? []).map(async ({ Key }) => {
        const object = await minio.client.send(new GetObjectCommand({ Bucket: minio.bucket, Key }));
        return object.Body?.transformToByteArray() ?? assert.fail(`object ${Key} has a body`);
      }),
    );
  },
};

function errorChain(error: unknown): string {
  const messages: string[] = [];
  for (let current = error; current instanceof Error; current = current.cause) messages.push(`${current.name}: ${current.message}`);
  return messages.join(' <- ');
}

for (const subject of [localStore, s3Store]) {
  void describe(`a 3 MB result through ${subject.name}, encrypted`, () => {
    let store: PayloadStore;
    let run: Run;
    before(async () => {
      store = payloadStoreFor(subject.settings()) ?? assert.fail('the settings name a store');
      run = await runLargeWorkflow(store, true);
    });
    after(() => store?.driver.close());

    void it('completes the workflow, and the client reads the 3 MB value back equal', () => {
      assert.equal(run.result.value.length, RESULT_BYTES);
      assert.ok(run.result.value === largeValue(run.marker, RESULT_BYTES), 'the value read back equals the one the activity made');
      assert.ok(run.result.padding === run.input.padding, 'the large input made the round trip too');
    });

    void it('leaves no payload over 256 KiB in the raw history, only small references to the stored ones', (t) => {
      const payloads = payloadsIn(run.history.events);
      assert.ok(payloads.length > 0);
      const largest = Math.max(...payloads.map(encodedSize));
      assert.ok(largest <= HISTORY_PAYLOAD_LIMIT_BYTES, `largest payload in history: ${largest} bytes`);
      assert.ok(largest < store.thresholdBytes, `every inline payload is under the ${store.thresholdBytes}-byte threshold (largest ${largest})`);
      // The input (stored by the client), the activity result (by the activity completion), the result (by the workflow completion).
      assert.ok(payloads.filter(isReference).length >= 3, `${payloads.filter(isReference).length} references in history`);
      assert.ok(run.history.bytes.length < 256 * 1024, `the whole history is ${run.history.bytes.length} bytes`);
      t.diagnostic(
        `${payloads.length} payloads in history, ${payloads.filter(isReference).length} of them references; largest ${largest} bytes; whole history ${run.history.bytes.length} bytes`,
      );
    });

    void it('stores ciphertext: no stored object and no history event holds the plaintext marker', async () => {
      const objects = await subject.storedObjects(run.workflowId);
      assert.ok(objects.length >= 3, `${objects.length} objects stored for the workflow`);
      for (const bytes of objects) {
        assert.ok(!Buffer.from(bytes).includes(run.marker), 'a stored object contains the plaintext marker');
        const payload: Payload = deserializePayload(bytes);
        assert.ok(isEncrypted(payload), 'each stored payload is the codec output (binary/encrypted)');
      }
      assert.ok(!run.history.bytes.includes(run.marker), 'the raw history contains the plaintext marker');
    });

    void it("forgets the workflow's payloads with deleteWorkflowPayloads: its result can no longer be read", async () => {
      const deleted = await store.driver.deleteWorkflowPayloads(run.workflowId);
      assert.ok(deleted >= 3, `${deleted} objects deleted`);
      assert.equal((await subject.storedObjects(run.workflowId)).length, 0);
      await assert.rejects(run.client.workflow.getHandle(run.workflowId).result(), (error: unknown) => {
        assert.match(errorChain(error), /StoredPayloadNotFoundError/);
        return true;
      });
    });
  });
}

void describe('a large result through the local-directory driver without an encryption codec', () => {
  void it('stores the payload as it is (the marker is readable on disk): encryption is what keeps stored payloads secret', async () => {
    const store = payloadStoreFor({ kind: 'local', directory: join(directory, 'plain') }) ?? assert.fail();
    const run = await runLargeWorkflow(store, false);
    const folder = join(directory, 'plain', namespace, 'workflows', run.workflowId);
    const objects = await Promise.all((await readdir(folder)).map((name) => readFile(join(folder, name))));
    assert.ok(
      objects.some((bytes) => bytes.includes(run.marker)),
      'the control run finds the marker, so the encrypted runs would have too',
    );
    assert.ok(Math.max(...payloadsIn(run.history.events).map(encodedSize)) <= HISTORY_PAYLOAD_LIMIT_BYTES);
  });
});
