/**
 * Shared Temporal setup for tests.
 * - createDevEnvironment(): the real dev server. Under `npm test` the runner starts one shared server
 *   and exports TEMPORAL_TEST_ADDRESS; a test file run on its own starts a private one.
 * - createTimeSkippingEnvironment(): sdk-java's time-skipping test server (one per call).
 * Both have our custom search attributes registered. Visibility (list/count queries) exists only on
 * the dev server: the time-skipping server answers UNIMPLEMENTED to ListWorkflowExecutions.
 */
import { randomBytes } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { isGrpcServiceError } from '@temporalio/client';
import type { Connection } from '@temporalio/client';
import { encodeSearchAttributeIndexedValueType } from '../../src/sdk/internals.js';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { startDevEnvironment } from '../../scripts/lib/dev-environment.js';
import { prepareNamespace } from '../../scripts/lib/namespace-setup.js';
import { temporalTestServerPath } from '../../scripts/lib/temporal-binaries.js';
import { CONNECTION_SEARCH_ATTRIBUTES } from '../../src/contract/search-attributes.js';
import { loadTestConfig } from '../../scripts/lib/test-settings.js';
import { refuseInUnitTier } from './test-tier.js';

const GRPC_ALREADY_EXISTS = 6;

let runtimeInstalled = false;
/** Keeps worker logs (bundling, expected workflow failures) out of test output unless TEMPORAL_TEST_LOG_LEVEL asks. */
function installQuietRuntime(): void {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  const logger = new DefaultLogger(loadTestConfig().logLevel);
  try {
    Runtime.install({ logger });
  } catch {
    // A runtime already exists (a test installed its own): keep it.
  }
}

/**
 * Registers CONNECTION_SEARCH_ATTRIBUTES in a namespace through the operator service, one at a time so
 * that an attribute registered earlier (ALREADY_EXISTS) does not stop the others. Works on the dev
 * server and on the time-skipping server (which implements Add but not List).
 */
export async function registerSearchAttributes(connection: Connection, namespace = 'default'): Promise<void> {
  for (const { name, type } of CONNECTION_SEARCH_ATTRIBUTES) {
    const indexedValueType = encodeSearchAttributeIndexedValueType(type);
    if (indexedValueType === undefined) throw new Error(`search attribute ${name}: unknown type ${type}`);
    try {
      await connection.operatorService.addSearchAttributes({ namespace, searchAttributes: { [name]: indexedValueType } });
    } catch (error) {
      if (isGrpcServiceError(error) && Number(error.code) === GRPC_ALREADY_EXISTS) continue;
      throw error;
    }
  }
}

export interface DevEnvironmentOptions {
  /**
   * Defaults to "default". A file whose workflows read the whole namespace (a book refresh sizes its
   * window against every running refresh's) takes one of its own, `uniqueId('...')`, so the files
   * running beside it on the shared server are not in its readings.
   */
  namespace?: string;
}

const NAMESPACE_READY_TIMEOUT_MS = 30_000;

/** A real Temporal dev server: the shared one (TEMPORAL_TEST_ADDRESS) or a private in-memory one. */
export async function createDevEnvironment(options: DevEnvironmentOptions = {}): Promise<TestWorkflowEnvironment> {
  refuseInUnitTier('the Temporal dev server');
  installQuietRuntime();
  const namespace = options.namespace ?? 'default';
  const address = loadTestConfig().temporalAddress;
  if (address) {
    const env = await TestWorkflowEnvironment.createFromExistingServer({ address, namespace });
    try {
      // A namespace of the file's own (files run side by side on the shared server): registered first.
      if (namespace !== 'default') await prepareNamespace(env.connection, namespace, NAMESPACE_READY_TIMEOUT_MS);
      await registerSearchAttributes(env.connection, namespace);
    } catch (error) {
      await env.teardown();
      throw error;
    }
    return env;
  }
  return startDevEnvironment({ namespace });
}

/**
 * sdk-java's time-skipping test server: awaiting a workflow result skips its timers. It rejects an
 * upsert of an unregistered attribute ("search attribute X is not defined", the workflow task fails
 * and retries forever), so ours are registered through the operator service before it is returned.
 * Use one environment per test file and run its tests serially: skipped time is global to it.
 */
export async function createTimeSkippingEnvironment(): Promise<TestWorkflowEnvironment> {
  refuseInUnitTier('the time-skipping test server');
  installQuietRuntime();
  const env = await TestWorkflowEnvironment.createTimeSkipping({
    server: { executable: { type: 'existing-path', path: temporalTestServerPath() } },
  });
  try {
    await registerSearchAttributes(env.connection);
  } catch (error) {
    await env.teardown();
    throw error;
  }
  return env;
}

/** A workflow id or task queue no other test (or earlier run on a persistent server) uses. */
export function uniqueId(prefix: string): string {
  return `${prefix}-${Date.now().toString(36)}-${randomBytes(4).toString('hex')}`;
}

export interface WaitForOptions {
  /** Default 10 000 ms. */
  timeoutMs?: number;
  /** Default 100 ms. */
  intervalMs?: number;
  /** What is awaited, for the timeout message ("the workflow to appear in visibility"). */
  describe?: string;
}

/** What a truthy check leaves of T. */
export type Truthy<T> = Exclude<T, false | 0 | 0n | '' | null | undefined>;

/**
 * Polls `condition` until it returns a truthy value, which is returned. A throwing condition counts
 * as "not yet" (eventually consistent reads may fail transiently); its last error is the timeout
 * error's cause.
 */
export async function waitFor<T>(
  condition: () => T | Promise<T>,
  { timeoutMs = 10_000, intervalMs = 100, describe = 'condition' }: WaitForOptions = {},
): Promise<Truthy<T>> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await condition();
      if (value) return value as Truthy<T>;
      lastError = undefined;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() >= deadline) {
      const reason = lastError instanceof Error ? `; last error: ${lastError.message}` : '';
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${describe}${reason}`, { cause: lastError });
    }
    await delay(intervalMs);
  }
}
