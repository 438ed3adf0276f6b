/**
 * A workflow's history exactly as the server stores it: fetched over raw gRPC (no data converter,
 * no codec, no external storage, so reference payloads stay references), and every Payload in it.
 */
import type { Connection } from '@temporalio/client';
import type { Payload } from '@temporalio/common';
import proto from '@temporalio/proto';

const { History, HistoryEvent } = proto.temporal.api.history.v1;
const { Payload: PayloadMessage } = proto.temporal.api.common.v1;
type RawHistoryEvent = proto.temporal.api.history.v1.IHistoryEvent;

const decoder = new TextDecoder();
const REFERENCE_MESSAGE_TYPE = 'temporal.api.sdk.v1.ExternalStorageReference';

export interface RawHistory {
  readonly events: RawHistoryEvent[];
  /** The whole history, proto-encoded. */
  readonly bytes: Buffer;
}

export async function fetchRawHistory(connection: Connection, namespace: string, workflowId: string): Promise<RawHistory> {
  const events: RawHistoryEvent[] = [];
  let nextPageToken: Uint8Array | undefined;
  do {
    const page = await connection.workflowService.getWorkflowExecutionHistory({ namespace, execution: { workflowId }, nextPageToken });
    events.push(...(page.history?.events ?? []));
    nextPageToken = page.nextPageToken?.length ? page.nextPageToken : undefined;
  } while (nextPageToken);
  return { events, bytes: Buffer.from(History.encode({ events }).finish()) };
}

/** Every Payload message anywhere in the events (inputs, results, failures, headers, summaries...). */
export function payloadsIn(events: readonly RawHistoryEvent[]): Payload[] {
  const found: Payload[] = [];
  const seen = new Set<object>();
  const walk = (value: unknown): void => {
    if (value === null || typeof value !== 'object' || value instanceof Uint8Array || seen.has(value)) return;
    seen.add(value);
    if (isPayload(value)) {
      found.push(value);
      return;
    }
    for (const child of Object.values(value)) walk(child);
  };
  // Through toObject-free plain copies: decoded messages keep set fields as own properties.
  for (const event of events) walk(HistoryEvent.decode(HistoryEvent.encode(event).finish()));
  return found;
}

function isPayload(value: object): value is Payload {
  const candidate = value as { data?: unknown; metadata?: unknown };
  return candidate.data instanceof Uint8Array && typeof candidate.metadata === 'object' && candidate.metadata !== null;
}

/** The payload's size as Temporal counts it: its proto encoding. */
export function encodedSize(payload: Payload): number {
  return PayloadMessage.encode(payload).finish().length;
}

export function isReference(payload: Payload): boolean {
  const messageType = payload.metadata?.messageType;
  return messageType !== undefined && messageType !== null && decoder.decode(messageType) === REFERENCE_MESSAGE_TYPE;
}

/**
 * Whether `secret` is in `haystack` in clear. A secret of hex digits alone (a 6-digit code, an
 * account number) can also sit by chance inside the history's own hex identifiers (run ids and
 * request ids are UUIDs, build ids and store keys are hashes: one history holds hundreds), where it
 * is no leak: those are blanked first. A secret in clear is still found, delimited by anything
 * that is not a hex digit (a JSON quote, a field's length byte).
 */
export function holdsInClear(haystack: Buffer, secret: string): boolean {
  if (!/^[0-9a-f]+$/i.test(secret)) return haystack.includes(secret);
  const text = haystack.toString('latin1').replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[0-9a-f]{8,}/gi, '#');
  return text.includes(secret);
}
