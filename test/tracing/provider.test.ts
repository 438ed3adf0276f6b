/**
 * The process's tracer provider: spans reach an OTLP/HTTP receiver as JSON (the hand-written one of
 * test/helpers/otlp-receiver.ts, which sees each request in this process; the end-to-end trace test
 * exports to a real collector), users share one provider, another endpoint is refused while it runs,
 * and the last release leaves no global behind.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { context, trace } from '@opentelemetry/api';
import { acquireTracing, describeEndpoint, TracingConflictError } from '../../src/tracing/provider.js';
import { startOtlpReceiver, type OtlpReceiver } from '../helpers/otlp-receiver.js';

let receiver: OtlpReceiver;
before(async () => {
  receiver = await startOtlpReceiver();
});
after(async () => receiver.close());

describe('the process tracer provider', () => {
  it('exports spans made through the global API, nested by the async context, as OTLP JSON', async () => {
    const tracing = await acquireTracing({ endpoint: `${receiver.url}/v1/traces`, serviceName: 'provider-test' });
    const tracer = trace.getTracer('test');
    await tracer.startActiveSpan('outer', async (outer) => {
      await new Promise((resolve) => setImmediate(resolve));
      tracer.startSpan('inner').end();
      outer.end();
    });
    await tracing.release();

    const outer = receiver.spans.find((span) => span.name === 'outer') ?? assert.fail('outer exported');
    const inner = receiver.spans.find((span) => span.name === 'inner') ?? assert.fail('inner exported');
    assert.equal(inner.parentSpanId, outer.spanId);
    assert.equal(inner.traceId, outer.traceId);
    assert.equal(outer.service, 'provider-test');
    assert.deepEqual(receiver.refused, []);
  });

  it('is shared by its users, refuses a second endpoint, and is gone after the last release', async () => {
    const config = { endpoint: `${receiver.url}/v1/traces`, serviceName: 'provider-test' };
    const first = await acquireTracing(config);
    const second = await acquireTracing({ ...config, serviceName: 'another-name' });
    assert.equal(second.resource, first.resource, 'one provider');
    await assert.rejects(acquireTracing({ endpoint: 'http://127.0.0.1:1/v1/traces', serviceName: 'x' }), TracingConflictError);

    await first.release();
    await first.release(); // a second release of the same hold changes nothing
    assert.ok(trace.getTracer('test').startSpan('still-on').isRecording(), 'the second user still traces');
    await second.release();
    assert.equal(trace.getTracer('test').startSpan('off').isRecording(), false);
    assert.equal(trace.getSpan(context.active()), undefined);

    const other = await acquireTracing({ endpoint: `${receiver.url}/v1/traces?tenant=x`, serviceName: 'again' });
    await other.release();
  });

  it('describes its endpoint without query or credentials', () => {
    assert.equal(
      describeEndpoint({ endpoint: 'https://user:pass@collector.example:4318/v1/traces?token=abc', serviceName: 'worker' }),
      'https://collector.example:4318/v1/traces as worker',
    );
  });
});
