/**
 * Tracing end to end: a worker process and the pipeline client, each configured by the standard
 * OTEL_* variables to export to a real OpenTelemetry Collector (0.139.0, built from its Go modules:
 * test/helpers/otel-collector.ts), whose file exporter the checks read; a real dev server; the real sandbox over
 * HTTP; payload encryption on. One live connection answers a challenge by update and polls a pending
 * accounts detail: every span it makes, in both processes, forms one connected trace rooted at the
 * client's start, and nothing a lender must protect is in what was exported.
 * Then, with tracing off in the worker, a connection runs and the worker exports nothing.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { after, before, describe, it } from 'node:test';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { TRACE_HEADER as SDK_TRACE_HEADER } from '../../src/sdk/internals.js';
import { ConnectionsClient, connectionKey, type ConnectionResult } from '../../src/client/index.js';
import { loadClientConfig } from '../../src/settings/client.js';
import { createSandbox, type Sandbox } from '../../sandbox/server.js';
import { SANDBOX_PASSWORD } from '../../sandbox/scenarios.js';
import { TRACE_HEADER } from '../../src/tracing/workflow-interceptors.js';
import type { SecurityResponses } from '../../src/aggregator/schemas.js';
import { correctAnswer } from '../client/scenario-answers.js';
import { TEST_ENCRYPTION_ENV } from '../helpers/connection-stack.js';
import { startOtelCollector, type CollectorExport, type OtelCollector } from '../helpers/otel-collector.js';
import { textOf, type ReceivedSpan } from '../helpers/otlp-json.js';
import { startProcess, stopAllProcesses, type ProductProcess } from '../helpers/processes.js';
import { createDevEnvironment, uniqueId, waitFor } from '../helpers/temporal.js';

let env: TestWorkflowEnvironment;
let sandbox: Sandbox;

before(async () => {
  env = await createDevEnvironment();
  sandbox = await createSandbox({ port: 0 });
});

after(async () => {
  await stopAllProcesses();
  await sandbox?.close();
  await env?.teardown();
});

/** What every process of one test shares: Temporal, the tenant, the task queue, the payload key. */
function sharedEnv(customerId: string, taskQueue: string): Record<string, string> {
  return { TEMPORAL_ADDRESS: env.address, TEMPORAL_TASK_QUEUE: taskQueue, AGGREGATOR_CUSTOMER_ID: customerId, ...TEST_ENCRYPTION_ENV, PAYLOAD_STORE: 'off' };
}

/** SIGTERM, as an orchestrator stops a worker: it drains, exports its last spans and exits. */
async function stopGracefully(worker: ProductProcess): Promise<number | null> {
  const exited = once(worker.child, 'exit') as Promise<[number | null]>;
  worker.child.kill('SIGTERM');
  const [code] = await exited;
  return code;
}

async function runConnection(
  client: ConnectionsClient,
  customerId: string,
  username: string,
  answer?: SecurityResponses,
): Promise<{ workflowId: string; result: ConnectionResult }> {
  const workflowId = connectionKey(customerId, uniqueId('traced'));
  await client.start(workflowId, {
    customerId,
    session: { kind: 'live', institution: 'SandboxBank', username, password: SANDBOX_PASSWORD, save: true },
    products: { accountsDetail: { WithTransactions: true } },
    timing: { pollIntervalMs: 50 },
  });
  if (answer) {
    await waitFor(async () => (await client.getState(workflowId)).status === 'AwaitingAnswer', { timeoutMs: 30_000, describe: 'the challenge' });
    const outcome = await client.answer(workflowId, { responses: answer });
    assert.equal(outcome.outcome, 'accepted');
  }
  return { workflowId, result: await client.result(workflowId) };
}

describe('a connection traced from the client to the service', () => {
  const customerId = uniqueId('tenant');
  let collector: OtelCollector;
  let answer: SecurityResponses;
  let result: ConnectionResult;
  let workerExit: number | null;
  let exported: CollectorExport;
  let spans: ReceivedSpan[];

  before(async () => {
    collector = await startOtelCollector();
    const shared = sharedEnv(customerId, uniqueId('traced'));
    const worker = await startProcess('worker', {
      ...shared,
      AGGREGATOR_BASE_URL: sandbox.url,
      WORKER_METRICS_PORT: '0',
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
      OTEL_SERVICE_NAME: 'trace-test-worker',
    });
    const client = await ConnectionsClient.connect(
      loadClientConfig({ ...shared, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${collector.url}/v1/traces`, OTEL_SERVICE_NAME: 'trace-test-client' }),
    );
    try {
      answer = await correctAnswer(sandbox.url, 'security_question', 0);
      // security_question: one question, then accounts detail pending for one poll.
      ({ result } = await runConnection(client, customerId, 'security_question', answer));
    } finally {
      await client.close(); // exports the client's spans
    }
    workerExit = await stopGracefully(worker); // exports the worker's last spans
    exported = await collector.stop(); // flushes its file exporter
    spans = exported.spans;
  });

  after(async () => {
    await collector?.stop();
  });

  const named = (name: string) => spans.filter((span) => span.name === name);
  const byId = () => new Map(spans.map((span) => [span.spanId, span]));

  it('exports from both processes, the worker when it drains', () => {
    assert.equal(workerExit, 0);
    assert.equal(exported.exitCode, 0);
    assert.deepEqual(exported.complaints, [], 'the collector took every export');
    assert.ok(
      spans.some((span) => span.service === 'trace-test-client'),
      'spans of the client',
    );
    assert.ok(
      spans.some((span) => span.service === 'trace-test-worker'),
      'spans of the worker',
    );
  });

  it('makes one trace, rooted at the client starting the connection', () => {
    assert.deepEqual([...new Set(spans.map((span) => span.traceId))].length, 1, `trace ids: ${[...new Set(spans.map((span) => span.traceId))].join(', ')}`);
    const roots = spans.filter((span) => span.parentSpanId === undefined);
    assert.deepEqual(
      roots.map((span) => `${span.service} ${span.name}`),
      ['trace-test-client StartWorkflow:connectionWorkflow'],
    );
    const ids = byId();
    const orphans = spans.filter((span) => span.parentSpanId !== undefined && !ids.has(span.parentSpanId));
    assert.deepEqual(
      orphans.map((span) => span.name),
      [],
      'every parent is in the trace',
    );
  });

  it('has the workflow run, its activities, the answer by update and every HTTP call', () => {
    const names = new Set(spans.map((span) => span.name));
    for (const name of [
      'RunWorkflow:connectionWorkflow',
      'StartActivity:validateConnectionInput',
      'StartActivity:openSession',
      'RunActivity:openSession',
      'StartWorkflowUpdate:submitAnswer',
      'ValidateUpdate:submitAnswer',
      'HandleUpdate:submitAnswer',
      'RunActivity:answerChallenge',
      'RunActivity:requestAccountsDetail',
      'RunActivity:pollAccountsDetail',
      'POST /v3/{customerId}/BankingServices/Authorize',
      'POST /v3/{customerId}/BankingServices/GetAccountsDetail',
      'GET /v3/{customerId}/BankingServices/GetAccountsDetailAsync/{requestId}',
    ]) {
      assert.ok(names.has(name), `no span ${name} among ${[...names].sort().join(', ')}`);
    }
    const ids = byId();
    const parentName = (span: ReceivedSpan) => (span.parentSpanId ? ids.get(span.parentSpanId)?.name : undefined);
    assert.equal(parentName(named('RunWorkflow:connectionWorkflow')[0]!), 'StartWorkflow:connectionWorkflow');
    assert.equal(parentName(named('HandleUpdate:submitAnswer')[0]!), 'StartWorkflowUpdate:submitAnswer');
    assert.equal(parentName(named('StartWorkflowUpdate:submitAnswer')[0]!), 'StartWorkflow:connectionWorkflow', 'the answer joins the connection’s trace');
    // Authorize twice (credentials, then the answer), each inside its activity.
    const authorizes = named('POST /v3/{customerId}/BankingServices/Authorize');
    assert.deepEqual(authorizes.map(parentName).sort(), ['RunActivity:answerChallenge', 'RunActivity:openSession']);
    assert.deepEqual(authorizes.map((span) => span.attributes['http.response.status_code']).sort(), [200, 203]);
  });

  it('shows the pending answer and the poll that ended it', () => {
    const statuses = spans
      .filter((span) => textOf(span.attributes['aggregator.operation']).startsWith('GetAccountsDetail'))
      .map((span) =>
        ['aggregator.operation', 'http.response.status_code', 'aggregator.pending_code']
          .map((key) => (key in span.attributes ? textOf(span.attributes[key]) : ''))
          .join(' ')
          .trim(),
      );
    assert.ok(
      statuses.some((line) => /^GetAccountsDetail 202 \w+/.test(line)),
      statuses.join('; '),
    );
    assert.ok(statuses.includes('GetAccountsDetailAsync 200'), statuses.join('; '));
    for (const span of named('GET /v3/{customerId}/BankingServices/GetAccountsDetailAsync/{requestId}')) {
      assert.equal(span.attributes['http.route'], '/v3/{customerId}/BankingServices/GetAccountsDetailAsync/{requestId}');
      assert.equal(span.attributes['url.full'], undefined);
    }
  });

  it('exports neither the password, nor the answer, nor the login id, nor account data', () => {
    const account = result.accountsDetail?.Accounts[0] ?? assert.fail('the result has an account');
    const holder = result.accountsDetail?.Accounts.find((entry) => entry.Holder)?.Holder ?? assert.fail('the result names the holder');
    const secrets: Record<string, string | undefined> = {
      password: SANDBOX_PASSWORD,
      ...Object.fromEntries(
        Object.values(answer)
          .flat()
          .map((value, index) => [`answer ${index + 1}`, value]),
      ),
      'login id': result.loginId,
      'account number': account.AccountNumber ?? undefined,
      'holder name': holder.Name ?? undefined,
      'holder email': holder.Email ?? undefined,
    };
    assert.ok(Object.values(secrets).filter(Boolean).length >= 6, JSON.stringify(Object.keys(secrets)));
    const requests = exported.requests.join('\n');
    for (const [what, value] of Object.entries(secrets)) {
      if (value) assert.ok(!requests.includes(value), `the ${what} was exported`);
    }
    // What the SDK copies from the workflow's info is there flat; its objects (search attributes, memo) are not.
    const run = named('RunWorkflow:connectionWorkflow')[0]!;
    assert.ok(textOf(run.attributes.workflowId).startsWith('connection-'), JSON.stringify(run.attributes));
    assert.equal(run.attributes.searchAttributes, undefined);
    assert.equal(run.attributes.memo, undefined);
  });
});

describe('tracing off in the worker', () => {
  const customerId = uniqueId('tenant');
  let collector: OtelCollector;
  let worker: ProductProcess;
  let workerExit: number | null;
  let exported: CollectorExport;
  let completed: string[];

  before(async () => {
    collector = await startOtelCollector();
    const shared = sharedEnv(customerId, uniqueId('untraced'));
    // The endpoint is set but the SDK disabled: nothing may leave this worker.
    worker = await startProcess('worker', {
      ...shared,
      AGGREGATOR_BASE_URL: sandbox.url,
      WORKER_METRICS_PORT: '0',
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
      OTEL_SDK_DISABLED: 'true',
    });
    const plain = await ConnectionsClient.connect(loadClientConfig(shared));
    // A traced client's connection reaches this worker too: its workflow spans must be dropped quietly.
    const traced = await ConnectionsClient.connect(
      loadClientConfig({ ...shared, OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_SERVICE_NAME: 'trace-test-client' }),
    );
    try {
      completed = [];
      for (const client of [plain, traced]) {
        const { result } = await runConnection(client, customerId, 'no_mfa');
        completed.push(result.customerId);
      }
    } finally {
      await plain.close();
      await traced.close();
    }
    workerExit = await stopGracefully(worker);
    exported = await collector.stop();
  });

  after(async () => {
    await collector?.stop();
  });

  it('runs connections, says tracing is off, and exports nothing itself', () => {
    assert.deepEqual(completed, [customerId, customerId]);
    assert.equal(workerExit, 0);
    assert.match(worker.output(), /"tracing":"off"/);
    assert.doesNotMatch(worker.output(), /unregistered external sink/);
    assert.deepEqual([...new Set(exported.spans.map((span) => span.service))], ['trace-test-client'], 'only the traced client exported');
  });

  it('carries trace context in the header the SDK reads', () => {
    assert.equal(TRACE_HEADER, SDK_TRACE_HEADER);
  });
});
