/**
 * The data converter every process uses: the SDK's default payload converter, plus the encryption
 * codec when PAYLOAD_ENCRYPTION_KEY is set. Worker, pipeline client, CLI and console must agree:
 * a process without the key reads `binary/encrypted` payloads it cannot decode.
 *
 * Only the codec is configured here: workflow code (in the worker's sandbox) never sees encrypted
 * payloads, so nothing here has to be bundled with the workflows.
 */
import type { DataConverter } from '@temporalio/common';
import type { EncryptionSettings } from '../config.js';
import { EncryptionCodec } from './encryption-codec.js';

/** The encryption codec of a config, or undefined when encryption is off. */
export function encryptionCodecFor(config: EncryptionSettings): EncryptionCodec | undefined {
  return config.encryption ? new EncryptionCodec(config.encryption) : undefined;
}

/** `{ payloadCodecs: [encryption codec] }`, or undefined (the SDK's default) when no key is configured. */
export function dataConverterFor(config: EncryptionSettings): DataConverter | undefined {
  const codec = encryptionCodecFor(config);
  return codec ? { payloadCodecs: [codec] } : undefined;
}
