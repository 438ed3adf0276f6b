/**
 * The worker's payload converter (loaded by path into the workflow bundle and the worker): the SDK's
 * default converter, except that a workflow's message that cannot be decoded (an unknown encoding,
 * data that is not JSON, a payload the codec could not decrypt) becomes an UndecodablePayload marker
 * instead of an exception. The SDK fails the whole workflow task when a signal's argument cannot be
 * converted, every time it replays it: one bad `temporal workflow signal` would wedge a connection,
 * its deadlines and its queries for good. Handlers refuse the marker instead.
 *
 * Only workflow-owned payloads are tolerated: an activity's result that cannot be decoded still
 * fails the task, which retries until the worker is fixed (e.g. a missing decryption key).
 */
import { defaultPayloadConverter, type Payload, type PayloadConverter, type SerializationContext } from '@temporalio/common';
import type { UndecodablePayload } from '../contract/undecodable-payload.js';
import { UNDECODABLE_ENCODING, UNDECODABLE_REASON_METADATA_KEY } from './undecodable.js';

class MessageTolerantPayloadConverter implements PayloadConverter {
  toPayload<T>(value: T, context?: SerializationContext): Payload {
    return defaultPayloadConverter.toPayload(value, context);
  }

  fromPayload<T>(payload: Payload, context?: SerializationContext): T {
    if (context?.type !== 'workflow') return defaultPayloadConverter.fromPayload<T>(payload, context);
    try {
      return defaultPayloadConverter.fromPayload<T>(payload, context);
    } catch {
      const marker: UndecodablePayload = { undecodablePayload: reasonOf(payload) };
      return marker as T;
    }
  }
}

/** Names the problem without quoting the data (it may hold an answer or a password). */
function reasonOf(payload: Payload): string {
  const decoder = new TextDecoder();
  const encoding = payload.metadata?.encoding ? decoder.decode(payload.metadata.encoding) : undefined;
  if (encoding === UNDECODABLE_ENCODING) {
    const reason = payload.metadata?.[UNDECODABLE_REASON_METADATA_KEY];
    return reason ? decoder.decode(reason) : 'the payload could not be decrypted';
  }
  if (encoding === undefined) return 'the payload has no encoding';
  if (encoding === 'json/plain') return 'the payload is marked json/plain but is not valid JSON';
  return `the payload's encoding "${encoding.slice(0, 64)}" is not one this worker reads`;
}

export const payloadConverter: PayloadConverter = new MessageTolerantPayloadConverter();
