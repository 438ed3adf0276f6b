/**
 * The SDK's External Storage built from settings: set `externalStorage` on the DataConverter of the
 * worker and of every client, next to the payload codecs.
 *
 * Order, from the SDK 1.24 source (worker.js, workflow-client.js): outbound, the codecs encode first
 * and External Storage stores the encoded payloads afterwards; inbound, references are retrieved
 * first and the codecs decode afterwards. So with encryption on the stored bytes are ciphertext, and
 * the drivers need no codec of their own. The small reference left in history is not encrypted: it
 * names the namespace, workflow id and SHA-256 of the ciphertext, nothing of the content.
 */
import { ExternalStorage } from '@temporalio/common';
import { PayloadStoreSettingsError } from './errors.js';
import { LocalDirectoryStorageDriver } from './local-directory-driver.js';
import type { PayloadStoreDriver } from './payload-store-driver.js';
import { S3StorageDriver } from './s3-driver.js';
import { DEFAULT_PAYLOAD_SIZE_THRESHOLD_BYTES, HISTORY_PAYLOAD_LIMIT_BYTES, type PayloadStoreSettings } from './settings.js';

/** A driver and the External Storage that routes payloads to it. */
export interface PayloadStore {
  /** Also what deletes a connection's payloads (`deleteWorkflowPayloads`); `close()` it at shutdown. */
  readonly driver: PayloadStoreDriver;
  readonly externalStorage: ExternalStorage;
  readonly thresholdBytes: number;
}

/** The driver the settings describe, or undefined when storage is off. */
export function payloadStoreDriverFor(settings: PayloadStoreSettings): PayloadStoreDriver | undefined {
  switch (settings.kind) {
    case 'off':
      return undefined;
    case 'local':
      if (settings.directory.trim() === '') throw new PayloadStoreSettingsError('directory', 'must not be empty');
      return new LocalDirectoryStorageDriver({ directory: settings.directory });
    case 's3':
      return new S3StorageDriver(settings);
  }
}

/** The SDK's ExternalStorage over one driver, offloading payloads of at least `thresholdBytes` (checked). */
export function externalStorageWith(driver: PayloadStoreDriver, thresholdBytes: number = DEFAULT_PAYLOAD_SIZE_THRESHOLD_BYTES): ExternalStorage {
  return new ExternalStorage({ drivers: [driver], payloadSizeThreshold: checkedThreshold(thresholdBytes) });
}

/** Driver and External Storage for the settings, or undefined when storage is off. */
export function payloadStoreFor(settings: PayloadStoreSettings): PayloadStore | undefined {
  if (settings.kind === 'off') return undefined;
  const thresholdBytes = checkedThreshold(settings.thresholdBytes ?? DEFAULT_PAYLOAD_SIZE_THRESHOLD_BYTES);
  const driver = payloadStoreDriverFor(settings);
  if (!driver) return undefined;
  return { driver, externalStorage: externalStorageWith(driver, thresholdBytes), thresholdBytes };
}

/** `DataConverter.externalStorage` for the settings, or undefined when storage is off. */
export function externalStorageFor(settings: PayloadStoreSettings): ExternalStorage | undefined {
  return payloadStoreFor(settings)?.externalStorage;
}

/**
 * The SDK keeps a payload inline when its encoded size is below the threshold, so a threshold of at
 * most 256 KiB is what guarantees no payload over 256 KiB in history.
 */
function checkedThreshold(thresholdBytes: number): number {
  if (!Number.isInteger(thresholdBytes) || thresholdBytes < 0 || thresholdBytes > HISTORY_PAYLOAD_LIMIT_BYTES) {
    throw new PayloadStoreSettingsError(
      'thresholdBytes',
      `must be a whole number of bytes from 0 to ${HISTORY_PAYLOAD_LIMIT_BYTES} (256 KiB), got ${String(thresholdBytes)}: larger payloads must not stay in history`,
    );
  }
  return thresholdBytes;
}
