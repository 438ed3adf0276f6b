/**
 * The `connections` Nexus service called from Python: a lender's caller workflows written with
 * temporalio's Nexus client (python/tests/e2e/nexus_caller_example.py, the docs' example, and
 * python/tests/e2e/nexus_caller_workflows.py), in the lender's own namespace, with its own data
 * converter and key (aggregation_connections.nexus), against the product side started here as in
 * test/nexus/connections-nexus.test.ts: the dev server, the connection stack (the product's key), the
 * Nexus worker built from NEXUS_ENDPOINT_TENANTS / NEXUS_ENDPOINT_KEY_FILES with the lender's
 * boundary key file, an endpoint into it (and one mapped to no tenant). Then the pytest module
 * python/tests/e2e/test_nexus_caller_e2e.py runs in the venv with all that in its variables; a run
 * that fails, skips or collects fewer tests than it holds fails here.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { Worker } from '@temporalio/worker';
import { EncryptionCodec } from '../../src/codec/encryption-codec.js';
import { SANDBOX_PASSWORD, SCENARIOS, describeScenario } from '../../sandbox/scenarios.js';
import { createConfiguredNexusWorkers } from '../../src/nexus/configured-workers.js';
import { relayWorkflowId } from '../../src/nexus/relay-ids.js';
import { ensureNexusEndpoint, prepareNexusCaller } from '../../scripts/lib/nexus-endpoints.js';
import { startConnectionStack, TEST_ENCRYPTION, TEST_ENCRYPTION_ENV, type ConnectionStack } from '../helpers/connection-stack.js';
import { runPytest } from '../helpers/python-env.js';
import { createDevEnvironment, uniqueId } from '../helpers/temporal.js';

const scenario = SCENARIOS.find((entry) => entry.username === 'security_question') ?? assert.fail('scenario');
const round = describeScenario(scenario).challengeSequence[0] ?? assert.fail('a challenge round');

/** The tests of python/tests/e2e/test_nexus_caller_e2e.py: all of them must run. */
const PYTHON_TESTS = 5;

describe("the connections Nexus service, called from a Python workflow in the lender's namespace", () => {
  let env: TestWorkflowEnvironment;
  let stack: ConnectionStack;
  let dir: string;
  let keyFile: string;
  let nexusWorker: Worker | undefined;
  let nexusRunning: Promise<void> | undefined;
  const tenant = uniqueId('lender');
  const callerNamespace = uniqueId('lender-py-ns');
  const endpoint = uniqueId('connections-nexus-py');
  const unmappedEndpoint = uniqueId('unmapped-nexus-py');

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'nexus-python-caller-'));
    env = await createDevEnvironment();
    const productNamespace = env.namespace ?? 'default';
    stack = await startConnectionStack(env, { customerId: tenant });
    // The lender's own key: the Python caller's converter seals with it, and the product is given it
    // for this endpoint only (NEXUS_ENDPOINT_KEY_FILES), as a file of one line.
    keyFile = join(dir, 'lender-boundary.key');
    await writeFile(keyFile, `lender-python-key:${randomBytes(32).toString('base64')}\n`, { mode: 0o600 });
    const [served] = await createConfiguredNexusWorkers({
      connection: env.nativeConnection,
      namespace: productNamespace,
      taskQueue: stack.taskQueue,
      nexus: { endpointTenants: new Map([[endpoint, tenant]]), keyFiles: new Map([[endpoint, keyFile]]) },
      productCodec: new EncryptionCodec(TEST_ENCRYPTION),
      productClient: stack.client,
    });
    assert.ok(served);
    nexusWorker = served.worker;
    nexusRunning = nexusWorker.run();
    await prepareNexusCaller(env.connection, { callerNamespace, name: endpoint, targetNamespace: productNamespace, targetTaskQueue: served.taskQueue });
    await ensureNexusEndpoint(env.connection, { name: unmappedEndpoint, targetNamespace: productNamespace, targetTaskQueue: served.taskQueue });
  });

  after(async () => {
    nexusWorker?.shutdown();
    await Promise.allSettled([nexusRunning]);
    await stack?.stop();
    await env?.teardown();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("starts, reads, answers and cancels connections, is refused by type, and each side's payloads stay under its own key", { timeout: 240_000 }, async () => {
    await runPytest(
      dir,
      ['tests/e2e/test_nexus_caller_e2e.py'],
      {
        TEMPORAL_ADDRESS: env.address,
        // The product's side, for the module's checks of the connections (the caller needs none of it).
        TEMPORAL_NAMESPACE: env.namespace ?? 'default',
        TEMPORAL_TASK_QUEUE: stack.taskQueue,
        ...TEST_ENCRYPTION_ENV,
        PAYLOAD_STORE: 'off',
        // The lender's side.
        NEXUS_E2E_CALLER_NAMESPACE: callerNamespace,
        NEXUS_E2E_ENDPOINT: endpoint,
        NEXUS_E2E_UNMAPPED_ENDPOINT: unmappedEndpoint,
        NEXUS_E2E_KEY_FILE: keyFile,
        NEXUS_E2E_TENANT: tenant,
        // `start`'s relay workflow in the product's namespace: this prefix and the application id.
        NEXUS_E2E_RELAY_ID_PREFIX: relayWorkflowId(tenant, ''),
        NEXUS_E2E_SCENARIO: JSON.stringify({
          institution: scenario.institution,
          username: scenario.username,
          password: SANDBOX_PASSWORD,
          answers: round.answer,
        }),
      },
      PYTHON_TESTS,
    );
  });
});
