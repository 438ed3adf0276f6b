/** The payloads of a raw (undecoded) history, found where they are: for tools and tests that look at what Temporal stores. */
import type { Payload } from '@temporalio/common';
import { isEncrypted } from '../../src/codec/payload-format.js';

/** Every payload under `value` with its path (search attributes excepted: Temporal indexes those, no codec applies). */
export function payloadsIn(value: unknown, path = ''): { path: string; payload: Payload }[] {
  if (value === null || typeof value !== 'object' || value instanceof Uint8Array) return [];
  if (Array.isArray(value)) return value.flatMap((item, index) => payloadsIn(item, `${path}[${index}]`));
  const record = value as Record<string, unknown>;
  if ('metadata' in record && 'data' in record) return [{ path, payload: record }];
  return Object.entries(record)
    .filter(([key]) => key !== 'searchAttributes')
    .flatMap(([key, child]) => payloadsIn(child, path ? `${path}.${key}` : key));
}

/** A local activity's marker bookkeeping of the SDK core (its `result` is encrypted). */
export const isCoreBookkeeping = ({ path }: { path: string }): boolean => /markerRecordedEventAttributes\.details\.data\./.test(path);
/** A patch marker (workflow versioning) names its patch in clear: code, not data. */
export const isPatchMarker = ({ path }: { path: string }): boolean => /markerRecordedEventAttributes\.details\.patch-data\./.test(path);
/** A header field (the trace context): the SDK passes headers to no codec. */
export const isHeaderField = ({ path }: { path: string }): boolean => /(^|\.)header\.fields\./.test(path);

/**
 * Whether the SDK hands this payload to the codec at all: not a header field, nor the core's own
 * marker bookkeeping. Those are written and read in clear by the SDK, so a reader that refuses
 * unsealed payloads must leave them out rather than call them unsealed.
 */
export const passesThroughCodec = (found: { path: string }): boolean => !isHeaderField(found) && !isCoreBookkeeping(found) && !isPatchMarker(found);

/**
 * Whether a history was written before encryption was turned on: not one payload the codec sees is
 * sealed. Only such a history replays with replayDataConverterFor (src/codec/data-converter.ts).
 */
export function writtenBeforeEncryption(history: unknown): boolean {
  return !payloadsIn(history)
    .filter(passesThroughCodec)
    .some(({ payload }) => isEncrypted(payload));
}
