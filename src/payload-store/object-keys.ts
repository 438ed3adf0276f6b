/**
 * Where a stored payload lives, shared by every driver (relative to a directory or a key prefix):
 *
 *   <namespace>/workflows/<workflow id>/<sha256>    payloads of a workflow and of its activities
 *   <namespace>/activities/<activity id>/<sha256>   payloads of a standalone activity
 *   <namespace>/unscoped/<sha256>                   payloads the SDK gave no identity for
 *
 * A connection's payloads therefore sit under one prefix that its workflow id names, so they can be
 * listed and deleted later ("forget a login"). The name is the SHA-256 of the stored bytes: a retried
 * store writes the same key, and a read can check that the bytes are the ones the claim was made for.
 *
 * Segments are percent-encoded down to [A-Za-z0-9._-] with no leading dot, so an id can never be
 * "..", hold a "/", or name a hidden file; a long id is cut and suffixed with its own hash so that
 * every key fits file-name (255 bytes) and S3 key (1024 bytes) limits. The mapping is deterministic:
 * deleting by workflow id computes the same segment.
 */
import { createHash } from 'node:crypto';
import type { StorageDriverTargetInfo } from '@temporalio/common';

export const HASH_ALGORITHM = 'sha256';

/** Longest encoded segment kept whole; longer ones are cut and suffixed with `~<hash of the id>`. */
const MAX_SEGMENT_CHARS = 120;
const CUT_SEGMENT_CHARS = 80;
const SEGMENT_HASH_CHARS = 32;
/** Stands for a missing namespace; never produced by encoding a value (a lone "~" is always escaped). */
const NO_NAMESPACE = '~';

const SEGMENT = String.raw`(?!\.)(?:[A-Za-z0-9._-]|%[0-9A-F]{2})+(?:~[0-9a-f]{${SEGMENT_HASH_CHARS}})?`;
const RELATIVE_KEY = new RegExp(String.raw`^(?<namespace>${SEGMENT}|~)/(?:(?<kind>workflows|activities)/(?<id>${SEGMENT})|unscoped)/(?<sha256>[0-9a-f]{64})$`);
const KEPT = /^[A-Za-z0-9._-]$/;

export type PayloadOwnerKind = 'workflows' | 'activities';

/** The parts of a relative key, as stored (segments still encoded). */
export interface ParsedPayloadKey {
  readonly namespaceSegment: string;
  readonly kind: PayloadOwnerKind | 'unscoped';
  readonly idSegment: string | undefined;
  readonly sha256: string;
}

/** Percent-encodes one path segment (UTF-8, upper-case hex), shortening it when it is long. */
export function encodeKeySegment(value: string): string {
  let encoded = '';
  for (const byte of Buffer.from(value, 'utf8')) {
    const char = String.fromCharCode(byte);
    const keep = byte < 0x80 && KEPT.test(char) && !(char === '.' && encoded === '');
    encoded += keep ? char : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  if (encoded.length <= MAX_SEGMENT_CHARS) return encoded;
  // Cut on a whole character or escape, never inside "%XX".
  let cut = encoded.slice(0, CUT_SEGMENT_CHARS);
  const escape = cut.lastIndexOf('%');
  if (escape > CUT_SEGMENT_CHARS - 3) cut = cut.slice(0, escape);
  return `${cut}~${sha256Hex(Buffer.from(value, 'utf8')).slice(0, SEGMENT_HASH_CHARS)}`;
}

/** The key of a payload with this hash, stored for this workflow or activity. */
export function payloadKey(target: StorageDriverTargetInfo | undefined, sha256: string): string {
  const namespace = target?.namespace ? encodeKeySegment(target.namespace) : NO_NAMESPACE;
  if (target?.id) {
    const kind: PayloadOwnerKind = target.kind === 'workflow' ? 'workflows' : 'activities';
    return `${namespace}/${kind}/${encodeKeySegment(target.id)}/${sha256}`;
  }
  return `${namespace}/unscoped/${sha256}`;
}

/** The directory (or key prefix, with trailing "/") holding every payload of one workflow id in one namespace. */
export function workflowKeyPrefix(namespace: string, workflowId: string): string {
  if (workflowId === '') throw new TypeError('workflowKeyPrefix: the workflow id must not be empty');
  return `${encodeKeySegment(namespace)}/workflows/${encodeKeySegment(workflowId)}/`;
}

/** The segment under which `workflowKeyPrefix` files a workflow id (to find it in any namespace). */
export function workflowKeySuffix(workflowId: string): string {
  return `workflows/${encodeKeySegment(workflowId)}/`;
}

/** The parts of a relative key of this layout, or undefined when it is not one. */
export function parsePayloadKey(relativeKey: string): ParsedPayloadKey | undefined {
  const match = RELATIVE_KEY.exec(relativeKey);
  const groups = match?.groups;
  if (!groups?.namespace || !groups.sha256) return undefined;
  return {
    namespaceSegment: groups.namespace,
    kind: (groups.kind as PayloadOwnerKind | undefined) ?? 'unscoped',
    idSegment: groups.id,
    sha256: groups.sha256,
  };
}

/**
 * The claim data of a stored payload; `key` is the full key (prefix included), `extra` driver fields.
 * The hash fields are spelled as Temporal's stock S3 drivers spell them (`hash_algorithm`,
 * `hash_value`; Python's temporalio.contrib.aws.s3driver refuses a claim without them), so a stock
 * driver reads what we store. Claims written before (`hashAlgorithm`, `hashValue`) stay readable.
 */
export function claimDataFor(key: string, sha256: string, extra: Record<string, string> = {}): Record<string, string> {
  return { ...extra, key, hash_algorithm: HASH_ALGORITHM, hash_value: sha256 };
}

/** A claim this store will follow: its full key, the key relative to the root and the expected hash. */
export interface CheckedClaim {
  readonly key: string;
  readonly relativeKey: string;
  readonly sha256: string;
}

/**
 * Checks untrusted claim data against the layout: `key` must be `root` followed by a key of this
 * layout, and `hashValue` must be the SHA-256 the key is named after. Returns the reason otherwise.
 */
export function checkClaim(claimData: Readonly<Record<string, unknown>>, root: string): CheckedClaim | string {
  const { key } = claimData;
  // Both spellings: the stock drivers' (written since) and the camelCase of earlier claims.
  const hashAlgorithm = claimData.hash_algorithm ?? claimData.hashAlgorithm;
  const hashValue = claimData.hash_value ?? claimData.hashValue;
  for (const [snake, camel] of [
    ['hash_algorithm', 'hashAlgorithm'],
    ['hash_value', 'hashValue'],
  ] as const) {
    if (claimData[snake] !== undefined && claimData[camel] !== undefined && claimData[snake] !== claimData[camel])
      return `the claim's ${snake} and ${camel} differ`;
  }
  if (typeof key !== 'string' || key === '') return 'the claim has no key';
  if (hashAlgorithm !== HASH_ALGORITHM) return `unsupported hash algorithm ${JSON.stringify(hashAlgorithm)} (expected ${HASH_ALGORITHM})`;
  if (typeof hashValue !== 'string') return 'the claim has no hash value';
  if (!key.startsWith(root)) return `key ${JSON.stringify(key.slice(0, 300))} is outside this store's prefix ${JSON.stringify(root)}`;
  const relativeKey = key.slice(root.length);
  const parsed = parsePayloadKey(relativeKey);
  if (!parsed) return `key ${JSON.stringify(key.slice(0, 300))} is not a payload key of this store`;
  if (parsed.sha256 !== hashValue) return `key ${key} is not named after the claimed hash ${JSON.stringify(hashValue.slice(0, 80))}`;
  return { key, relativeKey, sha256: parsed.sha256 };
}

export function sha256Hex(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}
