/**
 * The data converters every process uses: the SDK's default payload converter plus the encryption
 * codec when PAYLOAD_ENCRYPTION_KEY is set. Worker, pipeline client, CLI and console must agree: a
 * process without the key reads `binary/encrypted` payloads it cannot decode.
 *
 * The worker's differs in two ways: a workflow's message it cannot decode (unknown encoding, not
 * JSON, a key nobody has) reaches the workflow as a marker its handlers refuse, instead of failing
 * every workflow task of the connection (see payload-converter.ts); and failure messages travel as
 * payloads, so they are encrypted too (failure-converter.ts).
 */
import type { DataConverter } from '@temporalio/common';
import type { EncryptionSettings } from '../config.js';
import { FAILURE_CONVERTER_PATH, PAYLOAD_CONVERTER_PATH } from '../workflow-code.js';
import { EncryptionCodec } from './encryption-codec.js';

/** The encryption codec of a config, or undefined when encryption is off. */
export function encryptionCodecFor(config: EncryptionSettings): EncryptionCodec | undefined {
  return config.encryption ? new EncryptionCodec(config.encryption) : undefined;
}

/** Clients: `{ payloadCodecs: [encryption codec] }`, or undefined (the SDK's default) when no key is configured. */
export function dataConverterFor(config: EncryptionSettings): DataConverter | undefined {
  const codec = encryptionCodecFor(config);
  return codec ? { payloadCodecs: [codec] } : undefined;
}

/**
 * Workers: the message-tolerant payload converter, failure messages carried as payloads (encrypted
 * with the rest), and the encryption codec marking undecryptable messages.
 */
export function workerDataConverterFor(config: EncryptionSettings): DataConverter {
  return {
    payloadConverterPath: PAYLOAD_CONVERTER_PATH,
    failureConverterPath: FAILURE_CONVERTER_PATH,
    payloadCodecs: config.encryption ? [new EncryptionCodec(config.encryption, { markUndecodableMessages: true })] : [],
  };
}
