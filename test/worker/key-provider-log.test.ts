/**
 * The worker names a revoked key version and a destroyed key in its log (once each, however many
 * tasks fail on it) and in its metrics (`aggregation_key_provider_calls{outcome}`), apart from the
 * provider's own outages, and never counts them as the provider failing.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KeyProviderHealth } from '../../src/codec/key-provider-health.js';
import { KeyDestroyedError, KeyProviderUnavailableError, KeyVersionRevokedError } from '../../src/codec/payload-errors.js';
import { recordKeyProviderMetrics } from '../../src/metrics/key-provider-metrics.js';
import { logKeyProviderChanges, MAX_NAMED_UNREADABLE_KEYS } from '../../src/worker/key-provider-log.js';
import { recordingMeter } from '../helpers/recording-meter.js';

const KEY_ID = 'vault-transit:aggregation-payloads';
const revoked = (version: number) => new KeyVersionRevokedError(KEY_ID, 'aggregation-payloads', version, 'decryption of this version is disallowed');
const destroyed = (tenant: string) => new KeyDestroyedError(KEY_ID, `aggregation-payloads-tenant-${tenant}`, tenant, 'no existing key named');

function recordingLogger() {
  const lines: string[] = [];
  return { lines, info: (m: string) => lines.push(`INFO ${m}`), warn: (m: string) => lines.push(`WARN ${m}`), error: (m: string) => lines.push(`ERROR ${m}`) };
}

describe("the worker's log and metrics of unreadable payloads", () => {
  it('names a revoked version and a destroyed key once each, counts them by name, and keeps the provider ok', () => {
    const kms = new KeyProviderHealth(KEY_ID);
    const log = recordingLogger();
    const { adds, meter } = recordingMeter();
    const stopLog = logKeyProviderChanges(kms, log);
    const stopMetrics = recordKeyProviderMetrics(meter, kms);
    for (let task = 0; task < 3; task += 1) kms.record('decrypt', revoked(1));
    kms.record('decrypt', revoked(2));
    kms.record('decrypt', destroyed('lender-b'));
    kms.record('decrypt', destroyed('lender-b'));
    kms.record('decrypt');

    const warnings = log.lines.filter((line) => line.startsWith('WARN'));
    assert.equal(warnings.length, 3, log.lines.join('\n'));
    assert.match(
      warnings[0] ?? '',
      /^WARN key version revoked: .*version 1 of key "aggregation-payloads".* cannot run on this worker, and aggregation_key_provider_calls\{outcome="revoked"\}/,
    );
    assert.match(warnings[1] ?? '', /version 2 of key/);
    assert.match(warnings[2] ?? '', /^WARN key destroyed: .*"aggregation-payloads-tenant-lender-b" \(tenant "lender-b"\).*outcome="destroyed"/);
    assert.equal(adds.filter((add) => add.includes('outcome=revoked')).length, 4);
    assert.equal(adds.filter((add) => add.includes('outcome=destroyed')).length, 2);
    assert.equal(adds.filter((add) => add.includes('outcome=ok')).length, 1);
    assert.equal(kms.status.state, 'ok', "the payload's key, not the provider, is at fault");
    assert.equal(kms.status.failures, 0);
    stopLog();
    stopMetrics();
  });

  it('says an outage once and its end once, apart from the payloads it cannot open', () => {
    const kms = new KeyProviderHealth(KEY_ID);
    const log = recordingLogger();
    const stop = logKeyProviderChanges(kms, log);
    for (let call = 0; call < 3; call += 1) kms.record('datakey', new KeyProviderUnavailableError(KEY_ID, 'datakey', 'connection refused'));
    kms.record('datakey');
    assert.equal(log.lines.length, 2, log.lines.join('\n'));
    assert.match(log.lines[0] ?? '', /^WARN key provider vault-transit:aggregation-payloads unavailable: .*connection refused.*keeps running on cached keys/);
    assert.match(log.lines[1] ?? '', /^INFO key provider vault-transit:aggregation-payloads answers again/);
    stop();
  });

  it('names at most a bounded number of keys, whatever payloads claim', () => {
    const kms = new KeyProviderHealth(KEY_ID);
    const log = recordingLogger();
    const stop = logKeyProviderChanges(kms, log);
    for (let version = 1; version <= MAX_NAMED_UNREADABLE_KEYS + 50; version += 1) kms.record('decrypt', revoked(version));
    assert.equal(log.lines.length, MAX_NAMED_UNREADABLE_KEYS);
    stop();
  });
});
