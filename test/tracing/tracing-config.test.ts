import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadClientConfig } from '../../src/settings/client.js';
import { ConfigError } from '../../src/settings/load.js';
import { loadWorkerConfig } from '../../src/settings/worker.js';

describe('tracing settings', () => {
  it('are off without an endpoint', () => {
    assert.equal(loadWorkerConfig({}).tracing, undefined);
    assert.equal(loadClientConfig({ OTEL_SERVICE_NAME: 'pipeline' }).tracing, undefined);
  });

  it('send traces to <base>/v1/traces of OTEL_EXPORTER_OTLP_ENDPOINT, under a name per process', () => {
    assert.deepEqual(loadWorkerConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' }).tracing, {
      endpoint: 'http://collector:4318/v1/traces',
      serviceName: 'aggregation-connections-worker',
    });
    assert.deepEqual(loadClientConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }).tracing, {
      endpoint: 'http://collector:4318/v1/traces',
      serviceName: 'aggregation-connections-client',
    });
  });

  it('take OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as it is, over the base endpoint, and OTEL_SERVICE_NAME', () => {
    const env = {
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://traces.example/otlp',
      OTEL_SERVICE_NAME: 'lender-worker',
    };
    assert.deepEqual(loadWorkerConfig(env).tracing, { endpoint: 'https://traces.example/otlp', serviceName: 'lender-worker' });
  });

  it('are off with OTEL_SDK_DISABLED=true whatever the endpoint', () => {
    assert.equal(loadWorkerConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'true' }).tracing, undefined);
  });

  it('refuse an endpoint that is not an http(s) URL and a protocol other than http/json, naming each variable', () => {
    assert.throws(
      () =>
        loadWorkerConfig({
          OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4317',
          OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'grpc',
          OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
        }),
      (error: unknown) => {
        assert.ok(error instanceof ConfigError);
        for (const name of ['OTEL_EXPORTER_OTLP_ENDPOINT', 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL', 'OTEL_EXPORTER_OTLP_PROTOCOL'])
          assert.match(error.message, new RegExp(`${name}: `));
        assert.match(error.message, /http\/json/);
        return true;
      },
    );
  });

  it('leave no OTEL_ variable among the worker settings', () => {
    assert.deepEqual(
      Object.keys(loadWorkerConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).filter((key) => key.startsWith('OTEL_')),
      [],
    );
  });
});
