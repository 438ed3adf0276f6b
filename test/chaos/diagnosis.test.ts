/**
 * The chaos harness's pure parts: failed calls named by their gRPC code through every wrapper, a
 * stuck connection's diagnosis read from describe/history shapes and shown, the summary line
 * written and parsed back, and the run's payload key file. No server.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { QueryNotRegisteredError, QueryRejectedError, ServiceError, WorkflowNotFoundError } from '@temporalio/client';
import proto from '@temporalio/proto';
import { TemporalUnavailableError } from '../../src/client/errors.js';
import {
  diagnosisLine,
  eventTypeName,
  formatDiagnosis,
  pendingWorkflowTaskOf,
  workflowTaskProblemsIn,
  type StuckDiagnosis,
} from '../../scripts/chaos/diagnosis.js';
import { failureCodeOf, formatCodeCounts, grpcCodeName } from '../../scripts/chaos/grpc-codes.js';
import type { ReplayReport } from '../../scripts/chaos/replay-run.js';
import { chaosSummaryLine, parseChaosSummaryLine, summaryLine, type Summary } from '../../scripts/chaos/report.js';
import { readRunKey, RUN_KEY_FILE, writeRunKey } from '../../scripts/chaos/run-key.js';

const { EventType, PendingWorkflowTaskState, WorkflowTaskFailedCause, TimeoutType } = proto.temporal.api.enums.v1;
const { HistoryEvent } = proto.temporal.api.history.v1;
const { PendingWorkflowTaskInfo } = proto.temporal.api.workflow.v1;

/** What @grpc/grpc-js rejects a call with (isGrpcServiceError looks for details and metadata). */
function grpcError(code: number, details: string): Error {
  return Object.assign(new Error(`${code} ${grpcCodeName(code)}: ${details}`), { code, details, metadata: {} });
}

void describe('failed calls by gRPC code name', () => {
  void it('names every code of the spec, and an unknown one without a bare number', () => {
    assert.equal(grpcCodeName(4), 'DEADLINE_EXCEEDED');
    assert.equal(grpcCodeName(8), 'RESOURCE_EXHAUSTED');
    assert.equal(grpcCodeName(9), 'FAILED_PRECONDITION');
    assert.equal(grpcCodeName(14), 'UNAVAILABLE');
    assert.equal(grpcCodeName(16), 'UNAUTHENTICATED');
    assert.equal(grpcCodeName(42), 'GRPC_42');
  });

  void it('finds the code under the SDK and pipeline-client wrappers', () => {
    const failedTask = grpcError(9, 'Workflow Task in failed state');
    const service = new ServiceError('Failed to query Workflow', { cause: failedTask });
    assert.equal(failureCodeOf(failedTask), 'FAILED_PRECONDITION');
    assert.equal(failureCodeOf(service), 'FAILED_PRECONDITION');
    assert.equal(failureCodeOf(TemporalUnavailableError.refused('localhost:7233', service)), 'FAILED_PRECONDITION');
    assert.equal(failureCodeOf(new ServiceError('Failed to query Workflow', { cause: grpcError(4, 'deadline exceeded') })), 'DEADLINE_EXCEEDED');
    assert.equal(failureCodeOf(new ServiceError('Failed to query Workflow', { cause: grpcError(8, 'consistent query buffer is full') })), 'RESOURCE_EXHAUSTED');
  });

  void it('names the SDK refusals that carry no gRPC error, and anything else by its class', () => {
    assert.equal(failureCodeOf(new QueryNotRegisteredError('unknown queryType state', 3)), 'INVALID_ARGUMENT');
    assert.equal(failureCodeOf(new QueryRejectedError(proto.temporal.api.enums.v1.WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_FAILED)), 'QUERY_REJECTED');
    assert.equal(failureCodeOf(new WorkflowNotFoundError('not found', 'wf', undefined)), 'NOT_FOUND');
    assert.equal(failureCodeOf(new TypeError('bad')), 'TypeError');
    assert.equal(failureCodeOf('a string'), 'string');
  });

  void it('lists counts most frequent first, "none" when empty', () => {
    assert.equal(formatCodeCounts(new Map()), 'none');
    assert.equal(
      formatCodeCounts(
        new Map([
          ['DEADLINE_EXCEEDED', 1],
          ['UNAVAILABLE', 3],
          ['ABORTED', 1],
        ]),
      ),
      'UNAVAILABLE 3, ABORTED 1, DEADLINE_EXCEEDED 1',
    );
    assert.equal(formatCodeCounts(new Map([['UNAVAILABLE', 2]]), '×'), 'UNAVAILABLE ×2');
  });
});

/** Seconds of a timestamp, as the server's JSON-ish shape; fromObject makes the proto's Longs of them. */
const ts = (iso: string) => ({ seconds: Date.parse(iso) / 1000, nanos: 0 });

void describe('stuck connection diagnosis', () => {
  void it('reads the pending workflow task of a raw describe', () => {
    const task = pendingWorkflowTaskOf(
      PendingWorkflowTaskInfo.fromObject({
        state: PendingWorkflowTaskState.PENDING_WORKFLOW_TASK_STATE_STARTED,
        attempt: 4,
        scheduledTime: ts('2026-01-01T00:00:10Z'),
        startedTime: ts('2026-01-01T00:00:11Z'),
      }),
    );
    assert.equal(task?.state, 'STARTED');
    assert.equal(task?.attempt, 4);
    assert.equal(task?.scheduledAt?.toISOString(), '2026-01-01T00:00:10.000Z');
    assert.equal(pendingWorkflowTaskOf(undefined), undefined);
  });

  void it('counts failed and timed-out workflow tasks and keeps the last one with its cause', () => {
    const events = [
      { eventId: 1, eventType: EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED },
      {
        eventId: 4,
        eventType: EventType.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT,
        workflowTaskTimedOutEventAttributes: { timeoutType: TimeoutType.TIMEOUT_TYPE_START_TO_CLOSE },
      },
      {
        eventId: 7,
        eventTime: ts('2026-01-01T00:00:20Z'),
        eventType: EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED,
        workflowTaskFailedEventAttributes: {
          cause: WorkflowTaskFailedCause.WORKFLOW_TASK_FAILED_CAUSE_WORKFLOW_WORKER_UNHANDLED_FAILURE,
          failure: { message: 'boom' },
          identity: 'w2',
        },
      },
    ].map((event) => HistoryEvent.fromObject(event));
    const { failures, timeouts, last } = workflowTaskProblemsIn(events);
    assert.equal(failures, 1);
    assert.equal(timeouts, 1);
    assert.deepEqual(
      { ...last?.problem, at: last?.problem.at?.toISOString() },
      { event: 'WorkflowTaskFailed', eventId: 7, at: '2026-01-01T00:00:20.000Z', cause: 'WORKFLOW_WORKER_UNHANDLED_FAILURE', message: 'boom', identity: 'w2' },
    );
    assert.equal(workflowTaskProblemsIn(events.slice(0, 2)).last?.problem.cause, 'START_TO_CLOSE');
    assert.equal(eventTypeName(EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED), 'WorkflowTaskFailed');
  });

  const diagnosis: StuckDiagnosis = {
    workflowId: 'connection-chaos-1',
    runId: 'run-1',
    status: 'RUNNING',
    diagnosedAt: new Date('2026-01-01T00:01:00Z'),
    historyLength: 42,
    lastEvent: { type: 'WorkflowTaskFailed', at: new Date('2026-01-01T00:00:50Z') },
    pendingWorkflowTask: { state: 'SCHEDULED', attempt: 5, scheduledAt: new Date('2026-01-01T00:00:55Z') },
    workflowTaskFailures: 4,
    workflowTaskTimeouts: 0,
    lastWorkflowTaskProblem: {
      event: 'WorkflowTaskFailed',
      eventId: 41,
      cause: 'WORKFLOW_WORKER_UNHANDLED_FAILURE',
      message: 'TypeError: x is undefined\n    at f (workflow.js:1)',
      at: new Date('2026-01-01T00:00:50Z'),
    },
    pendingActivities: [{ activityId: '3', activityType: 'authorize', state: 'STARTED', attempt: 2, maximumAttempts: 0 }],
  };
  const failedQueries = new Map([['FAILED_PRECONDITION', 12]]);

  void it('sums it up on one line', () => {
    assert.equal(
      diagnosisLine(diagnosis, failedQueries),
      'workflow task attempt 5 (SCHEDULED, scheduled 5.0s before); last WorkflowTaskFailed #41 (WORKFLOW_WORKER_UNHANDLED_FAILURE): TypeError: x is undefined at f (workflow.js:1) [4 failed, 0 timed out]; ' +
        'pending: authorize (STARTED, attempt 2); failed queries: FAILED_PRECONDITION 12',
    );
    assert.match(
      diagnosisLine({ ...diagnosis, pendingWorkflowTask: undefined, lastWorkflowTaskProblem: undefined, pendingActivities: [] }, new Map()),
      /^no workflow task pending; no workflow task failed or timed out; no pending activity; failed queries: none$/,
    );
  });

  void it('writes it whole for the run directory', () => {
    const text = formatDiagnosis('chaos-key-1', diagnosis, failedQueries).join('\n');
    assert.match(text, /^chaos-key-1 \(workflow connection-chaos-1, run run-1\): RUNNING at 2026-01-01T00:01:00.000Z/);
    assert.match(text, /pending workflow task: SCHEDULED, attempt 5; .*attempt 3 or more: the server refuses every query with FAILED_PRECONDITION/);
    assert.match(text, /last: WorkflowTaskFailed #41 \(WORKFLOW_WORKER_UNHANDLED_FAILURE\): TypeError: x is undefined/);
    assert.match(text, /authorize \(id 3\): STARTED, attempt 2/);
    assert.match(text, /failed queries by gRPC code: FAILED_PRECONDITION 12/);
  });
});

void describe('the chaos summary line', () => {
  const summary: Summary = {
    connections: 21,
    completedAsExpected: 21,
    unexpectedFailures: 0,
    stuck: 0,
    duplicateAnswers: 0,
    dataMismatches: 0,
    unknown: 0,
    failedQueries: new Map([
      ['UNAVAILABLE', 4],
      ['DEADLINE_EXCEEDED', 1],
    ]),
    connectionsWithFailedQueries: 3,
  };
  const replay: ReplayReport = { replayed: 22, byType: new Map([['connection', 22]]), nondeterminism: [], errors: [], code: { kind: 'source' } };

  void it('keeps the counters every harness shares first, then the replay and the failed queries', () => {
    const line = chaosSummaryLine(summary, replay);
    assert.ok(line.startsWith(`${summaryLine(summary)}; `));
    assert.equal(
      line,
      'chaos: 21 connections, 21 completed as expected, 0 unexpected failures, 0 stuck, 0 duplicate answers, 0 data mismatches; ' +
        'replayed 22 histories, 0 nondeterminism, 0 replay errors; failed queries: UNAVAILABLE 4, DEADLINE_EXCEEDED 1',
    );
  });

  void it('parses back what it wrote, from a whole stdout', () => {
    const parsed = parseChaosSummaryLine(
      `chaos: seed 1\nsome report\n${chaosSummaryLine(summary, { ...replay, nondeterminism: [{ workflowId: 'a', message: 'x' }] })}\n`,
    );
    assert.ok(parsed);
    assert.equal(parsed.connections, 21);
    assert.equal(parsed.replayed, 22);
    assert.equal(parsed.nondeterminism, 1);
    assert.equal(parsed.replayErrors, 0);
    assert.deepEqual(
      [...parsed.failedQueries],
      [
        ['UNAVAILABLE', 4],
        ['DEADLINE_EXCEEDED', 1],
      ],
    );
    assert.deepEqual([...(parseChaosSummaryLine(chaosSummaryLine({ ...summary, failedQueries: new Map() }, replay))?.failedQueries ?? [['?', 0]])], []);
    assert.equal(parseChaosSummaryLine(summaryLine(summary)), undefined, 'the shorter line of prod-check is not a chaos summary');
  });
});

void describe("the run's payload key file", () => {
  void it('is written owner-only in the local key format and read back', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'chaos-key-test-'));
    try {
      const key = Buffer.alloc(32, 7);
      const path = await writeRunKey(dir, { keyId: 'chaos-abc', key });
      assert.equal(path, join(dir, RUN_KEY_FILE));
      assert.equal((await stat(path)).mode & 0o777, 0o600);
      const read = await readRunKey(dir);
      assert.equal(read.keyId, 'chaos-abc');
      assert.deepEqual(Buffer.from(read.key), key);
      await assert.rejects(readRunKey(join(dir, 'missing')), { name: 'RunKeyError' });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
