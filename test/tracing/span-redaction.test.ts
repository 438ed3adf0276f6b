/**
 * What the redacting processor lets out: workflow spans as the worker's sink receives them (the SDK
 * copies the whole WorkflowInfo into their attributes) and spans the SDK itself records errors on.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { Resource } from '@opentelemetry/resources';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { makeWorkflowExporter, type SerializableSpan } from '@temporalio/interceptors-opentelemetry';
import type { WorkflowInfo } from '@temporalio/workflow';
import { RedactingSpanProcessor } from '../../src/tracing/span-redaction.js';

const LOGIN_ID = '6f1c1d56-5a4e-4c55-a2a5-1b8f0f7f8d11';
const SECRET_MESSAGE = 'the service said: Password Everyday is wrong';

function exporting() {
  const memory = new InMemorySpanExporter();
  return { memory, processor: new RedactingSpanProcessor(new SimpleSpanProcessor(memory)) };
}

/** A span as the workflow sandbox serializes it, failed with an exception. */
function workflowSpan(): SerializableSpan {
  const time: [number, number] = [1_700_000_000, 0];
  return {
    name: 'RunWorkflow:connectionWorkflow',
    kind: SpanKind.INTERNAL,
    spanContext: { traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', traceFlags: 1 },
    parentSpanId: '00f067aa0ba902b7',
    startTime: time,
    endTime: time,
    status: { code: SpanStatusCode.ERROR, message: SECRET_MESSAGE },
    attributes: {},
    links: [],
    events: [
      {
        name: 'exception',
        time,
        attributes: {
          'exception.type': 'ApplicationFailure',
          'exception.message': SECRET_MESSAGE,
          'exception.stacktrace': `Error: ${SECRET_MESSAGE}\n    at x`,
        },
      },
    ],
    duration: [0, 0],
    ended: true,
    droppedAttributesCount: 0,
    droppedEventsCount: 0,
    droppedLinksCount: 0,
    instrumentationLibrary: { name: '@temporalio/interceptor-workflow' },
  };
}

describe('the redacting span processor', () => {
  it('drops the objects the SDK copies from WorkflowInfo into workflow spans and keeps the flat ids', () => {
    const { memory, processor } = exporting();
    const info = {
      workflowId: 'connection-demo-lender:app-1',
      runId: 'run-1',
      workflowType: 'connectionWorkflow',
      attempt: 1,
      searchAttributes: { LoginId: [LOGIN_ID] },
      memo: { status: 'Completed' },
      startTime: new Date(0),
    } as unknown as WorkflowInfo;
    void makeWorkflowExporter(processor, new Resource({ 'service.name': 'worker' })).export.fn(info, [workflowSpan()]);

    const [span] = memory.getFinishedSpans();
    assert.ok(span);
    assert.deepEqual(span.attributes, { workflowId: 'connection-demo-lender:app-1', runId: 'run-1', workflowType: 'connectionWorkflow', attempt: 1 });
    assert.equal(span.spanContext().spanId, 'b7ad6b7169203331');
    assert.equal(span.resource.attributes['service.name'], 'worker');
    assert.ok(!JSON.stringify(span.attributes).includes(LOGIN_ID));
  });

  it('keeps an error’s status and type, never its message or stack', () => {
    const { memory, processor } = exporting();
    void makeWorkflowExporter(processor, new Resource({})).export.fn({} as WorkflowInfo, [workflowSpan()]);
    const provider = new BasicTracerProvider({ spanProcessors: [processor] });
    const sdkSpan = provider.getTracer('test').startSpan('RunActivity:openSession');
    sdkSpan.recordException(new TypeError(SECRET_MESSAGE));
    sdkSpan.setStatus({ code: SpanStatusCode.ERROR, message: SECRET_MESSAGE });
    sdkSpan.end();

    const spans = memory.getFinishedSpans();
    assert.equal(spans.length, 2);
    for (const span of spans) {
      assert.deepEqual(span.status, { code: SpanStatusCode.ERROR });
      assert.equal(span.events.length, 1);
      assert.equal(span.events[0]?.name, 'exception');
      assert.equal(typeof span.events[0]?.attributes?.['exception.type'], 'string');
      assert.ok(!JSON.stringify({ events: span.events, status: span.status, attributes: span.attributes }).includes('Everyday'));
    }
    assert.equal(spans[1]?.ended, true, 'getters still read the span');
    assert.equal(spans[1]?.name, 'RunActivity:openSession');
  });

  it('passes a span with nothing to redact through unchanged', () => {
    const { memory, processor } = exporting();
    const provider = new BasicTracerProvider({ spanProcessors: [processor] });
    const span = provider.getTracer('test').startSpan('POST /v3/{customerId}/BankingServices/Authorize', { attributes: { 'http.response.status_code': 203 } });
    span.end();
    assert.equal(memory.getFinishedSpans()[0], span);
  });
});
