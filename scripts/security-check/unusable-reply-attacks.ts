/**
 * security:check's attack on an unusable reply's path into history. When the service answers a 2xx
 * the product cannot act on (a data answer without RequestId), the aggregation client fails the
 * connection `UnexpectedResponse` at once and keeps the body's first 4 KiB (`replyExcerpt`) in the
 * failure's details (src/activities/failures.ts, src/workflows/connection/failures.ts). Such a body may echo an
 * applicant's data; an attacker who can read the namespace's histories but holds no key must find
 * none of it: the details are sealed by the payload codec, and the message names the operation, the
 * status and the fields only.
 */
import type { Payload } from '@temporalio/common';
import { ApplicationFailure, WorkflowFailedError } from '@temporalio/client';
import { ConnectionFailedError } from '../../src/client/index.js';
import { ENCODING_METADATA_KEY, isEncrypted } from '../../src/codec/payload-format.js';
import type { ServiceFailureDetails } from '../../src/aggregator/failure-table.js';
import { UNUSABLE_REPLY_MARKERS } from '../../sandbox/faults.js';
import { decodeOptionalFailureToOptionalError } from '../../src/sdk/internals.js';
import { savedLogin } from './admission-attacks.js';
import type { HistoryEvents } from './admission-attacks.js';
import type { AttackResult, MessageTarget } from './attacks.js';

const ATTACK_NAME = "an unusable reply's body in clear in history";

/** The failure type the connection must end with, and the control the search must see in clear. */
const EXPECTED_TYPE = 'UnexpectedResponse';

export interface Marker {
  readonly label: string;
  readonly value: string;
}

/** The applicant's values the sandbox's `unusable_reply` answer echoes. */
export const UNUSABLE_REPLY_MARKER_LIST: readonly Marker[] = [
  { label: "the holder's name", value: UNUSABLE_REPLY_MARKERS.holderName },
  { label: "the holder's email", value: UNUSABLE_REPLY_MARKERS.email },
  { label: "a transaction's description", value: UNUSABLE_REPLY_MARKERS.transactionDescription },
];

type HistoryEvent = HistoryEvents[number];

/** A proto failure as the raw history holds it (undecoded). */
type RawFailure = NonNullable<NonNullable<HistoryEvent['workflowExecutionFailedEventAttributes']>['failure']>;

/**
 * Every place under the events where a text or byte field holds `value` in clear: failure messages,
 * stack traces and causes, user metadata (summaries), memos, search attributes, and any payload's
 * bytes (a sealed payload's are ciphertext). Each named as `event <id> (<type>) <path>`.
 */
export function clearTextHits(events: readonly HistoryEvent[], markers: readonly Marker[]): string[] {
  const hits: string[] = [];
  events.forEach((event, index) => {
    const where = `event ${String(event.eventId ?? index + 1)} (${eventTypeOf(event)})`;
    walk(event, '', (path, text) => {
      for (const { label, value } of markers) if (text.includes(value)) hits.push(`${label} in ${where} ${path}`);
    });
  });
  return hits;
}

/** Calls `visit` with every string and every byte field (as UTF-8) under `value`, with its path. */
function walk(value: unknown, path: string, visit: (path: string, text: string) => void, depth = 0): void {
  if (value === null || value === undefined || depth > 64) return;
  if (typeof value === 'string') return visit(path, value);
  if (value instanceof Uint8Array) return visit(path, Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('utf8'));
  if (typeof value !== 'object') return;
  if (Array.isArray(value)) {
    value.forEach((item, index) => walk(item, `${path}[${index}]`, visit, depth + 1));
    return;
  }
  for (const [key, child] of Object.entries(value as Record<string, unknown>)) walk(child, path ? `${path}.${key}` : key, visit, depth + 1);
}

function eventTypeOf(event: HistoryEvent): string {
  const attributes = Object.keys(event).find((key) => key.endsWith('EventAttributes') && (event as Record<string, unknown>)[key] != null);
  return attributes?.replace(/EventAttributes$/, '') ?? 'event';
}

/** A failure of type `type` found in the events (an activity's, a marker's, the workflow's own, or a cause), with where. */
export interface FoundFailure {
  readonly where: string;
  readonly failure: RawFailure;
}

/** Every failure in the events whose application type is `type`, at any depth (causes included). */
export function failuresOfType(events: readonly HistoryEvent[], type: string): FoundFailure[] {
  const found: FoundFailure[] = [];
  const visit = (value: unknown, where: string, depth: number): void => {
    if (value === null || typeof value !== 'object' || value instanceof Uint8Array || depth > 64) return;
    if (Array.isArray(value)) {
      value.forEach((item, index) => visit(item, `${where}[${index}]`, depth + 1));
      return;
    }
    const record = value as Record<string, unknown>;
    const info = record.applicationFailureInfo as { type?: unknown } | null | undefined;
    if (info && info.type === type) found.push({ where, failure: record });
    for (const [key, child] of Object.entries(record)) visit(child, `${where}.${key}`, depth + 1);
  };
  events.forEach((event, index) => visit(event, `event ${String(event.eventId ?? index + 1)} (${eventTypeOf(event)})`, 0));
  return found;
}

function encodingOf(payload: Payload): string {
  const bytes = payload.metadata?.[ENCODING_METADATA_KEY];
  return bytes ? Buffer.from(bytes).toString('utf8') : '(none)';
}

/** The failures whose details payloads are not sealed (or that carry none), each with the encodings it has. */
export function unsealedDetails(failures: readonly FoundFailure[]): string[] {
  return failures.flatMap(({ where, failure }) => {
    const payloads = (failure.applicationFailureInfo?.details?.payloads ?? []) as Payload[];
    if (payloads.length === 0) return [`${where}: no details`];
    const clear = payloads.filter((payload) => !isEncrypted(payload));
    return clear.length === 0 ? [] : [`${where}: details encoded ${clear.map(encodingOf).join(', ')}`];
  });
}

/**
 * Starts a cached connection on the sandbox's `unusable_reply` login through the product's client
 * (its first data request answers HTTP 200 echoing an applicant's holder and transactions, without
 * RequestId), waits for it to fail, then reads its whole history with the raw client. Refused when
 * the connection failed `UnexpectedResponse`; no marker is in clear anywhere in the history (the
 * search proved to see clear text: the failure's type is found where it is); every failure of that
 * type carries details and they are sealed (encoding binary/encrypted); and with the product's sealed
 * converter each decodes to a `replyExcerpt` holding every marker (kept for diagnosis), as the
 * product's client's error does.
 */
export async function unusableReplyInHistory(target: MessageTarget, sandboxUrl: string): Promise<AttackResult> {
  const { customerId } = target;
  const namespace = target.raw.options.namespace;
  const loginId = await savedLogin(sandboxUrl, customerId, 'unusable_reply');
  const { workflowId } = await target.connections.start(`connection-${customerId}:unusable-reply`, {
    customerId,
    session: { kind: 'cached', loginId },
    products: { accountsDetail: {} },
  });
  const ended = await target.connections.result(workflowId).then(
    () => undefined,
    (error: unknown) => error,
  );
  const failedAs =
    ended instanceof ConnectionFailedError
      ? ended.type
      : ended === undefined
        ? 'completed'
        : ended instanceof Error
          ? `${ended.name}: ${ended.message}`
          : 'an unknown error';
  const problems: string[] = [];
  if (failedAs !== EXPECTED_TYPE) problems.push(`the connection ended ${failedAs}, not ${EXPECTED_TYPE}`);
  const fromClient = ended instanceof ConnectionFailedError ? excerptOf(ended.cause instanceof WorkflowFailedError ? ended.cause.cause : undefined) : undefined;
  if (ended instanceof ConnectionFailedError) {
    const inReason = UNUSABLE_REPLY_MARKER_LIST.filter(({ value }) => ended.reason.includes(value)).map(({ label }) => label);
    if (inReason.length > 0) problems.push(`the failure's message quotes ${inReason.join(', ')}`);
    const missing = missingMarkers(fromClient);
    if (missing.length > 0)
      problems.push(`the product's client's failure details lack ${missing.join(', ')}${fromClient === undefined ? ' (no replyExcerpt)' : ''}`);
  }

  const events = (await target.raw.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
  const hits = clearTextHits(events, UNUSABLE_REPLY_MARKER_LIST);
  if (hits.length > 0) problems.push(`in clear: ${hits.slice(0, 4).join('; ')}${hits.length > 4 ? ` (${hits.length} in all)` : ''}`);
  // The search's control: it must see what is in clear, such as the failure's type.
  const sees = clearTextHits(events, [{ label: 'the failure type', value: EXPECTED_TYPE }]).length > 0;
  if (!sees) problems.push(`the history search is blind: it did not find the failure type ${EXPECTED_TYPE} in clear`);

  const failures = failuresOfType(events, EXPECTED_TYPE);
  if (!events.some((event) => event.workflowExecutionFailedEventAttributes?.failure?.applicationFailureInfo?.type === EXPECTED_TYPE))
    problems.push('the history has no workflow failure of that type');
  const unsealed = unsealedDetails(failures);
  if (unsealed.length > 0) problems.push(`not sealed: ${unsealed.slice(0, 3).join('; ')}`);
  let opened = 0;
  for (const { where, failure } of failures) {
    const decoded = await decodeOptionalFailureToOptionalError(target.sealed.options.loadedDataConverter, failure, { namespace, workflowId }).catch(
      (error: unknown) => error,
    );
    const missing = missingMarkers(excerptOf(decoded));
    if (missing.length > 0) problems.push(`${where}: decoded with the key, its details lack ${missing.join(', ')}`);
    else opened += 1;
  }

  const refused = problems.length === 0;
  const detail = refused
    ? `${workflowId} failed ${EXPECTED_TYPE}; none of ${UNUSABLE_REPLY_MARKER_LIST.map(({ label }) => label).join(', ')} in clear in its ${events.length} events; ` +
      `${failures.length} failure(s) of that type, their details sealed and each opened with the key to a replyExcerpt holding them (${opened}/${failures.length})`
    : problems.join('; ').slice(0, 600);
  return { name: ATTACK_NAME, refused, detail };
}

/** The `replyExcerpt` of a decoded failure's details, if it carries one. */
function excerptOf(error: unknown): string | undefined {
  if (!(error instanceof ApplicationFailure)) return undefined;
  const details = error.details?.[0] as Partial<ServiceFailureDetails> | undefined;
  return typeof details?.replyExcerpt === 'string' ? details.replyExcerpt : undefined;
}

function missingMarkers(excerpt: string | undefined): string[] {
  return UNUSABLE_REPLY_MARKER_LIST.filter(({ value }) => excerpt === undefined || !excerpt.includes(value)).map(({ label }) => label);
}
