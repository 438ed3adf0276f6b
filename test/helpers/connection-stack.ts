/**
 * The whole product for one test file: the real sandbox over HTTP, the real activities and a real
 * worker on a unique task queue of a real Temporal server (dev or time-skipping).
 */
import { Client, type WorkflowHandleWithFirstExecutionRunId } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { createActivities, INLINE_RESULT_LIMIT_BYTES } from '../../src/activities/connection-activities.js';
import { createBookActivities } from '../../src/activities/book-activities.js';
import { createLivePathActivities } from '../../src/activities/live-path-activities.js';
import { LiveTaskWaits } from '../../src/metrics/live-task-waits.js';
import { withLiveTaskWaits } from '../../src/worker/live-task-recording.js';
import { createBookStartActivities } from '../../src/activities/book-start-activities.js';
import { DEFAULT_PRIORITY_POLICY } from '../../src/contract/priority.js';
import { createAdmissionActivities } from '../../src/activities/admission-activities.js';
import { createBookEndActivities } from '../../src/activities/book-end-activities.js';
import { createForgetActivities } from '../../src/activities/forget-activities.js';
import { TenantPauses } from '../../src/activities/tenant-pauses.js';
import { createInputActivities } from '../../src/activities/input-activities.js';
import { createRetentionActivities } from '../../src/activities/retention-activities.js';
import { createCallbackActivities } from '../../src/activities/callback-activities.js';
import type { CallbackSettings } from '../../src/callbacks/callback-policy.js';
import type { CallbackMetrics } from '../../src/metrics/callback-metrics.js';
import { payloadStoreDriverFor } from '../../src/payload-store/external-storage.js';
import { tenantClients } from '../../src/activities/tenant-clients.js';
import { dataConverterFor, workerDataConverterFor } from '../../src/codec/data-converter.js';
import type { EncryptionKeys } from '../../src/codec/encryption-codec.js';
import { isKmsEncryption, type EncryptionSettings } from '../../src/codec/key-provider.js';
import type { PayloadStoreSettings } from '../../src/payload-store/settings.js';
import { workerDeploymentOptions } from '../../src/worker/deployment.js';
import { WorkerDeployments } from '../../src/client/deployments.js';
import { createSandbox, type Sandbox } from '../../sandbox/server.js';
import { FAULT_HEADER } from '../../sandbox/faults.js';
import type { ConnectionInputArgs } from '../../src/contract/connection/connection-input.js';
import { connectionStateQuery, type ConnectionState } from '../../src/contract/connection/connection-definitions.js';
import type { connectionWorkflow } from '../../src/workflows/connection/connection.js';
import { registerWorker } from '../../scripts/lib/suite-registry.js';
import { after, before } from 'node:test';
import { createDevEnvironment, uniqueId, waitFor } from './temporal.js';
import { productWorkflowCode } from './test-tier.js';

export interface ConnectionStack {
  readonly env: TestWorkflowEnvironment;
  readonly sandboxUrl: string;
  readonly customerId: string;
  readonly taskQueue: string;
  readonly worker: Worker;
  /** The client of `start` and `waitForState`: with the worker's codec when payloads are encrypted. */
  readonly client: Client;
  /** Every upstream request the activities made, as "METHOD /path" (real HTTP, only observed). */
  readonly upstreamCalls: string[];
  /** The worker's live tasks' waits to start, as its windows read them. */
  readonly liveStarts: LiveTaskWaits;
  /** Starts a connection on this stack's task queue, with a unique business key. */
  start(
    input: Omit<ConnectionInputArgs, 'customerId'> & { customerId?: string },
    workflowId?: string,
  ): Promise<WorkflowHandleWithFirstExecutionRunId<typeof connectionWorkflow>>;
  /** Polls the state query until `predicate` holds. */
  waitForState(workflowId: string, predicate: (state: ConnectionState) => boolean, describe: string): Promise<ConnectionState>;
  /** Creates a saved login for a sandbox scenario (no challenges), for cached connections. */
  savedLogin(username: string): Promise<string>;
  /** Every request to the service carries the sandbox's fault directive (`latency=800`, `status=503`) until cleared with undefined. */
  setServiceFault(directive: string | undefined): void;
  stop(): Promise<void>;
}

export interface ConnectionStackOptions {
  customerId?: string;
  /** Payload encryption of the worker and of `client`: the tests' fixed key unless given (keys or a KMS's settings), or 'off'. */
  encryption?: EncryptionSettings | 'off';
  /** Where the worker and `client` keep large payloads: none unless given. */
  payloadStore?: PayloadStoreSettings;
  /** The worker's completion callbacks (CALLBACK_*): none allowed unless given. */
  callbacks?: CallbackSettings;
  /** Counts the delivery attempts (aggregation_callback_deliveries): none unless given. */
  callbackMetrics?: CallbackMetrics;
  /** How long a receiver has to answer one attempt (the worker's 15 s unless given). */
  callbackAttemptTimeoutMs?: number;
  /** The worker's retention policy (RETENTION_DAYS): days per customer id; none unless given. */
  retentionDays?: Readonly<Record<string, number>>;
  /** A task queue of an earlier stack, to stand in for a restarted worker; a fresh one unless given. */
  taskQueue?: string;
  /** TOO_MANY_REQUESTS pauses the tenant through its throttle workflow, as the product's worker does (off unless asked). */
  tenantPauses?: boolean;
  /** UNATTENDED_ADMISSION of the worker: unattended connections outside a book wait for room (`window`) or not (`off`, the product's default, unless given). */
  unattendedAdmission?: 'off' | 'window';
  /** A sandbox kept beyond this stack (its saved logins survive a worker standing in for a restarted one); a fresh one, closed at stop, unless given. */
  sandbox?: Sandbox;
  /** Task slots of the worker (one of each makes the order Temporal dispatches in visible). */
  slots?: { readonly workflowTasks?: number; readonly activities?: number };
  /** Where the worker's aggregation client sends its calls, e.g. a proxy in front of the sandbox; the sandbox itself unless given. */
  serviceUrl?: string;
  /** The worker's client's Authorize timeout (AGGREGATOR_AUTHORIZE_TIMEOUT_MS); the client's default (240 s) unless given. */
  authorizeTimeoutMs?: number;
}

/**
 * The tests' stacks encrypt payloads by default, as the product does, with this fixed key: histories
 * recorded under test/workflows/histories/ stay replayable by later runs.
 */
export const TEST_ENCRYPTION: EncryptionKeys = Object.freeze({ keyId: 'test', key: Buffer.alloc(32, 0x5e), decryptionKeys: new Map() });

/** The same key as the environment variables of a worker process. */
export const TEST_ENCRYPTION_ENV = {
  PAYLOAD_ENCRYPTION_KEY: Buffer.from(TEST_ENCRYPTION.key).toString('base64'),
  PAYLOAD_ENCRYPTION_KEY_ID: TEST_ENCRYPTION.keyId,
} as const;

/** The build id of every test stack's worker (a stack standing in for a restarted worker keeps it). */
export const TEST_BUILD_ID = 'test-build';

/**
 * Makes the stack's build current on its deployment, as a first deploy does. The time-skipping test
 * server has no worker deployments (and routes to any worker): there the call is not implemented.
 */
async function makeCurrent(client: Client, taskQueue: string): Promise<void> {
  try {
    await new WorkerDeployments(client, taskQueue).setCurrent(TEST_BUILD_ID, { waitMs: 30_000 });
  } catch (error) {
    const code = (error as { cause?: { cause?: { code?: number }; code?: number } }).cause;
    if ((code?.code ?? code?.cause?.code) === 12 /* UNIMPLEMENTED */) return;
    throw error;
  }
}

export async function startConnectionStack(env: TestWorkflowEnvironment, options: ConnectionStackOptions = {}): Promise<ConnectionStack> {
  const sandbox = options.sandbox ?? (await createSandbox({ port: 0 }));
  const encryption = options.encryption === 'off' ? undefined : (options.encryption ?? TEST_ENCRYPTION);
  const customerId = options.customerId ?? uniqueId('tenant');
  const taskQueue = options.taskQueue ?? uniqueId('connections');
  const upstreamCalls: string[] = [];
  let serviceFault: string | undefined;
  const observedFetch: typeof fetch = (resource, init) => {
    const url = new URL(resource instanceof Request ? resource.url : String(resource));
    upstreamCalls.push(`${(resource instanceof Request ? resource.method : (init?.method ?? 'GET')).toUpperCase()} ${url.pathname}`);
    if (serviceFault === undefined) return fetch(resource, init);
    // The sandbox's own fault directive on every request while set: the real server answers it.
    const request = new Request(resource, init);
    request.headers.set(FAULT_HEADER, serviceFault);
    return fetch(request);
  };
  // The environment's client when payloads are plain; one with the same codec as the worker otherwise.
  const dataConverter = dataConverterFor({ encryption, payloadStore: options.payloadStore });
  const client = dataConverter ? new Client({ connection: env.connection, namespace: env.namespace ?? 'default', dataConverter }) : env.client;
  const clientFor = tenantClients({
    baseUrl: options.serviceUrl ?? sandbox.url,
    timeoutMs: 60_000,
    authorizeTimeoutMs: options.authorizeTimeoutMs,
    fetch: observedFetch,
  });
  const pauses = new TenantPauses(client, taskQueue);
  const payloadStore = options.payloadStore ? payloadStoreDriverFor(options.payloadStore) : undefined;
  const retentionDays = options.retentionDays ?? {};
  const liveStarts = new LiveTaskWaits();
  const worker = await Worker.create({
    connection: env.nativeConnection,
    namespace: env.namespace ?? 'default',
    taskQueue,
    // The product's workflow code (the run's shared bundle, else bundled now), tracing interceptors
    // included (inert: nothing here starts traced), with the sandbox's options.
    ...withLiveTaskWaits(productWorkflowCode(), liveStarts, DEFAULT_PRIORITY_POLICY.keys.live),
    activities: {
      ...createInputActivities(options.callbacks),
      ...createActivities(clientFor, {
        resultLimitBytes: options.payloadStore && options.payloadStore.kind !== 'off' ? undefined : INLINE_RESULT_LIMIT_BYTES,
        ...(options.tenantPauses ? { pauses } : {}),
      }),
      ...createForgetActivities({ temporal: client, clientFor, payloadStore }),
      ...createBookActivities({ temporal: client, pauses }),
      ...createLivePathActivities({ temporal: client, taskQueue, liveKey: DEFAULT_PRIORITY_POLICY.keys.live, own: liveStarts }),
      ...createBookStartActivities({ temporal: client }),
      ...createBookEndActivities({ temporal: client }),
      ...createAdmissionActivities({
        temporal: client,
        taskQueue,
        connectionTaskQueue: taskQueue,
        priority: DEFAULT_PRIORITY_POLICY,
        admission: options.unattendedAdmission ?? 'off',
      }),
      ...createRetentionActivities({ temporal: client, taskQueue, retentionDays: (customerId) => retentionDays[customerId] }),
      ...(options.callbacks
        ? createCallbackActivities({
            temporal: client,
            taskQueue,
            settings: options.callbacks,
            metrics: options.callbackMetrics,
            attemptTimeoutMs: options.callbackAttemptTimeoutMs,
          })
        : {}),
    },
    dataConverter: workerDataConverterFor({ encryption, payloadStore: options.payloadStore }),
    // Versioned as the product's worker is (the server refuses a pinned workflow's task from an
    // unversioned worker): one deployment per stack, named after its task queue.
    workerDeploymentOptions: workerDeploymentOptions(taskQueue, TEST_BUILD_ID),
    ...(options.slots?.workflowTasks === undefined ? {} : { maxConcurrentWorkflowTaskExecutions: options.slots.workflowTasks }),
    ...(options.slots?.activities === undefined ? {} : { maxConcurrentActivityTaskExecutions: options.slots.activities }),
  });
  const running = worker.run();
  let stopping: Promise<void> | undefined;
  // For npm test's closing replay: this worker's keys and store, and which test ran it. A KMS's
  // payloads cannot be replayed once its test stopped it: unregistered, the replay skips them.
  // Likewise a tenant's key files (static keys per tenant): its test removes them, or forgets the tenant.
  if (!isKmsEncryption(encryption) && encryption?.tenantKeyFiles === undefined)
    registerWorker({ namespace: env.namespace ?? 'default', taskQueue, encryption, payloadStore: options.payloadStore });
  await makeCurrent(client, taskQueue);

  return {
    env,
    sandboxUrl: sandbox.url,
    customerId,
    taskQueue,
    worker,
    upstreamCalls,
    liveStarts,
    client,
    start: (input, workflowId = uniqueId('connection')) =>
      client.workflow.start('connectionWorkflow', {
        taskQueue,
        workflowId,
        args: [{ customerId, ...input }],
      }) as Promise<WorkflowHandleWithFirstExecutionRunId<typeof connectionWorkflow>>,
    async waitForState(workflowId, predicate, describe) {
      const handle = client.workflow.getHandle(workflowId);
      let last: ConnectionState | undefined;
      try {
        await waitFor(
          async () => {
            last = await handle.query(connectionStateQuery);
            return predicate(last);
          },
          { timeoutMs: 30_000, describe },
        );
      } catch (error) {
        const summary = last && {
          ...last,
          challengeSet: last.challengeSet && { id: last.challengeSet.id, types: last.challengeSet.challenges.map((c) => c.Type) },
        };
        throw new Error(`${(error as Error).message}; last state: ${JSON.stringify(summary)}`, { cause: error });
      }
      return last as ConnectionState;
    },
    async savedLogin(username) {
      const response = await fetch(`${sandbox.url}/sandbox/${encodeURIComponent(customerId)}/logins`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username }),
      });
      if (!response.ok) throw new Error(`sandbox refused to create a saved login for ${username}: ${response.status} ${await response.text()}`);
      return ((await response.json()) as { LoginId: string }).LoginId;
    },
    setServiceFault(directive) {
      serviceFault = directive;
    },
    // Once: a test that stands in a restarted worker stops this stack before its file's `after` does.
    stop() {
      stopping ??= (async () => {
        worker.shutdown();
        await running;
        payloadStore?.close();
        if (options.sandbox === undefined) await sandbox.close();
      })();
      return stopping;
    },
  };
}

/**
 * A dev server and a connection stack for one test file: started before its tests, stopped after.
 * The stack is read once `before` has run: `const current = connectionStackOfFile(); ... current.stack.start(...)`.
 */
export function connectionStackOfFile(options: ConnectionStackOptions = {}): { readonly stack: ConnectionStack; readonly env: TestWorkflowEnvironment } {
  let env: TestWorkflowEnvironment | undefined;
  let stack: ConnectionStack | undefined;
  before(async () => {
    env = await createDevEnvironment();
    stack = await startConnectionStack(env, options);
  });
  after(async () => {
    await stack?.stop();
    await env?.teardown();
  });
  const started = <T>(value: T | undefined, what: string): T => {
    if (value === undefined) throw new Error(`the connection stack's ${what} is read before the file's before() hook ran`);
    return value;
  };
  return {
    get stack() {
      return started(stack, 'stack');
    },
    get env() {
      return started(env, 'environment');
    },
  };
}
