/**
 * The Python client end to end: a real Temporal dev server, the TypeScript worker (the product's
 * workflows and activities, its codec) and the sandbox over HTTP, then the pytest module
 * python/tests/e2e/ run in the venv against them, with the stack's addresses in the variables a
 * pipeline sets (and, for the key rotation's own worker processes, the sandbox's address and a prebuilt
 * workflow bundle); then a second stack whose worker keeps payloads in S3 on a real MinIO (a low
 * threshold, so results and Python's inputs both leave history) for
 * python/tests/e2e/test_payload_store_e2e.py. A pytest run that fails, skips or collects no test fails here.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { startConnectionStack, TEST_ENCRYPTION_ENV, type ConnectionStack } from '../helpers/connection-stack.js';
import { runPytest } from '../helpers/python-env.js';
import { startMinio, type MinioServer } from '../helpers/minio.js';
import { writeWorkflowBundle, type WorkflowBundleFile } from '../helpers/worker-processes.js';
import { createDevEnvironment } from '../helpers/temporal.js';


/** Low enough that a connection's input (a few hundred encrypted bytes) and its result both leave history. */
const STORE_THRESHOLD_BYTES = 256;

describe('the Python client against the TypeScript worker', () => {
  let env: TestWorkflowEnvironment;
  let stack: ConnectionStack;
  let dir: string;
  let bundle: WorkflowBundleFile;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'python-e2e-'));
    env = await createDevEnvironment();
    stack = await startConnectionStack(env);
    bundle = await writeWorkflowBundle();
  });
  after(async () => {
    await stack?.stop();
    await bundle?.remove();
    await env?.teardown();
    await rm(dir, { recursive: true, force: true });
  });

  it('starts, answers, reads, cancels and lists connections from Python, with typed errors, across a key rotation', async () => {
    await runPytest(
      dir,
      ['tests/e2e', '--ignore=tests/e2e/test_payload_store_e2e.py', '--ignore=tests/e2e/test_nexus_caller_e2e.py'],
      {
        TEMPORAL_ADDRESS: env.address,
        TEMPORAL_NAMESPACE: env.namespace ?? 'default',
        TEMPORAL_TASK_QUEUE: stack.taskQueue,
        ...TEST_ENCRYPTION_ENV,
        E2E_CUSTOMER_ID: stack.customerId,
        E2E_AGGREGATOR_BASE_URL: stack.sandboxUrl,
        E2E_WORKFLOW_BUNDLE: bundle.path,
        // As this stack's worker: no payload store.
        PAYLOAD_STORE: 'off',
      },
      10,
    );
  });

  it("reads a cached connection's result the worker kept in S3, and stores its own input there", async () => {
    let minio: MinioServer | undefined;
    let stored: ConnectionStack | undefined;
    try {
      minio = await startMinio();
      const prefix = 'temporal/python-e2e';
      stored = await startConnectionStack(env, {
        payloadStore: { kind: 's3', bucket: minio.bucket, prefix, endpoint: minio.endpoint, region: minio.region, forcePathStyle: true, credentials: minio.credentials, thresholdBytes: STORE_THRESHOLD_BYTES },
      });
      await runPytest(
        dir,
        ['tests/e2e/test_payload_store_e2e.py'],
        {
          TEMPORAL_ADDRESS: env.address,
          TEMPORAL_NAMESPACE: env.namespace ?? 'default',
          TEMPORAL_TASK_QUEUE: stored.taskQueue,
          ...TEST_ENCRYPTION_ENV,
          PAYLOAD_STORE: 's3',
          PAYLOAD_STORE_S3_BUCKET: minio.bucket,
          PAYLOAD_STORE_S3_PREFIX: prefix,
          PAYLOAD_STORE_S3_ENDPOINT: minio.endpoint,
          PAYLOAD_STORE_S3_REGION: minio.region,
          PAYLOAD_STORE_S3_FORCE_PATH_STYLE: 'true',
          PAYLOAD_STORE_THRESHOLD_BYTES: String(STORE_THRESHOLD_BYTES),
          AWS_ACCESS_KEY_ID: minio.credentials.accessKeyId,
          AWS_SECRET_ACCESS_KEY: minio.credentials.secretAccessKey,
          AWS_EC2_METADATA_DISABLED: 'true',
          E2E_CUSTOMER_ID: stored.customerId,
          E2E_SAVED_LOGIN_ID: await stored.savedLogin('no_mfa'),
        },
        1,
      );
    } finally {
      await stored?.stop();
      await minio?.stop();
    }
  });
});
