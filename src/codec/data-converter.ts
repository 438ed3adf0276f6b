/**
 * The data converters every process uses: the SDK's default payload converter, the encryption codec
 * (on by default), and the payload store that keeps large payloads out of history (the SDK's External
 * Storage; it stores what the codec has already encrypted). Worker, pipeline client, CLI and console
 * must agree: a process without the key reads `binary/encrypted` payloads it cannot decode, and one
 * without the store cannot follow a reference.
 *
 * The codec's keys come from the key provider of the `encryption` section (key-provider.ts): every
 * converter built from one section shares its key source, so a process holds one data key at a time.
 *
 * The worker's differs in two ways: a workflow's message it cannot decode (unknown encoding, not
 * JSON, a key nobody has) reaches the workflow as a marker its handlers refuse, instead of failing
 * every workflow task of the connection (see payload-converter.ts); and failure messages travel as
 * payloads, so they are encrypted too (failure-converter.ts).
 */
import type { DataConverter } from '@temporalio/common';
import { externalStorageFor } from '../payload-store/external-storage.js';
import type { PayloadStoreSettings } from '../payload-store/settings.js';
import { FAILURE_CONVERTER_PATH, PAYLOAD_CONVERTER_PATH } from '../bundle/workflow-code.js';
import { EncryptionCodec, type EncryptionCodecOptions } from './encryption-codec.js';
import { keySourceFor, type EncryptionSettings } from './key-provider.js';

/**
 * What a process's data converter is built from: the payload sections of its settings (src/settings/payload-store.ts),
 * or a test's own. No codec without `encryption`; no payload store without `payloadStore`.
 */
export interface PayloadSettings {
  readonly encryption?: EncryptionSettings | undefined;
  readonly payloadStore?: PayloadStoreSettings | undefined;
}

/** The encryption codec of a config, or undefined when encryption is off. */
export function encryptionCodecFor(config: Pick<PayloadSettings, 'encryption'>): EncryptionCodec | undefined {
  return config.encryption ? new EncryptionCodec(keySourceFor(config.encryption)) : undefined;
}

function externalStorageOf(config: PayloadSettings): Pick<DataConverter, 'externalStorage'> {
  const externalStorage = config.payloadStore ? externalStorageFor(config.payloadStore) : undefined;
  return externalStorage ? { externalStorage } : {};
}

/** Clients: the encryption codec and the payload store when configured; undefined (the SDK's default) when neither is. */
export function dataConverterFor(config: PayloadSettings): DataConverter | undefined {
  const codec = encryptionCodecFor(config);
  const storage = externalStorageOf(config);
  if (!codec && !storage.externalStorage) return undefined;
  return { payloadCodecs: codec ? [codec] : [], ...storage };
}

/**
 * Workers: the message-tolerant payload converter, failure messages carried as payloads (encrypted
 * with the rest), and the encryption codec marking undecryptable messages.
 */
export function workerDataConverterFor(config: PayloadSettings & { readonly refuseUnboundPayloads?: boolean | undefined }): DataConverter {
  return workerConverter(config, { markUndecodableMessages: true, refuseUnbound: config.refuseUnboundPayloads ?? false });
}

/**
 * Replays of a history written before encryption was turned on (not one sealed payload in it): the
 * worker's, except that its unsealed payloads are read as they are (the one place an unsealed payload
 * is read). Any other history replays with the worker's own converter: its worker refused the
 * unsealed payloads in it, and a replay must refuse them as well to take the same path.
 */
export function replayDataConverterFor(config: PayloadSettings): DataConverter {
  return workerConverter(config, { markUndecodableMessages: true, readUnsealedForReplay: true });
}

function workerConverter(config: PayloadSettings, codecOptions: EncryptionCodecOptions): DataConverter {
  return {
    payloadConverterPath: PAYLOAD_CONVERTER_PATH,
    failureConverterPath: FAILURE_CONVERTER_PATH,
    payloadCodecs: config.encryption ? [new EncryptionCodec(keySourceFor(config.encryption), codecOptions)] : [],
    ...externalStorageOf(config),
  };
}
