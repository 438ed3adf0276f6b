import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, loadWorkerConfig as loadConfig } from '../src/config.js';

describe('loadWorkerConfig', () => {
  it('applies the embedded defaults to an empty environment', () => {
    const config = loadConfig({});
    assert.equal(config.TEMPORAL_ADDRESS, 'localhost:7233');
    assert.equal(config.TEMPORAL_TASK_QUEUE, 'aggregation-connections');
    assert.equal(config.AGGREGATOR_BASE_URL, 'http://127.0.0.1:4010');
    assert.equal(config.AGGREGATOR_AUTH_HEADER, 'x-api-key');
    assert.equal(config.TEMPORAL_TLS, false);
    assert.ok(Object.isFrozen(config));
  });

  it('treats an empty variable as unset', () => {
    assert.equal(loadConfig({ TEMPORAL_ADDRESS: '' }).TEMPORAL_ADDRESS, 'localhost:7233');
  });

  it('names every bad variable in one error', () => {
    assert.throws(
      () => loadConfig({ TEMPORAL_ADDRESS: 'no-port', AGGREGATOR_BASE_URL: 'ftp://x', WORKER_METRICS_PORT: '70000', TEMPORAL_TLS: 'maybe' }),
      (error: unknown) => {
        assert.ok(error instanceof ConfigError);
        for (const name of ['TEMPORAL_ADDRESS', 'AGGREGATOR_BASE_URL', 'WORKER_METRICS_PORT', 'TEMPORAL_TLS']) assert.match(error.message, new RegExp(name));
        return true;
      },
    );
  });

  it('refuses a TLS certificate without its key', () => {
    assert.throws(() => loadConfig({ TEMPORAL_TLS_CERT_PATH: '/tmp/cert.pem' }), /go together/);
  });
});
