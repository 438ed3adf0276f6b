/**
 * The end of `npm test`: every history of the product's workflow types that the suite's tests wrote
 * on the shared dev server, replayed with Worker.runReplayHistories against this checkout's workflow
 * code, the code that wrote them (the suite runs no other build). That proves the Pinned connections
 * replay on the build they started on, and the AutoUpgrade retention and forget workflows on the
 * current one, which here is the same code.
 *
 * Each history is replayed as its worker ran it: this checkout's workflow bundle, interceptors and
 * sandbox options, and the worker's data converter with the encryption keys and payload store that
 * worker had (scripts/lib/suite-registry.ts, written by the test helpers). Keys matter beyond
 * decoding: a worker's codec turns a message it cannot decrypt into a marker the workflow refuses,
 * so only the worker's own keys reproduce what the workflow saw. No versioning (deployment) options:
 * a replayer polls nothing.
 *
 * What is not replayed is counted with its reason, never dropped silently:
 * - a history that never completed a workflow task (started on a queue no worker polled): nothing to replay;
 * - a history whose large payloads sit in a payload store its test has since deleted (or a MinIO it stopped);
 * - a history of a task queue no helper registered, unless every encrypted payload in it opens with
 *   the tests' fixed key (then it is replayed with that key: its worker wrote under it);
 * - a history deleted (forget) between the listing and the fetch.
 * Workflows of other types (the helpers' echo, the payload-store fixtures, the dev server's own
 * namespace probe) are not the product's: they are counted apart.
 */
import type { Connection } from '@temporalio/client';
import { isGrpcServiceError } from '@temporalio/client';
import type { Payload } from '@temporalio/common';
import proto from '@temporalio/proto';
import { Worker, type ReplayWorkerOptions } from '@temporalio/worker';
import { DeterminismViolationError } from '@temporalio/workflow';
import { existsSync } from 'node:fs';
import { replayDataConverterFor, workerDataConverterFor } from '../../src/codec/data-converter.js';
import { EncryptionCodec, isEncrypted, KEY_ID_METADATA_KEY, type EncryptionKeys } from '../../src/codec/encryption-codec.js';
import { tracingWorkerOptions } from '../../src/tracing/worker-tracing.js';
import { WORKFLOW_SANDBOX_OPTIONS } from '../../src/bundle/workflow-code.js';
import * as productWorkflows from '../../src/workflows/index.js';
import type { RegisteredWorker } from './suite-registry.js';

type History = proto.temporal.api.history.v1.IHistory;

const { EventType } = proto.temporal.api.enums.v1;
const REFERENCE_MESSAGE_TYPE = 'temporal.api.sdk.v1.ExternalStorageReference';
const decoder = new TextDecoder();
const GRPC_NOT_FOUND = 5;

/**
 * The product's workflow types: what the worker registers, every function src/workflows/index.ts
 * exports (a workflow's type is its export's name). Importing it outside the sandbox runs no workflow.
 */
export const PRODUCT_WORKFLOW_TYPES: readonly string[] = Object.entries(productWorkflows)
  .filter(([, value]) => typeof value === 'function')
  .map(([name]) => name)
  .sort();

export interface ExecutionRef {
  readonly namespace: string;
  readonly workflowId: string;
  readonly runId: string;
  readonly workflowType: string;
  readonly taskQueue: string;
}

/** The data converter settings of the worker a history is replayed as. */
export interface PayloadConfig {
  readonly encryption: EncryptionKeys | undefined;
  /** Histories recorded before encryption: their unsealed payloads are read (replayDataConverterFor); otherwise refused as their worker did. */
  readonly writtenBeforeEncryption?: boolean | undefined;
  /** A local payload store directory that still exists, for histories holding references. */
  readonly storeDirectory: string | undefined;
}

/** What the registry says of one namespace and task queue. */
export type QueueWorkers =
  | { readonly kind: 'registered'; readonly config: PayloadConfig; readonly testFiles: readonly string[]; readonly storeGone: string | undefined }
  | { readonly kind: 'conflict'; readonly testFiles: readonly string[]; readonly detail: string }
  | { readonly kind: 'unregistered' };

export const SKIP = {
  neverRan: 'never ran a workflow task',
  storeGone: 'large payloads in a payload store that is gone',
  keysUnknown: 'worker keys unknown',
  conflictingKeys: 'workers of one task queue with different keys under one key id',
  deleted: 'deleted before it was fetched',
  fetchFailed: 'history fetch failed',
} as const;
export type SkipReason = (typeof SKIP)[keyof typeof SKIP];

export type Decision = { readonly replay: PayloadConfig; readonly inferred: boolean } | { readonly skip: SkipReason; readonly detail: string };

/** Merges the payload settings of every worker registered on `namespace`/`taskQueue`. */
export function queueWorkers(
  workers: readonly RegisteredWorker[],
  namespace: string,
  taskQueue: string,
  exists: (path: string) => boolean = existsSync,
): QueueWorkers {
  const mine = workers.filter((worker) => worker.namespace === namespace && worker.taskQueue === taskQueue);
  if (mine.length === 0) return { kind: 'unregistered' };
  const testFiles = [...new Set(mine.flatMap((worker) => (worker.testFile ? [worker.testFile] : [])))].sort();
  // Every key any of them had: a payload is decoded with the key its metadata names.
  const keys = new Map<string, Uint8Array>();
  let current: string | undefined;
  for (const { encryption } of mine) {
    if (!encryption) continue;
    current ??= encryption.keyId;
    for (const [id, key] of [[encryption.keyId, encryption.key] as const, ...(encryption.decryptionKeys ?? new Map<string, Uint8Array>())]) {
      const known = keys.get(id);
      if (known && !Buffer.from(known).equals(Buffer.from(key))) return { kind: 'conflict', testFiles, detail: `key id "${id}" with two different keys` };
      keys.set(id, key);
    }
  }
  const encryption: EncryptionKeys | undefined =
    current === undefined
      ? undefined
      : { keyId: current, key: keys.get(current) ?? new Uint8Array(), decryptionKeys: new Map([...keys].filter(([id]) => id !== current)) };
  const stores = mine.map((worker) => worker.payloadStore).filter((store) => store.kind !== 'off');
  const storeDirectory = stores.flatMap((store) => (store.kind === 'local' && exists(store.directory) ? [store.directory] : []))[0];
  const storeGone =
    storeDirectory !== undefined || stores.length === 0
      ? undefined
      : stores.some((store) => store.kind === 'local')
        ? 'its test deleted the local payload store'
        : 'its S3 payload store (MinIO) stopped with its test';
  return { kind: 'registered', config: { encryption, storeDirectory }, testFiles, storeGone };
}

export interface HistoryFacts {
  readonly workflowTaskCompleted: boolean;
  /** External Storage references: payloads kept outside the history. */
  readonly references: number;
  readonly encrypted: readonly Payload[];
}

function isPayload(value: object): value is Payload {
  const candidate = value as { data?: unknown; metadata?: unknown };
  return candidate.data instanceof Uint8Array && typeof candidate.metadata === 'object' && candidate.metadata !== null;
}

function isReference(payload: Payload): boolean {
  const messageType = payload.metadata?.messageType;
  return messageType !== undefined && messageType !== null && decoder.decode(messageType) === REFERENCE_MESSAGE_TYPE;
}

/** What decides whether and how a history can be replayed: read from its raw (undecoded) events. */
export function historyFacts(history: History): HistoryFacts {
  const encrypted: Payload[] = [];
  let references = 0;
  const walk = (value: unknown): void => {
    if (value === null || typeof value !== 'object' || value instanceof Uint8Array) return;
    if (isPayload(value)) {
      if (isReference(value)) references++;
      else if (isEncrypted(value)) encrypted.push(value);
      return;
    }
    for (const child of Object.values(value)) walk(child);
  };
  const events = history.events ?? [];
  for (const event of events) walk(event);
  return { workflowTaskCompleted: events.some((event) => event.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED), references, encrypted };
}

function keyIdOf(payload: Payload): string {
  const raw = payload.metadata?.[KEY_ID_METADATA_KEY];
  return raw ? decoder.decode(raw) : '(none)';
}

/** Whether, and with which data converter settings, one history is replayed. */
export async function decide(workers: QueueWorkers, facts: HistoryFacts, fallbackEncryption: EncryptionKeys): Promise<Decision> {
  if (!facts.workflowTaskCompleted) return { skip: SKIP.neverRan, detail: 'no workflow task completed: no worker ran it' };
  if (workers.kind === 'conflict') return { skip: SKIP.conflictingKeys, detail: workers.detail };
  if (workers.kind === 'registered') {
    if (facts.references > 0 && workers.config.storeDirectory === undefined) {
      return { skip: SKIP.storeGone, detail: `${facts.references} payload(s) outside the history; ${workers.storeGone ?? 'its worker had no payload store'}` };
    }
    return { replay: workers.config, inferred: false };
  }
  // No helper registered its worker: replayable only if its worker demonstrably had the tests' key.
  if (facts.references > 0) return { skip: SKIP.storeGone, detail: `${facts.references} payload(s) outside the history, in a store no helper registered` };
  const codec = new EncryptionCodec(fallbackEncryption);
  const foreign = new Set<string>();
  for (const payload of facts.encrypted) {
    try {
      await codec.decode([payload]);
    } catch {
      foreign.add(keyIdOf(payload));
    }
  }
  if (foreign.size > 0)
    return {
      skip: SKIP.keysUnknown,
      detail: `no helper registered its worker, and key id(s) ${[...foreign].sort().join(', ')} do not open with the tests' key`,
    };
  return { replay: { encryption: fallbackEncryption, storeDirectory: undefined }, inferred: true };
}

export interface Problem {
  readonly ref: ExecutionRef;
  readonly testFiles: readonly string[];
  readonly message: string;
}

export interface SuiteReplayReport {
  readonly replayed: number;
  /** Of `replayed`: task queues no helper registered, replayed with the tests' key. */
  readonly inferred: number;
  readonly nondeterminism: readonly Problem[];
  /** Replay failures other than nondeterminism (a workflow task failing in replay, the replayer stopping), on the first try and again alone. */
  readonly replayErrors: readonly Problem[];
  /** Failed otherwise than by nondeterminism on the first try and replayed alone on a second (the first try's message). */
  readonly passedOnRetry: readonly Problem[];
  readonly skipped: ReadonlyMap<SkipReason, readonly Problem[]>;
  /** Workflows of types that are not the product's, by type. */
  readonly otherTypes: ReadonlyMap<string, number>;
}

export interface ReplayItem {
  readonly ref: ExecutionRef;
  readonly testFiles: readonly string[];
  readonly history: History;
}

export function replayOptions(code: string, config: PayloadConfig, replayName: string): ReplayWorkerOptions {
  return {
    workflowBundle: { code },
    ...tracingWorkerOptions(undefined, { bundled: true }),
    ...WORKFLOW_SANDBOX_OPTIONS,
    dataConverter: (config.writtenBeforeEncryption ? replayDataConverterFor : workerDataConverterFor)({
      encryption: config.encryption,
      payloadStore: config.storeDirectory ? { kind: 'local', directory: config.storeDirectory } : undefined,
    }),
    replayName,
  };
}

function firstLine(message: string, max = 600): string {
  const line = message.split('\n', 1)[0] ?? '';
  return line.length > max ? `${line.slice(0, max - 3)}...` : line;
}

/**
 * Replays `items` (one data converter for all) and says how each ended: `error` undefined when it
 * replayed, a DeterminismViolationError for nondeterminism, anything else otherwise. Every item
 * the replayer took gets exactly one call.
 */
export async function replayItems(
  code: string,
  config: PayloadConfig,
  items: AsyncIterable<ReplayItem> | Iterable<ReplayItem>,
  onResult: (item: ReplayItem, error: Error | undefined) => void,
): Promise<void> {
  const pending: ReplayItem[] = [];
  async function* histories() {
    for await (const item of items) {
      pending.push(item);
      yield { workflowId: item.ref.workflowId, history: item.history };
    }
  }
  try {
    for await (const result of Worker.runReplayHistories(replayOptions(code, config, 'suite-histories'), histories())) {
      // One history at a time: the replayer takes the next only after this result was read.
      const item = pending.shift();
      if (item) onResult(item, result.error);
    }
  } catch (error) {
    const stopped = new Error(`the replayer stopped: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`, { cause: error });
    for (const item of pending.splice(0)) onResult(item, stopped);
    return;
  }
  for (const item of pending.splice(0)) onResult(item, new Error('the replayer returned no result for it'));
}

/** A history that failed otherwise than by nondeterminism, with the data converter settings it was replayed with. */
export interface FirstFailure {
  readonly item: ReplayItem;
  readonly config: PayloadConfig;
  readonly error: Error;
}

/** Replays one history in a replayer of its own; resolves to its error, undefined when it replayed. */
export async function replayAlone(code: string, config: PayloadConfig, item: ReplayItem): Promise<Error | undefined> {
  let outcome: Error | undefined = new Error('the replayer returned no result for it');
  await replayItems(code, config, [item], (_, error) => (outcome = error));
  return outcome;
}

/**
 * Each history that failed otherwise than by nondeterminism, replayed once more alone. The same
 * history under the same code replays the same way, so a failure that does not come back was the
 * machine's (a workflow task outlasting the sandbox's execution timeout beside other replays, a
 * replayer that stopped), not the code's: it is reported, and does not fail the run. One that fails
 * again fails it, with both messages. Nondeterminism is never retried.
 */
export async function retryAlone(
  failures: readonly FirstFailure[],
  replay: (item: ReplayItem, config: PayloadConfig) => Promise<Error | undefined>,
): Promise<{ failed: Problem[]; passedOnRetry: Problem[] }> {
  const failed: Problem[] = [];
  const passedOnRetry: Problem[] = [];
  for (const { item, config, error } of failures) {
    const first = firstLine(error.message);
    const again = await replay(item, config);
    const problem = { ref: item.ref, testFiles: item.testFiles };
    if (again === undefined) passedOnRetry.push({ ...problem, message: first });
    else {
      const second = firstLine(again.message);
      failed.push({ ...problem, message: second === first ? `${first} (again when replayed alone)` : `${first}; replayed alone: ${second}` });
    }
  }
  return { failed, passedOnRetry };
}

export async function listNamespaces(connection: Connection): Promise<string[]> {
  const names: string[] = [];
  let nextPageToken: Uint8Array | undefined;
  do {
    const page = await connection.workflowService.listNamespaces({ pageSize: 100, nextPageToken });
    for (const entry of page.namespaces ?? []) {
      const name = entry.namespaceInfo?.name;
      if (name && name !== 'temporal-system' && entry.namespaceInfo?.state !== proto.temporal.api.enums.v1.NamespaceState.NAMESPACE_STATE_DELETED)
        names.push(name);
    }
    nextPageToken = page.nextPageToken?.length ? page.nextPageToken : undefined;
  } while (nextPageToken);
  return names.sort();
}

/** Every execution in `namespace`, running and closed, through visibility. */
export async function listExecutions(connection: Connection, namespace: string): Promise<ExecutionRef[]> {
  const refs: ExecutionRef[] = [];
  let nextPageToken: Uint8Array | undefined;
  do {
    const page = await connection.workflowService.listWorkflowExecutions({ namespace, pageSize: 1000, nextPageToken, query: '' });
    for (const info of page.executions ?? []) {
      refs.push({
        namespace,
        workflowId: info.execution?.workflowId ?? '',
        runId: info.execution?.runId ?? '',
        workflowType: info.type?.name ?? '',
        taskQueue: info.taskQueue ?? '',
      });
    }
    nextPageToken = page.nextPageToken?.length ? page.nextPageToken : undefined;
  } while (nextPageToken);
  return refs;
}

export async function fetchHistory(connection: Connection, ref: ExecutionRef): Promise<History> {
  const events: proto.temporal.api.history.v1.IHistoryEvent[] = [];
  let nextPageToken: Uint8Array | undefined;
  do {
    const page = await connection.workflowService.getWorkflowExecutionHistory({
      namespace: ref.namespace,
      execution: { workflowId: ref.workflowId, runId: ref.runId },
      nextPageToken,
    });
    events.push(...(page.history?.events ?? []));
    nextPageToken = page.nextPageToken?.length ? page.nextPageToken : undefined;
  } while (nextPageToken);
  return { events };
}

export interface SuiteReplayOptions {
  readonly connection: Connection;
  /** The product's workflow bundle (scripts/lib/workflow-bundle.ts). */
  readonly code: string;
  readonly workers: readonly RegisteredWorker[];
  /** The tests' fixed key, for task queues no helper registered. */
  readonly fallbackEncryption: EncryptionKeys;
  /** Every namespace of the server unless given. */
  readonly namespaces?: readonly string[] | undefined;
  /** Only these executions (a test's own); all unless given. */
  readonly include?: ((ref: ExecutionRef) => boolean) | undefined;
  readonly exists?: ((path: string) => boolean) | undefined;
}

/** Lists, fetches and replays; see the module comment. */
export async function replaySuite(options: SuiteReplayOptions): Promise<SuiteReplayReport> {
  const { connection, code, workers, fallbackEncryption } = options;
  const namespaces = options.namespaces ?? (await listNamespaces(connection));
  const otherTypes = new Map<string, number>();
  const skipped = new Map<SkipReason, Problem[]>();
  const nondeterminism: Problem[] = [];
  const firstFailures: FirstFailure[] = [];
  let replayed = 0;
  let inferred = 0;
  const skip = (ref: ExecutionRef, testFiles: readonly string[], reason: SkipReason, message: string) => {
    const list = skipped.get(reason) ?? [];
    list.push({ ref, testFiles, message });
    skipped.set(reason, list);
  };

  // Executions grouped by the data converter they replay with; queues no helper registered last, in one group.
  const queues = new Map<string, QueueWorkers>();
  const groups = new Map<string, { workers: QueueWorkers; refs: ExecutionRef[] }>();
  for (const namespace of namespaces) {
    for (const ref of await listExecutions(connection, namespace)) {
      if (!PRODUCT_WORKFLOW_TYPES.includes(ref.workflowType)) {
        otherTypes.set(ref.workflowType, (otherTypes.get(ref.workflowType) ?? 0) + 1);
        continue;
      }
      if (options.include && !options.include(ref)) continue;
      const queueKey = JSON.stringify([ref.namespace, ref.taskQueue]);
      let queue = queues.get(queueKey);
      if (!queue) {
        queue = queueWorkers(workers, ref.namespace, ref.taskQueue, options.exists);
        queues.set(queueKey, queue);
      }
      const groupKey = queue.kind === 'registered' ? JSON.stringify(configKey(queue.config)) : queue.kind;
      const group = groups.get(groupKey) ?? { workers: queue, refs: [] };
      group.refs.push(ref);
      groups.set(groupKey, group);
    }
  }

  for (const group of groups.values()) {
    const config: PayloadConfig = group.workers.kind === 'registered' ? group.workers.config : { encryption: fallbackEncryption, storeDirectory: undefined };
    async function* items(): AsyncGenerator<ReplayItem> {
      for (const ref of group.refs) {
        const queue = queues.get(JSON.stringify([ref.namespace, ref.taskQueue])) ?? { kind: 'unregistered' as const };
        const testFiles = queue.kind === 'unregistered' ? [] : queue.testFiles;
        let history: History;
        try {
          history = await fetchHistory(connection, ref);
        } catch (error) {
          if (isGrpcServiceError(error) && Number(error.code) === GRPC_NOT_FOUND) skip(ref, testFiles, SKIP.deleted, firstLine(error.message));
          else skip(ref, testFiles, SKIP.fetchFailed, firstLine(error instanceof Error ? error.message : String(error)));
          continue;
        }
        const decision = await decide(queue, historyFacts(history), fallbackEncryption);
        if ('skip' in decision) {
          skip(ref, testFiles, decision.skip, decision.detail);
          continue;
        }
        if (decision.inferred) inferred++;
        yield { ref, testFiles, history };
      }
    }
    await replayItems(code, config, items(), (item, error) => {
      replayed++;
      if (error === undefined) return;
      if (error instanceof DeterminismViolationError) nondeterminism.push({ ref: item.ref, testFiles: item.testFiles, message: firstLine(error.message) });
      else firstFailures.push({ item, config, error });
    });
  }
  const { failed: replayErrors, passedOnRetry } = await retryAlone(firstFailures, (item, config) => replayAlone(code, config, item));
  return { replayed, inferred, nondeterminism, replayErrors, passedOnRetry, skipped, otherTypes };
}

function configKey(config: PayloadConfig): unknown {
  const keys = config.encryption
    ? [
        [config.encryption.keyId, Buffer.from(config.encryption.key).toString('base64')],
        ...[...(config.encryption.decryptionKeys ?? new Map<string, Uint8Array>())].map(([id, key]) => [id, Buffer.from(key).toString('base64')]),
      ]
    : [];
  return { keys, store: config.storeDirectory ?? null };
}

function describeRef({ ref, testFiles }: Problem): string {
  const test = testFiles.length > 0 ? `test ${testFiles.join(', ')}` : 'test unknown (no helper registered its task queue)';
  return `${ref.namespace}/${ref.workflowId} run ${ref.runId} (${ref.workflowType}, task queue ${ref.taskQueue}, ${test})`;
}

/** The one line `npm test` ends with. */
export function summaryLine(report: SuiteReplayReport): string {
  const reasons = [...report.skipped].map(([reason, list]) => `${list.length} ${reason}`);
  const skippedCount = [...report.skipped.values()].reduce((sum, list) => sum + list.length, 0);
  const retried = report.passedOnRetry.length > 0 ? ` (${report.passedOnRetry.length} of them only when replayed alone)` : '';
  return (
    `replay: ${report.replayed} histories of the suite replayed${retried}, ${report.nondeterminism.length} nondeterminism errors, ` +
    `${report.replayErrors.length} other failures, ${skippedCount} skipped (${reasons.length > 0 ? reasons.join(', ') : 'none'})`
  );
}

/** The details above the summary line: every failure, and what was skipped or left out and why. */
export function detailLines(report: SuiteReplayReport, { verbose = false }: { verbose?: boolean } = {}): string[] {
  const lines: string[] = [];
  for (const problem of report.nondeterminism) lines.push(`replay: NONDETERMINISM ${describeRef(problem)}: ${problem.message}`);
  for (const problem of report.replayErrors) lines.push(`replay: FAILED ${describeRef(problem)}: ${problem.message}`);
  for (const problem of report.passedOnRetry)
    lines.push(`replay: replayed only alone, on a second try: ${describeRef(problem)}; the first try failed: ${problem.message}`);
  for (const [reason, list] of report.skipped) {
    // Reasons that say something may be wrong are listed one by one; the expected ones only when asked.
    const itemized = verbose || reason === SKIP.fetchFailed || reason === SKIP.keysUnknown || reason === SKIP.conflictingKeys;
    if (itemized) for (const problem of list) lines.push(`replay: skipped ${describeRef(problem)}: ${reason}: ${problem.message}`);
    else {
      const files = [...new Set(list.flatMap((problem) => problem.testFiles))].sort();
      lines.push(`replay: skipped ${list.length} (${reason})${files.length > 0 ? ` from ${files.join(', ')}` : ''}`);
    }
  }
  if (report.inferred > 0)
    lines.push(
      `replay: ${report.inferred} of the replayed came from task queues no helper registered; every encrypted payload in them opened with the tests' key`,
    );
  if (report.otherTypes.size > 0) {
    const types = [...report.otherTypes].sort(([a], [b]) => a.localeCompare(b)).map(([type, count]) => `${type} ${count}`);
    lines.push(`replay: not the product's workflow types, left out: ${types.join(', ')}`);
  }
  return lines;
}
