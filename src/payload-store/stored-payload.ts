/**
 * The bytes a driver stores for a payload: the whole Payload message (metadata and data), proto
 * encoded, exactly as Temporal would have put it in history. External storage runs after the payload
 * codecs, so with encryption on this is the codec's output (`binary/encrypted`), not plaintext.
 */
import type { Payload } from '@temporalio/common';
import proto from '@temporalio/proto';
import { sha256Hex } from './object-keys.js';

const { Payload: PayloadMessage } = proto.temporal.api.common.v1;

export interface SerializedPayload {
  readonly bytes: Uint8Array;
  readonly sha256: string;
}

export function serializePayload(payload: Payload): SerializedPayload {
  const bytes = PayloadMessage.encode(payload).finish();
  return { bytes, sha256: sha256Hex(bytes) };
}

export function deserializePayload(bytes: Uint8Array): Payload {
  const decoded = PayloadMessage.decode(bytes);
  return { metadata: decoded.metadata, data: decoded.data };
}
