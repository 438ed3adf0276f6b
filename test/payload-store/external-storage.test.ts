/**
 * The factory the payload settings (src/settings/payload-store.ts) wire in: settings to driver and External Storage, and the threshold that
 * keeps every payload left in history under 256 KiB (checked against the SDK's own runner).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Payload } from '@temporalio/common';
import { ExternalStorageRunner } from '../../src/sdk/internals.js';
import proto from '@temporalio/proto';
import {
  DEFAULT_PAYLOAD_SIZE_THRESHOLD_BYTES,
  externalStorageFor,
  externalStorageWith,
  HISTORY_PAYLOAD_LIMIT_BYTES,
  LocalDirectoryStorageDriver,
  payloadStoreFor,
  PayloadStoreSettingsError,
  S3StorageDriver,
} from '../../src/payload-store/index.js';

const { Payload: PayloadMessage } = proto.temporal.api.common.v1;

/** A payload whose proto encoding is exactly `bytes` long (length prefixes grow in steps, so search). */
function payloadOfSize(bytes: number): Payload {
  for (let dataBytes = bytes; dataBytes >= 0; dataBytes--) {
    const payload: Payload = { metadata: { encoding: new TextEncoder().encode('binary/plain') }, data: new Uint8Array(dataBytes) };
    if (PayloadMessage.encode(payload).finish().length === bytes) return payload;
  }
  return assert.fail(`no payload encodes to ${bytes} bytes`);
}

void describe('externalStorageFor', () => {
  void it('is undefined when the store is off, so the data converter keeps every payload inline', () => {
    assert.equal(externalStorageFor({ kind: 'off' }), undefined);
    assert.equal(payloadStoreFor({ kind: 'off' }), undefined);
  });

  void it('offloads from 128 KiB by default, half the 256 KiB limit', () => {
    assert.equal(DEFAULT_PAYLOAD_SIZE_THRESHOLD_BYTES, 128 * 1024);
    assert.equal(externalStorageFor({ kind: 'local', directory: '/tmp/payloads' })?.payloadSizeThreshold, 128 * 1024);
  });

  void it('builds the driver the settings name, with their directory, bucket and prefix', () => {
    const local = payloadStoreFor({ kind: 'local', directory: '/var/lib/payloads', thresholdBytes: 1000 });
    assert.ok(local?.driver instanceof LocalDirectoryStorageDriver);
    assert.equal(local.driver.location, '/var/lib/payloads');
    assert.equal(local.externalStorage.payloadSizeThreshold, 1000);
    assert.equal(local.externalStorage.getDriver(local.driver.name), local.driver);

    const s3 = payloadStoreFor({ kind: 's3', bucket: 'payloads', prefix: 'prod/temporal', region: 'eu-west-1' });
    try {
      assert.ok(s3?.driver instanceof S3StorageDriver);
      assert.equal(s3.driver.location, 's3://payloads/prod/temporal/');
      assert.equal(s3.driver.prefix, 'prod/temporal');
    } finally {
      s3?.driver.close();
    }
  });

  void it('refuses a threshold above 256 KiB, negative or fractional, naming the setting', () => {
    for (const thresholdBytes of [HISTORY_PAYLOAD_LIMIT_BYTES + 1, -1, 1.5, Number.NaN]) {
      assert.throws(
        () => payloadStoreFor({ kind: 'local', directory: '/tmp/payloads', thresholdBytes }),
        (error: unknown) => error instanceof PayloadStoreSettingsError && error.setting === 'thresholdBytes',
        String(thresholdBytes),
      );
    }
    assert.equal(
      payloadStoreFor({ kind: 'local', directory: '/tmp/payloads', thresholdBytes: HISTORY_PAYLOAD_LIMIT_BYTES })?.thresholdBytes,
      HISTORY_PAYLOAD_LIMIT_BYTES,
    );
    assert.throws(() => payloadStoreFor({ kind: 'local', directory: ' ' }), PayloadStoreSettingsError);
  });

  void it('keeps a payload one byte under the threshold inline and offloads one at the threshold (the SDK runner)', async () => {
    const driver = new LocalDirectoryStorageDriver({ directory: '/nonexistent/never-written' });
    const stored: Payload[] = [];
    const recording = Object.assign(Object.create(driver) as LocalDirectoryStorageDriver, {
      store: (_context: unknown, payloads: Payload[]) => {
        stored.push(...payloads);
        return Promise.resolve(payloads.map((_, index) => ({ claimData: { key: `k${index}` } })));
      },
    });
    const threshold = 4096;
    const runner = new ExternalStorageRunner(externalStorageWith(recording, threshold));
    const under = payloadOfSize(threshold - 1);
    const at = payloadOfSize(threshold);
    const [keptInline, offloaded] = await runner.store([under, at]);
    assert.equal(keptInline, under);
    assert.notEqual(offloaded, at);
    assert.deepEqual(stored, [at]);
  });
});
