/**
 * A configured (static) key counts its uses: every payload the codec seals with it is counted on the
 * worker's metric, and a process that alone passes the warning mark says so once in its log, naming
 * the key. Payloads it only opens (and a KMS's data keys) are not counted.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { defaultPayloadConverter } from '@temporalio/common';
import { EncryptionCodec } from '../../src/codec/encryption-codec.js';
import { STATIC_KEY_SEAL_BOUND, StaticKeySource } from '../../src/codec/key-source.js';
import { recordStaticKeyUse, STATIC_KEY_SEALS_METRIC, STATIC_KEY_WARN_SEALS } from '../../src/metrics/static-key-metrics.js';
import { recordingMeter } from '../helpers/recording-meter.js';

const payload = (value: unknown) => defaultPayloadConverter.toPayload(value);

describe("a static key's uses", () => {
  it('counts every payload sealed, not those opened, and warns once past the mark', async () => {
    const source = new StaticKeySource({ keyId: 'static-2026', key: randomBytes(32) });
    const codec = new EncryptionCodec(source);
    const { totals, meter } = recordingMeter();
    const warnings: string[] = [];
    const stop = recordStaticKeyUse(meter, source, (message) => warnings.push(message), 5);

    const sealed = await codec.encode([payload(1), payload(2), payload(3)]);
    await codec.decode(sealed);
    assert.equal(source.sealedByThisProcess, 3);
    assert.deepEqual(warnings, [], 'below the mark');
    await codec.encode([payload(4), payload(5)]);
    await codec.encode([payload(6)]);
    await codec.encode([payload(7)]);

    assert.equal(totals.get(`${STATIC_KEY_SEALS_METRIC}{key_id=static-2026}`), 7);
    assert.equal(warnings.length, 1, warnings.join('\n'));
    assert.match(
      warnings[0] ?? '',
      /static key "static-2026": this process alone has sealed 5 payloads with it, .*safe for 4294967296 under one key .*rotate it/,
    );
    stop();
    await codec.encode([payload(8)]);
    assert.equal(totals.get(`${STATIC_KEY_SEALS_METRIC}{key_id=static-2026}`), 7, 'nothing counted after the unsubscribe');
  });

  it("warns by default at a quarter of AES-GCM's bound for random nonces", () => {
    assert.equal(STATIC_KEY_SEAL_BOUND, 2 ** 32);
    assert.equal(STATIC_KEY_WARN_SEALS, 2 ** 30);
  });
});
