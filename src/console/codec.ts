/**
 * The codec endpoint: Temporal's remote codec protocol, for the Web UI and `temporal --codec-endpoint
 * <console>/codec`, served when payload encryption is on (otherwise 404).
 *   POST /codec/encode  { payloads: [{ metadata: { key: base64 }, data: base64 }] } → same shape, encoded
 *   POST /codec/decode  { payloads: [...] } → same shape, decoded (one that can never be read here:
 *                       a JSON payload naming why, see decodeOrDescribe), an applicant's password
 *                       and answers redacted for every caller (forPerson)
 * Who may call which is auth.ts's. Browsers may call it, with credentials (the Web UI sends the
 * console's cookie), only from the origins of CONSOLE_CODEC_CORS_ORIGINS.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Payload, PayloadCodec } from '@temporalio/common';
import { z } from 'zod';
import {
  KeyDestroyedError,
  KeyProviderRefusedError,
  KeyVersionRevokedError,
  PayloadDecryptionError,
  PayloadNotSealedError,
  UnknownEncryptionKeyError,
} from '../codec/payload-errors.js';
import { ENCODING_METADATA_KEY, metadataText, TENANT_METADATA_KEY } from '../codec/payload-format.js';
import { redactCredentials } from '../contract/connection/credential-fields.js';
import { may, type Principal } from '../identity/roles.js';
import { encodeRefusal } from './auth.js';
import { HttpError, isSameOrigin, parse, readJsonBody, SECURITY_HEADERS } from '../http/json-http.js';
import type { CorsPolicy, Route, RouteCall } from './router.js';

/** A codec request carries the payloads of one history event; Temporal refuses payloads over 2 MB. */
const MAX_CODEC_BODY_BYTES = 8 * 1024 * 1024;

/** Protobuf JSON of bytes: standard or URL-safe base64. */
const Base64 = z.string().regex(/^[A-Za-z0-9+/_-]*={0,2}$/, { message: 'must be base64' });
/** A Payload in protobuf JSON (fields it does not know, such as externalPayloads, are dropped). */
const JsonPayload = z.object({
  metadata: z.record(z.string().max(256), Base64).nullish(),
  data: Base64.nullish(),
});
type JsonPayload = z.infer<typeof JsonPayload>;
/** Protobuf JSON omits an empty repeated field: the temporal CLI sends `{}` for no payloads. */
const CodecBody = z.object({ payloads: z.array(JsonPayload).max(10_000).default([]) });

/**
 * `codecs`: those of the console's data converter, none when encryption is off;
 * `corsOrigins`: the browser origins allowed to call with credentials (the Temporal Web UI);
 * `consoleEncodes`: an encode token is configured (else an encode is refused as decode-only).
 */
export function codecRoutes(codecs: readonly PayloadCodec[], corsOrigins: readonly string[], consoleEncodes: boolean): Route[] {
  const cors = codecCors(new Set(corsOrigins));
  const handler = async ({ request, params, grant, principal, recordAccess }: RouteCall) => {
    if (codecs.length === 0) {
      throw new HttpError(
        404,
        'EncryptionOff',
        'payload encryption is off on this console (PAYLOAD_ENCRYPTION=off): there is no codec to encode or decode with',
      );
    }
    const body = parse(CodecBody, await readJsonBody(request, MAX_CODEC_BODY_BYTES), 'body');
    // A reader's encode (auth.ts): only of nothing, which seals nothing the worker could trust.
    if (params.action === 'encode' && grant !== 'encode' && body.payloads.length > 0) throw encodeRefusal(consoleEncodes);
    let payloads = body.payloads.map(fromJson);
    // Like the SDK's data converter: encode through the codecs in order, decode in reverse order.
    if (params.action === 'encode') {
      await recordAccess(undefined);
      for (const codec of codecs) payloads = await codec.encode(payloads);
      return { status: 200, body: { payloads: payloads.map(toJson) }, auditDetail: `${payloads.length} payload(s) encoded` };
    }
    const permitted = payloads.map((payload) => mayDecode(principal, payload));
    // Each tenant whose payloads this caller reads is recorded before any of them is opened.
    for (const tenant of new Set(payloads.filter((_, index) => permitted[index]).map(tenantOf))) await recordAccess(tenant);
    for (const tenant of new Set(payloads.filter((_, index) => !permitted[index]).map(tenantOf))) await recordAccess(tenant, 'refused');
    const shown = await Promise.all(
      payloads.map(async (payload, index) =>
        permitted[index] ? forPerson(await decodeOrDescribe(codecs, payload)) : { payload: notPermittedForRole(principal, payload), redacted: 0 },
      ),
    );
    const read = permitted.filter(Boolean).length;
    const redacted = shown.reduce((sum, { redacted: count }) => sum + count, 0);
    const detail = `${read} payload(s) decoded${read < permitted.length ? `, ${permitted.length - read} not permitted` : ''}${redacted > 0 ? `, ${redacted} credential value(s) redacted` : ''}`;
    return { status: 200, body: { payloads: shown.map(({ payload }) => toJson(payload)) }, auditDetail: detail };
  };
  // Two routes, so that each records its own action; one handler.
  return [
    { method: 'POST', path: '/codec/:action(decode)', permission: 'decode', authorizesEachPayload: true, audit: { action: 'decode' }, handler, cors },
    { method: 'POST', path: '/codec/:action(encode)', permission: 'decode', authorizesEachPayload: true, audit: { action: 'encode' }, handler, cors },
  ];
}

/**
 * A decoded payload as a person may see it: an applicant's password and answers redacted
 * (contract/credential-fields.ts), whatever the caller's role, since no person needs them. A JSON
 * payload that does not parse is withheld rather than shown unredacted.
 */
function forPerson(payload: Payload): { payload: Payload; redacted: number } {
  const encoding = metadataText(payload.metadata, ENCODING_METADATA_KEY) ?? '';
  if (!encoding.startsWith('json/')) return { payload, redacted: 0 };
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(payload.data ?? new Uint8Array()).toString('utf8'));
  } catch {
    const state = { state: 'withheld', message: `a ${encoding} payload that is not valid JSON: withheld, since its credentials cannot be redacted` };
    return { payload: { metadata: { encoding: Buffer.from('json/plain') }, data: Buffer.from(JSON.stringify({ undecodable: state })) }, redacted: 1 };
  }
  const { value: shown, redacted } = redactCredentials(value);
  return redacted === 0 ? { payload, redacted } : { payload: { metadata: payload.metadata, data: Buffer.from(JSON.stringify(shown)) }, redacted };
}

/**
 * Whether the caller's roles let it read this payload: its tenant's (the `encryption-tenant` it was
 * sealed for) analyst role, or one on every tenant for a payload that names none. An unencrypted
 * payload is refused by the codec itself (not sealed), whoever asks.
 */
function mayDecode(principal: Principal, payload: Payload): boolean {
  return may(principal, 'decode', tenantOf(payload));
}

/** The tenant a payload was sealed for (its `encryption-tenant`); undefined: none. */
function tenantOf(payload: Payload): string | undefined {
  const label = payload.metadata?.[TENANT_METADATA_KEY];
  return label && label.length > 0 ? Buffer.from(label).toString('utf8') : undefined;
}

/** In place of a payload the caller's roles do not cover: says so, without reading it. */
function notPermittedForRole(principal: Principal, payload: Payload): Payload {
  const label = payload.metadata?.[TENANT_METADATA_KEY];
  const tenant = label && label.length > 0 ? Buffer.from(label).toString('utf8') : undefined;
  const message = `${principal.name} may not read ${tenant === undefined ? 'payloads of no tenant' : `tenant "${tenant}"'s payloads`}: it needs the analyst role on ${tenant ?? 'every tenant (*)'}`;
  const state = { state: 'not-permitted', ...(tenant === undefined ? {} : { tenant }), message };
  return { metadata: { encoding: Buffer.from('json/plain') }, data: Buffer.from(JSON.stringify({ undecodable: state })) };
}

/**
 * A request from an allowed origin gets that origin back with credentials allowed; its preflight
 * (OPTIONS) is answered here. A browser request from any other origin is refused, so only the Web
 * UI's pages can use the cookie cross-origin.
 */
function codecCors(allowed: ReadonlySet<string>): CorsPolicy {
  return (request: IncomingMessage, response: ServerResponse) => {
    const origin = request.headers.origin;
    response.setHeader('vary', 'Origin');
    if (origin === undefined || isSameOrigin(request)) {
      if (request.method === 'OPTIONS') throw new HttpError(400, 'BadRequest', 'OPTIONS is for CORS preflights (send an Origin header)');
      return false;
    }
    if (!allowed.has(origin)) {
      throw new HttpError(
        403,
        'Forbidden',
        `origin ${origin} may not call the codec endpoint (allowed: ${[...allowed].join(', ') || 'none'}; see CONSOLE_CODEC_CORS_ORIGINS)`,
      );
    }
    response.setHeader('access-control-allow-origin', origin);
    response.setHeader('access-control-allow-credentials', 'true');
    if (request.method !== 'OPTIONS') return false;
    const requested = request.headers['access-control-request-headers'];
    response.writeHead(204, {
      ...SECURITY_HEADERS,
      'access-control-allow-methods': 'POST, OPTIONS',
      // The Web UI sends Content-Type and X-Namespace, and Authorization when it passes its access token.
      'access-control-allow-headers':
        typeof requested === 'string' && /^[A-Za-z0-9-]+(\s*,\s*[A-Za-z0-9-]+)*$/.test(requested.trim())
          ? requested.trim()
          : 'content-type, x-namespace, authorization',
      'access-control-max-age': '600',
    });
    response.end();
    return true;
  };
}

/**
 * One payload decoded, or, when it can never be read here (a revoked key version, a key this console
 * does not have, altered bytes, a payload never sealed), a JSON payload in its place that says so by name: the Web UI shows
 * that state beside the event instead of ciphertext, and the event's other payloads still decode. A
 * key provider that cannot answer now (KeyProviderUnavailableError) still fails the request, so the
 * Web UI shows the codec as unreachable and a reload retries.
 */
export async function decodeOrDescribe(codecs: readonly PayloadCodec[], payload: Payload): Promise<Payload> {
  try {
    let decoded = [payload];
    for (const codec of [...codecs].reverse()) decoded = await codec.decode(decoded);
    return decoded[0] ?? payload;
  } catch (error) {
    if (!(error instanceof PayloadDecryptionError) && !isNotPermitted(error)) throw error;
    return { metadata: { encoding: Buffer.from('json/plain') }, data: Buffer.from(JSON.stringify({ undecodable: undecodableState(error) })) };
  }
}

/**
 * The KMS refused this console's credentials the payload's key (another tenant's, with keys per
 * tenant): the payload is not this reader's to read, which a retry will not change, so it is shown
 * as such in place, beside the payloads it may read.
 */
function isNotPermitted(error: unknown): error is KeyProviderRefusedError {
  return error instanceof KeyProviderRefusedError && error.operation === 'decrypt' && error.status === 403;
}

/** The typed state the Web UI shows in place of a payload that cannot be read. */
export function undecodableState(error: PayloadDecryptionError | KeyProviderRefusedError): Record<string, string | number> {
  if (error instanceof KeyProviderRefusedError) return { state: 'not-permitted', provider: error.provider, message: error.message };
  if (error instanceof KeyDestroyedError)
    return {
      state: 'key-destroyed',
      keyId: error.keyId,
      keyName: error.keyName,
      ...(error.tenant === undefined ? {} : { tenant: error.tenant }),
      message: error.message,
    };
  if (error instanceof KeyVersionRevokedError)
    return { state: 'key-version-revoked', keyId: error.keyId, keyName: error.keyName, version: error.version, message: error.message };
  if (error instanceof UnknownEncryptionKeyError) return { state: 'unknown-key', keyId: error.keyId, message: error.message };
  if (error instanceof PayloadNotSealedError) return { state: 'not-sealed', encoding: error.encoding, message: error.message };
  return { state: 'undecryptable', ...(error.keyId === undefined ? {} : { keyId: error.keyId }), message: error.message };
}

function fromJson(payload: JsonPayload): Payload {
  return {
    metadata: Object.fromEntries(Object.entries(payload.metadata ?? {}).map(([key, value]) => [key, Buffer.from(value, 'base64')])),
    data: Buffer.from(payload.data ?? '', 'base64'),
  };
}

/** A payload as the remote codec endpoint's JSON carries it (base64 metadata values and data). */
export function toJson(payload: Payload): { metadata: Record<string, string>; data: string } {
  const base64 = (bytes: Uint8Array | null | undefined) => Buffer.from(bytes ?? new Uint8Array()).toString('base64');
  return {
    metadata: Object.fromEntries(Object.entries(payload.metadata ?? {}).map(([key, value]) => [key, base64(value)])),
    data: base64(payload.data),
  };
}
