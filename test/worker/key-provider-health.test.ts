/**
 * A worker's view of its KMS (a real OpenBao): the key source's health says ok while OpenBao answers
 * and `unavailable`, with the reason, once it is stopped, and the worker's /healthz body carries it
 * while still answering 200; a worker that starts with the KMS down waits for its first data key and
 * a stop signal ends that wait with a typed error, while with the KMS up it goes on at once.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { defaultPayloadConverter } from '@temporalio/common';
import { EncryptionCodec } from '../../src/codec/encryption-codec.js';
import { keyProviderHealthOf, keySourceFor } from '../../src/codec/key-provider.js';
import { KeyProviderUnavailableError, SealingStoppedError } from '../../src/codec/payload-errors.js';
import { loadWorkerConfig } from '../../src/settings/worker.js';
import { startWorkerHealthServer } from '../../src/worker/health.js';
import { KeyProviderWaitAbortedError, waitForFirstDataKey } from '../../src/worker/key-provider-ready.js';
import { startOpenBao, workerPolicy, type OpenBaoServer } from '../helpers/openbao.js';

let bao: OpenBaoServer;
let variables: Record<string, string>;

before(async () => {
  bao = await startOpenBao();
  const token = await bao.token('aggregation-worker', workerPolicy(bao.transitKey));
  variables = {
    TEMPORAL_ADDRESS: '127.0.0.1:7233',
    PAYLOAD_KEY_PROVIDER: 'vault-transit',
    PAYLOAD_VAULT_ADDR: bao.address,
    PAYLOAD_VAULT_TOKEN: token,
    PAYLOAD_VAULT_TIMEOUT_MS: '1000',
    PAYLOAD_STORE: 'off',
  };
});

after(async () => {
  await bao?.stop();
});

const quiet = { warn: () => undefined, info: () => undefined };

describe("a worker's key provider health", () => {
  it('is ok while the KMS answers, goes on at once when it waits for a first data key, and says unavailable with the reason once it is down, while /healthz still answers 200', async () => {
    const config = loadWorkerConfig(variables);
    const health = keyProviderHealthOf(config.encryption) ?? assert.fail('a KMS section has a health');
    assert.equal(health.status.state, 'ok');
    await waitForFirstDataKey(keySourceFor(config.encryption!), quiet);
    assert.equal(health.status.calls.datakey, 1, 'the first data key, made before polling');

    const other = new EncryptionCodec(keySourceFor(loadWorkerConfig(variables).encryption!));
    const [foreign] = await other.encode([defaultPayloadConverter.toPayload({ from: 'another process' })]);
    await bao.stop();

    const codec = new EncryptionCodec(keySourceFor(config.encryption!));
    await assert.rejects(codec.decode([foreign!]), KeyProviderUnavailableError);
    const status = health.status;
    assert.equal(status.state, 'unavailable');
    assert.match(status.reason ?? '', /unavailable \(decrypt\)/);
    assert.equal(status.calls.decrypt, 1);
    assert.equal(status.failures, 1);
    // The worker still seals on its data key meanwhile.
    assert.equal((await codec.encode([defaultPayloadConverter.toPayload('during the outage')])).length, 1);

    const server = await startWorkerHealthServer({ host: '127.0.0.1', port: 0, state: () => 'RUNNING', details: () => ({ keyProvider: health.status }) });
    try {
      const response = await fetch(server.url);
      assert.equal(response.status, 200, 'a KMS outage does not take a running worker out of rotation');
      const body = (await response.json()) as { state: string; keyProvider: { state: string; keyId: string; reason: string } };
      assert.equal(body.state, 'RUNNING');
      assert.equal(body.keyProvider.state, 'unavailable');
      assert.equal(body.keyProvider.keyId, 'vault-transit:aggregation-payloads');
      assert.match(body.keyProvider.reason, /decrypt/);
    } finally {
      await server.close();
    }
  });

  it('a worker started while the KMS is down waits for its first data key, and a stop (SIGTERM, here through its abort signal) ends the wait with a typed error', async () => {
    // OpenBao is stopped by the test above: a fresh section has no data key and cannot make one.
    const config = loadWorkerConfig(variables);
    const warnings: string[] = [];
    const stop = new AbortController();
    const waiting = waitForFirstDataKey(keySourceFor(config.encryption!), {
      warn: (message) => warnings.push(message),
      info: () => undefined,
      abort: stop.signal,
    });
    while (warnings.length === 0) await new Promise((resolve) => setTimeout(resolve, 50));
    assert.match(warnings[0] ?? '', /unavailable \(datakey\).*the worker waits for it before polling \(attempt 1/);
    stop.abort('SIGTERM');
    await assert.rejects(waiting, (error: unknown) => {
      assert.ok(error instanceof KeyProviderWaitAbortedError, String(error));
      assert.equal(error.signal, 'SIGTERM');
      assert.ok(error.cause instanceof KeyProviderUnavailableError);
      return true;
    });
    assert.equal(keyProviderHealthOf(config.encryption)?.status.state, 'unavailable');
  });
});

describe('sealing through a KMS outage, bounded', () => {
  it('seals on the last data key past its bound only so far, then stops with SealingStoppedError, and the health says so', async () => {
    const outage = await startOpenBao();
    try {
      const token = await outage.token('aggregation-worker', workerPolicy(outage.transitKey));
      const config = loadWorkerConfig({
        ...variables,
        PAYLOAD_VAULT_ADDR: outage.address,
        PAYLOAD_VAULT_TOKEN: token,
        PAYLOAD_DATA_KEY_MAX_USES: '1',
        PAYLOAD_DATA_KEY_OUTAGE_MAX_USES: '1',
      });
      const encryption = config.encryption ?? assert.fail('encryption on');
      const codec = new EncryptionCodec(keySourceFor(encryption));
      const health = keyProviderHealthOf(encryption) ?? assert.fail('a KMS health');
      const payload = () => defaultPayloadConverter.toPayload({ password: 'Everyday' });
      await codec.encode([payload()]);
      assert.equal(health.status.sealing, 'ok');
      await outage.stop();
      await codec.encode([payload()]); // one past its bound, in the outage
      await assert.rejects(codec.encode([payload()]), (error: unknown) => error instanceof SealingStoppedError && error.bound === 'uses');
      assert.equal(health.status.sealing, 'stopped');
      assert.match(health.status.sealingStoppedBecause ?? '', /PAYLOAD_DATA_KEY_OUTAGE_MAX_USES/);
    } finally {
      await outage.stop();
    }
  });
});
