/**
 * Where large payloads go, as src/settings/payload-store.ts hands it over (it parses the environment into this; nothing
 * here reads process.env). Every process that writes or reads workflow payloads (worker, pipeline
 * client, CLI, console) must get the same settings: a process without them fails on a reference
 * payload with the SDK's ExternalStorageNotConfiguredError.
 */
import type { S3DriverOptions } from './s3-driver.js';

/** The most a payload left in history may weigh (the limit): 256 KiB. */
export const HISTORY_PAYLOAD_LIMIT_BYTES = 256 * 1024;

/**
 * Default offload threshold: 128 KiB. The SDK offloads a payload when its encoded size (after the
 * codecs, so ciphertext size) is at least the threshold, so anything left inline is under 128 KiB,
 * half the 256 KiB limit. The margin keeps one event carrying several inline payloads (an activity
 * with a few arguments) well below the server's 512 KiB warning and 2 MiB blob limit, and keeps a
 * connection's history small across its many polls; a payload between 128 and 256 KiB costs one
 * extra store round trip, which is rare (most payloads here are a few KiB of JSON).
 */
export const DEFAULT_PAYLOAD_SIZE_THRESHOLD_BYTES = 128 * 1024;

interface ThresholdSetting {
  /** Payloads of at least this many encoded bytes are stored outside history. 0..256 KiB; default 128 KiB. */
  readonly thresholdBytes?: number | undefined;
}

/** No external storage: every payload stays in history (the server refuses payloads over 2 MiB). */
export interface PayloadStoreOff {
  readonly kind: 'off';
}

/** A local directory: the dev stack, the demo and tests; one machine only. */
export interface LocalPayloadStoreSettings extends ThresholdSetting {
  readonly kind: 'local';
  /** Must live as long as the histories referring to it (next to the dev server's database). */
  readonly directory: string;
}

/** S3, or an S3-compatible server (MinIO): production. The driver's options, less an injected client. */
export interface S3PayloadStoreSettings extends ThresholdSetting, Omit<S3DriverOptions, 'client'> {
  readonly kind: 's3';
}

export type PayloadStoreSettings = PayloadStoreOff | LocalPayloadStoreSettings | S3PayloadStoreSettings;
