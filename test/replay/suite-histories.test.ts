/**
 * npm test's closing replay (scripts/lib/replay-suite.ts, run by scripts/replay-suite.ts): which
 * histories it replays, with which keys and store, what it skips and why, that it finds
 * nondeterminism and names the workflow and the test file, and that a history failing otherwise is
 * replayed once more alone before it fails the run. The pieces without a server, then the
 * whole phase on a real dev server: a connection run under a key of this file's own replays only
 * because the helper registered that key, and the same history with one activity renamed is
 * reported as nondeterministic.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Connection } from '@temporalio/client';
import type { Payload } from '@temporalio/common';
import proto from '@temporalio/proto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { DeterminismViolationError } from '@temporalio/workflow';
import {
  decide,
  detailLines,
  historyFacts,
  listExecutions,
  PRODUCT_WORKFLOW_TYPES,
  queueWorkers,
  replayAlone,
  replayItems,
  replaySuite,
  retryAlone,
  SKIP,
  summaryLine,
  type ExecutionRef,
  type FirstFailure,
  type ReplayItem,
  type SuiteReplayReport,
} from '../../scripts/lib/replay-suite.js';
import { currentTestFile, readRegistry, WORKER_REGISTRY_ENV, type RegisteredWorker } from '../../scripts/lib/suite-registry.js';
import { productWorkflowBundle } from '../../scripts/lib/workflow-bundle.js';
import { EncryptionCodec, type EncryptionKeys } from '../../src/codec/encryption-codec.js';
import { startConnectionStack, TEST_ENCRYPTION, type ConnectionStack } from '../helpers/connection-stack.js';
import { recordedHistories } from '../helpers/histories.js';
import { createDevEnvironment, uniqueId, waitFor } from '../helpers/temporal.js';
import { loadTestConfig } from '../../scripts/lib/test-settings.js';

type History = proto.temporal.api.history.v1.IHistory;
type HistoryEvent = proto.temporal.api.history.v1.IHistoryEvent;
const { History: HistoryMessage } = proto.temporal.api.history.v1;
const { EventType } = proto.temporal.api.enums.v1;

const THIS_FILE = 'test/replay/suite-histories.test.ts';
const OTHER_KEY: EncryptionKeys = { keyId: 'other', key: Buffer.alloc(32, 0x17), decryptionKeys: new Map() };
const json = (value: unknown): Payload => ({ metadata: { encoding: Buffer.from('json/plain') }, data: Buffer.from(JSON.stringify(value)) });
const reference = (): Payload => ({
  metadata: { encoding: Buffer.from('json/protobuf'), messageType: Buffer.from('temporal.api.sdk.v1.ExternalStorageReference') },
  data: Buffer.from('{"driverName":"local-directory"}'),
});

async function encrypted(keys: EncryptionKeys, value: unknown): Promise<Payload> {
  const [payload] = await new EncryptionCodec(keys).encode([json(value)]);
  return payload ?? assert.fail('the codec returned nothing');
}

/** A minimal history: started with `input`, one workflow task completed unless `ran` is false, an activity result. */
function syntheticHistory(input: Payload, result: Payload, ran = true): History {
  const events: HistoryEvent[] = [
    {
      eventType: EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED,
      workflowExecutionStartedEventAttributes: { workflowType: { name: 'connectionWorkflow' }, input: { payloads: [input] } },
    },
    { eventType: EventType.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED },
  ];
  if (ran) {
    events.push(
      { eventType: EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED },
      { eventType: EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED },
      { eventType: EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED, activityTaskCompletedEventAttributes: { result: { payloads: [result] } } },
    );
  }
  return { events };
}

function worker(fields: Partial<RegisteredWorker>): RegisteredWorker {
  return { testFile: 'test/a.test.ts', namespace: 'default', taskQueue: 'q', encryption: TEST_ENCRYPTION, payloadStore: { kind: 'off' }, ...fields };
}

/** A copy of `history` whose first scheduled activity has another type: replay must find nondeterminism. */
function renameFirstActivity(history: History): History {
  const copy = HistoryMessage.decode(HistoryMessage.encode(history).finish());
  const scheduled = copy.events.find((event) => event.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED);
  const attributes = scheduled?.activityTaskScheduledEventAttributes ?? assert.fail('the history schedules an activity');
  attributes.activityType = { name: 'notAnActivityOfThisCode' };
  return copy;
}

let code: string;
before(async () => {
  code = await productWorkflowBundle();
});

void describe('the selection', () => {
  void it("replays the workflow types the worker registers (src/workflows/index.ts's exports), not the fixtures'", async () => {
    const index = await readFile(new URL('../../src/workflows/index.ts', import.meta.url), 'utf8');
    const exported = [...index.matchAll(/export \{ (\w+) \}/g)].map((match) => match[1]).sort();
    for (const type of ['connectionWorkflow', 'forgetLoginWorkflow', 'loginRetentionWorkflow']) assert.ok(PRODUCT_WORKFLOW_TYPES.includes(type), type);
    assert.deepEqual(PRODUCT_WORKFLOW_TYPES, exported);
    for (const type of ['echoWorkflow', 'largePayloadWorkflow', 'namespaceProbe']) assert.ok(!PRODUCT_WORKFLOW_TYPES.includes(type), type);
  });

  void it('names the running test file, relative to the repository', () => {
    assert.equal(currentTestFile(), THIS_FILE);
    assert.equal(currentTestFile(['node', 'scripts/replay-suite.ts']), undefined);
  });

  void it("merges the keys of a task queue's workers, refuses one key id with two keys, and finds a store that is gone", () => {
    const rotated = worker({ encryption: { keyId: 'new', key: Buffer.alloc(32, 1), decryptionKeys: new Map([['test', TEST_ENCRYPTION.key]]) } });
    const merged = queueWorkers([worker({}), rotated, worker({ taskQueue: 'elsewhere', encryption: OTHER_KEY })], 'default', 'q');
    assert.equal(merged.kind, 'registered');
    if (merged.kind !== 'registered') return;
    assert.deepEqual([merged.config.encryption?.keyId, ...(merged.config.encryption?.decryptionKeys?.keys() ?? [])].sort(), ['new', 'test']);
    assert.deepEqual(merged.testFiles, ['test/a.test.ts']);

    const conflict = queueWorkers([worker({}), worker({ encryption: { keyId: 'test', key: Buffer.alloc(32, 2) } })], 'default', 'q');
    assert.equal(conflict.kind, 'conflict');
    assert.equal(queueWorkers([worker({})], 'other-namespace', 'q').kind, 'unregistered');

    const local = worker({ payloadStore: { kind: 'local', directory: '/store' } });
    const kept = queueWorkers([local], 'default', 'q', () => true);
    const gone = queueWorkers([local], 'default', 'q', () => false);
    assert.equal(kept.kind === 'registered' && kept.config.storeDirectory, '/store');
    assert.match(gone.kind === 'registered' ? (gone.storeGone ?? '') : '', /deleted the local payload store/);
  });

  void it('skips what cannot be replayed as its worker ran it, with the reason, and replays the rest with the right keys', async () => {
    const mine = await encrypted(OTHER_KEY, { customerId: 'c' });
    const registered = queueWorkers([worker({ encryption: OTHER_KEY })], 'default', 'q');
    const ran = historyFacts(syntheticHistory(mine, await encrypted(OTHER_KEY, 'result')));
    assert.equal(ran.workflowTaskCompleted, true);
    assert.equal(ran.encrypted.length, 2);

    const asRegistered = await decide(registered, ran, TEST_ENCRYPTION);
    assert.ok('replay' in asRegistered, JSON.stringify(asRegistered));
    assert.equal(asRegistered.replay.encryption?.keyId, 'other');
    assert.equal(asRegistered.inferred, false);

    const neverRan = await decide(registered, historyFacts(syntheticHistory(mine, mine, false)), TEST_ENCRYPTION);
    assert.equal('skip' in neverRan && neverRan.skip, SKIP.neverRan);

    // Unregistered: only with every encrypted payload opening with the tests' key.
    const unknown = await decide({ kind: 'unregistered' }, ran, TEST_ENCRYPTION);
    assert.equal('skip' in unknown && unknown.skip, SKIP.keysUnknown);
    assert.match('skip' in unknown ? unknown.detail : '', /key id\(s\) other /);
    const testKeyed = historyFacts(syntheticHistory(await encrypted(TEST_ENCRYPTION, 'in'), json('plain out')));
    const inferred = await decide({ kind: 'unregistered' }, testKeyed, TEST_ENCRYPTION);
    assert.ok('replay' in inferred && inferred.inferred && inferred.replay.encryption?.keyId === 'test', JSON.stringify(inferred));

    // Large payloads outside the history: replayed through the store while it exists, else skipped.
    const withReference = historyFacts(syntheticHistory(mine, reference()));
    assert.equal(withReference.references, 1);
    const store = worker({ encryption: OTHER_KEY, payloadStore: { kind: 'local', directory: '/store' } });
    const storeGone = await decide(
      queueWorkers([store], 'default', 'q', () => false),
      withReference,
      TEST_ENCRYPTION,
    );
    assert.equal('skip' in storeGone && storeGone.skip, SKIP.storeGone);
    const storeKept = await decide(
      queueWorkers([store], 'default', 'q', () => true),
      withReference,
      TEST_ENCRYPTION,
    );
    assert.ok('replay' in storeKept && storeKept.replay.storeDirectory === '/store', JSON.stringify(storeKept));
  });

  void it('ends with the one summary line', () => {
    const ref: ExecutionRef = { namespace: 'default', workflowId: 'w', runId: 'r', workflowType: 'connectionWorkflow', taskQueue: 'q' };
    const report: SuiteReplayReport = {
      replayed: 7,
      inferred: 0,
      nondeterminism: [{ ref, testFiles: ['test/a.test.ts'], message: 'boom' }],
      replayErrors: [],
      passedOnRetry: [],
      skipped: new Map([
        [
          SKIP.neverRan,
          [
            { ref, testFiles: [], message: '' },
            { ref, testFiles: [], message: '' },
          ],
        ],
      ]),
      otherTypes: new Map([['echoWorkflow', 1]]),
    };
    assert.equal(
      summaryLine(report),
      'replay: 7 histories of the suite replayed, 1 nondeterminism errors, 0 other failures, 2 skipped (2 never ran a workflow task)',
    );
    assert.ok(detailLines(report).includes('replay: NONDETERMINISM default/w run r (connectionWorkflow, task queue q, test test/a.test.ts): boom'));
  });
});

void describe('the replay', () => {
  void it('replays recorded histories, and reports one with a renamed activity as nondeterminism', async () => {
    // Three recorded connections (the refresh's histories need their own converter), each replayed
    // under the workflow id it was recorded with: its payloads are sealed for that workflow.
    const connections = (await recordedHistories()).filter(
      ({ history }) => history.events?.[0]?.workflowExecutionStartedEventAttributes?.workflowType?.name === 'connectionWorkflow',
    );
    const recorded = connections.slice(0, 3);
    assert.equal(recorded.length, 3);
    const tampered = recorded[0] ?? assert.fail('a recorded history');
    const item = (workflowId: string, runId: string, history: History): ReplayItem => ({
      ref: { namespace: 'default', workflowId, runId, workflowType: 'connectionWorkflow', taskQueue: 'recorded' },
      testFiles: [THIS_FILE],
      history,
    });
    const items = [
      ...recorded.map(({ name, workflowId, history }) => item(workflowId, name, history)),
      item(tampered.workflowId, 'renamed', renameFirstActivity(tampered.history)),
    ];
    const results = new Map<string, Error | undefined>();
    await replayItems(code, { encryption: TEST_ENCRYPTION, storeDirectory: undefined }, items, (done, error) => results.set(done.ref.runId, error));

    assert.equal(results.size, 4, 'every history got a result');
    for (const { name } of recorded) assert.equal(results.get(name), undefined, `${name}: ${String(results.get(name))}`);
    const error = results.get('renamed');
    assert.ok(error instanceof DeterminismViolationError, `the renamed activity: ${String(error)}`);
  });

  void it('replays a history that failed otherwise once more alone, and fails it when it fails again', async () => {
    // Under a key it was not sealed with, a recorded connection cannot open its input: a task failure, every time.
    const [recorded] = (await recordedHistories()).filter(
      ({ history }) => history.events?.[0]?.workflowExecutionStartedEventAttributes?.workflowType?.name === 'connectionWorkflow',
    );
    assert.ok(recorded, 'a recorded connection');
    const item: ReplayItem = {
      ref: { namespace: 'default', workflowId: recorded.workflowId, runId: 'wrong-key', workflowType: 'connectionWorkflow', taskQueue: 'recorded' },
      testFiles: [THIS_FILE],
      history: recorded.history,
    };
    const config = { encryption: OTHER_KEY, storeDirectory: undefined };
    const first = await replayAlone(code, config, item);
    assert.ok(first !== undefined && !(first instanceof DeterminismViolationError), `not nondeterminism: ${String(first)}`);

    const { failed, passedOnRetry } = await retryAlone([{ item, config, error: first }], (again, itsConfig) => replayAlone(code, itsConfig, again));
    assert.deepEqual(passedOnRetry, []);
    assert.equal(failed.length, 1);
    assert.equal(failed[0]?.ref.runId, 'wrong-key');
    assert.ok(failed[0]?.message.startsWith(first.message.split('\n')[0]!.slice(0, 100)), failed[0]?.message);
  });
});

void describe('the second try', () => {
  const ref = (runId: string): ExecutionRef => ({ namespace: 'default', workflowId: 'w', runId, workflowType: 'connectionWorkflow', taskQueue: 'q' });
  const failure = (runId: string, message: string): FirstFailure => ({
    item: { ref: ref(runId), testFiles: ['test/a.test.ts'], history: { events: [] } },
    config: { encryption: TEST_ENCRYPTION, storeDirectory: undefined },
    error: new Error(`${message}\nand its stack`),
  });

  void it('passes a history that replays alone, keeping what the first try said, and fails one that fails again with both messages', async () => {
    const secondTry = new Map<string, Error | undefined>([
      ['flaky', undefined],
      ['same', new Error('task failed: boom')],
      ['other', new Error('task failed: bang')],
    ]);
    const asked: string[] = [];
    const { failed, passedOnRetry } = await retryAlone(
      [failure('flaky', 'task timed out'), failure('same', 'task failed: boom'), failure('other', 'task failed: boom')],
      (item) => {
        asked.push(item.ref.runId);
        return Promise.resolve(secondTry.get(item.ref.runId));
      },
    );
    assert.deepEqual(asked, ['flaky', 'same', 'other'], 'each once, in order');
    assert.deepEqual(
      passedOnRetry.map((problem) => [problem.ref.runId, problem.message]),
      [['flaky', 'task timed out']],
    );
    assert.deepEqual(
      failed.map((problem) => [problem.ref.runId, problem.message]),
      [
        ['same', 'task failed: boom (again when replayed alone)'],
        ['other', 'task failed: boom; replayed alone: task failed: bang'],
      ],
    );
    const report: SuiteReplayReport = {
      replayed: 3,
      inferred: 0,
      nondeterminism: [],
      replayErrors: failed,
      passedOnRetry,
      skipped: new Map(),
      otherTypes: new Map(),
    };
    assert.equal(
      summaryLine(report),
      'replay: 3 histories of the suite replayed (1 of them only when replayed alone), 0 nondeterminism errors, 2 other failures, 0 skipped (none)',
    );
    assert.ok(
      detailLines(report).includes(
        'replay: replayed only alone, on a second try: default/w run flaky (connectionWorkflow, task queue q, test test/a.test.ts); the first try failed: task timed out',
      ),
      detailLines(report).join('\n'),
    );
  });
});

void describe('the phase on a dev server', () => {
  let env: TestWorkflowEnvironment;
  let stack: ConnectionStack | undefined;
  let ownRegistry: string | undefined;
  let registryDir: string;
  const keys: EncryptionKeys = { keyId: uniqueId('suite-key'), key: randomBytes(32), decryptionKeys: new Map() };
  let workflowId: string;

  before(async () => {
    // Under npm test the runner's registry; run alone, one of this file's (the helper writes where the variable says).
    if (!loadTestConfig().workerRegistryDir) {
      ownRegistry = await mkdtemp(join(tmpdir(), 'test-worker-registry-'));
      process.env[WORKER_REGISTRY_ENV] = ownRegistry;
    }
    registryDir = loadTestConfig().workerRegistryDir ?? assert.fail('a registry');
    env = await createDevEnvironment();
    stack = await startConnectionStack(env, { encryption: keys });
    const loginId = await stack.savedLogin('no_mfa');
    const handle = await stack.start({ session: { kind: 'cached', loginId }, products: { accountsDetail: {} }, timing: { pollIntervalMs: 50 } });
    await handle.result();
    workflowId = handle.workflowId;
    await stack.stop();
    stack = undefined;
    await waitFor(async () => (await listExecutions(env.connection, env.namespace ?? 'default')).some((ref) => ref.workflowId === workflowId), {
      timeoutMs: 15_000,
      describe: `${workflowId} in visibility`,
    });
  });

  after(async () => {
    await stack?.stop();
    await env?.teardown();
    if (ownRegistry) {
      delete process.env[WORKER_REGISTRY_ENV];
      await rm(ownRegistry, { recursive: true, force: true });
    }
  });

  const replayMine = (workers: readonly RegisteredWorker[], connection: Connection = env.connection) =>
    replaySuite({
      connection,
      code,
      workers,
      fallbackEncryption: TEST_ENCRYPTION,
      namespaces: [env.namespace ?? 'default'],
      include: (ref) => ref.workflowId === workflowId,
    });

  void it("the helper registered the worker's key and this test file", () => {
    const mine = readRegistry(registryDir).workers.filter((entry) => entry.encryption?.keyId === keys.keyId);
    assert.equal(mine.length, 1);
    assert.equal(mine[0]?.testFile, THIS_FILE);
    assert.ok(Buffer.from(mine[0]?.encryption?.key ?? []).equals(keys.key));
  });

  void it('replays the connection with the key its worker had, and skips it, saying why, without that key', async () => {
    const { workers } = readRegistry(registryDir);
    const report = await replayMine(workers);
    assert.equal(report.replayed, 1, summaryLine(report));
    assert.deepEqual(
      [report.nondeterminism.length, report.replayErrors.length, report.skipped.size, report.inferred],
      [0, 0, 0, 0],
      detailLines(report).join('\n'),
    );

    const unregistered = await replayMine([]);
    assert.equal(unregistered.replayed, 0);
    const skipped = unregistered.skipped.get(SKIP.keysUnknown) ?? [];
    assert.deepEqual(
      skipped.map((problem) => problem.ref.workflowId),
      [workflowId],
    );
    assert.match(skipped[0]?.message ?? '', new RegExp(`key id\\(s\\) ${keys.keyId} `));
  });

  void it('reports a history that no longer matches the code as nondeterminism, naming the workflow and this test file', async () => {
    const { workers } = readRegistry(registryDir);
    const service = env.connection.workflowService;
    // The server's history with its first activity renamed, as if the code had changed since.
    const tampering = {
      workflowService: {
        listWorkflowExecutions: (request: proto.temporal.api.workflowservice.v1.IListWorkflowExecutionsRequest) => service.listWorkflowExecutions(request),
        getWorkflowExecutionHistory: async (request: proto.temporal.api.workflowservice.v1.IGetWorkflowExecutionHistoryRequest) => {
          const page = await service.getWorkflowExecutionHistory(request);
          return { ...page, history: renameFirstActivity(page.history ?? {}) };
        },
      },
    } as unknown as Connection;
    const report = await replayMine(workers, tampering);
    assert.equal(report.replayed, 1);
    assert.deepEqual(
      report.nondeterminism.map((problem) => [problem.ref.workflowId, problem.testFiles]),
      [[workflowId, [THIS_FILE]]],
    );
    assert.match(summaryLine(report), /^replay: 1 histories of the suite replayed, 1 nondeterminism errors, 0 other failures, 0 skipped \(none\)$/);
    const line = detailLines(report).find((text) => text.startsWith('replay: NONDETERMINISM')) ?? '';
    assert.ok(line.includes(`/${workflowId} `) && line.includes(`test ${THIS_FILE}`), line);
  });
});
