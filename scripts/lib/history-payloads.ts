/** The payloads of a raw (undecoded) history, found where they are: for tools and tests that look at what Temporal stores. */
import type { Payload } from '@temporalio/common';

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
