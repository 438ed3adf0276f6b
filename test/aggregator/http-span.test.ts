/**
 * The aggregation client's spans, against the in-process sandbox over real HTTP, with a tracer
 * provider registered as the worker registers it: one client span per call, named by method and
 * route template, with what went on the wire and how it ended, and nothing that identifies a login,
 * a session or the caller's credential; and no trace context sent to the service.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { context, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { createAggregatorClient } from '../../src/aggregator/client.js';
import { AggregatorServiceError } from '../../src/aggregator/errors.js';
import { SANDBOX_PASSWORD } from '../../sandbox/scenarios.js';
import { createSandbox, type Sandbox } from '../../sandbox/server.js';

const SECRET = 'span-test-secret';
const memory = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(memory)] });
let sandbox: Sandbox;
const sentHeaders: Headers[] = [];

before(async () => {
  provider.register({ contextManager: new AsyncLocalStorageContextManager().enable() });
  sandbox = await createSandbox({ port: 0, authSecret: SECRET });
});
after(async () => {
  await sandbox.close();
  await provider.shutdown();
  trace.disable();
  context.disable();
});

function client(customerId: string) {
  const observed: typeof fetch = (resource, init) => {
    sentHeaders.push(new Headers(resource instanceof Request ? resource.headers : init?.headers));
    return fetch(resource, init);
  };
  return createAggregatorClient({
    baseUrl: sandbox.url,
    customerId,
    auth: { header: sandbox.options.authHeader, value: SECRET },
    timeoutMs: 10_000,
    fetch: observed,
  });
}

describe('spans of the aggregation client', () => {
  it('makes a client span per call, a child of the caller’s span, with the route and not the path', async () => {
    memory.reset();
    const customerId = `spans-${process.pid}`;
    const aggregator = client(customerId);
    const parent = trace.getTracer('test').startSpan('RunActivity:openSession');
    const { loginId, requestId } = await context.with(trace.setSpan(context.active(), parent), async () => {
      const login = await aggregator.authorizeLive({ institution: 'SandboxBank', username: 'no_mfa', password: SANDBOX_PASSWORD, save: true });
      assert.equal(login.kind, 'ready');
      const detail = await aggregator.getAccountsDetail(login.requestId);
      assert.equal(detail.kind, 'pending');
      await aggregator.getAccountsDetailAsync(login.requestId);
      return { loginId: login.kind === 'ready' ? (login.data.Login?.Id ?? '') : '', requestId: login.requestId };
    });
    parent.end();

    const spans = memory.getFinishedSpans().filter((span) => span.kind === SpanKind.CLIENT);
    assert.deepEqual(
      spans.map((span) => span.name),
      [
        'POST /v3/{customerId}/BankingServices/Authorize',
        'POST /v3/{customerId}/BankingServices/GetAccountsDetail',
        'GET /v3/{customerId}/BankingServices/GetAccountsDetailAsync/{requestId}',
      ],
    );
    for (const span of spans) {
      assert.equal(span.parentSpanId, parent.spanContext().spanId);
      assert.equal(span.spanContext().traceId, parent.spanContext().traceId);
    }
    const [authorize, detail, poll] = spans;
    assert.deepEqual(authorize?.attributes, {
      'http.request.method': 'POST',
      'http.route': '/v3/{customerId}/BankingServices/Authorize',
      'server.address': '127.0.0.1',
      'server.port': Number(new URL(sandbox.url).port),
      'aggregator.operation': 'Authorize',
      'http.response.status_code': 200,
    });
    assert.equal(detail?.attributes['http.response.status_code'], 202);
    assert.match(String(detail?.attributes['aggregator.pending_code']), /^OPERATION_/);
    assert.equal(poll?.attributes['http.route'], '/v3/{customerId}/BankingServices/GetAccountsDetailAsync/{requestId}');

    assert.ok(loginId && requestId);
    const exported = JSON.stringify(spans.map((span) => ({ name: span.name, attributes: span.attributes, events: span.events, status: span.status })));
    for (const [what, value] of Object.entries({ loginId, requestId, customerId, secret: SECRET, password: SANDBOX_PASSWORD })) {
      assert.ok(!exported.includes(value), `the ${what} is in a span`);
    }
  });

  it('records the service code of a refusal as the error type, without its message', async () => {
    memory.reset();
    await assert.rejects(
      client(`spans-refused-${process.pid}`).authorizeLive({ institution: 'SandboxBank', username: 'invalid_password', password: SANDBOX_PASSWORD }),
      (error: unknown) => error instanceof AggregatorServiceError && error.serviceCode === 'INVALID_PASSWORD',
    );
    const [span] = memory.getFinishedSpans();
    assert.equal(span?.attributes['aggregator.service_code'], 'INVALID_PASSWORD');
    assert.equal(span?.attributes['error.type'], 'INVALID_PASSWORD');
    assert.equal(typeof span?.attributes['http.response.status_code'], 'number');
    assert.deepEqual(span?.status, { code: SpanStatusCode.ERROR });
    assert.deepEqual(span?.events, []);
  });

  it('sends the service no trace context', () => {
    assert.ok(sentHeaders.length >= 4);
    for (const headers of sentHeaders) {
      assert.equal(headers.get('traceparent'), null);
      assert.equal(headers.get('tracestate'), null);
    }
  });
});
