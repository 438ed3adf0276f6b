/**
 * The operator console's HTTP server: a static page and a small JSON API over the pipeline client.
 * Every request needs the console token (`Authorization: Bearer <token>`, or the HttpOnly cookie set
 * by opening the page once with `?token=<token>`); without it the answer is 401. The one exception is
 * `GET /healthz` (200 `{ state: 'RUNNING' }`), for container health checks.
 *
 * API (JSON):
 *   GET  /api/connections?status=AwaitingAnswer|...|any&customer=&institution=&limit=
 *   GET  /api/connections/:workflowId                  → { workflowId, state, now }
 *   POST /api/connections/:workflowId/answer           { challengeSetId, responses } → { outcome }
 *   POST /api/connections/:workflowId/cancel           → { cancelled: true }
 *
 * Codec endpoint (Temporal's remote codec protocol, for the Web UI and `temporal --codec-endpoint`
 * <console>/codec), when payload encryption is on (otherwise 404):
 *   POST /codec/encode  { payloads: [{ metadata: { key: base64 }, data: base64 }] } → same shape, encoded
 *   POST /codec/decode  { payloads: [...] } → same shape, decoded
 * Same token as the rest (Bearer, or the cookie sent by the Web UI with "include cross-origin
 * credentials"); browsers may call it only from the origins of CONSOLE_CODEC_CORS_ORIGINS.
 * Also at <console>/codec/<codec token>/(encode|decode), where the codec token (codecTokenFor) opens the
 * codec and nothing else: the Web UI's server-side codec setting (`--ui-codec-endpoint`) cannot send
 * credentials, and whoever reads that setting can already read decoded payloads in that Web UI.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import type { Payload, PayloadCodec } from '@temporalio/common';
import { z } from 'zod';
import { describeIssues, SecurityResponses } from '../../aggregator/schemas.js';
import { PayloadDecryptionError } from '../../codec/encryption-codec.js';
import { CONNECTION_STATUSES } from '../../workflows/definitions.js';
import { WorkflowId } from '../business-key.js';
import type { ConnectionsClient } from '../connections.js';
import { AnswerRejectedError, ConnectionNotFoundError, InvalidBusinessKeyError, InvalidConnectionInputError } from '../errors.js';

export const COOKIE_NAME = 'console_token';
/** Answers carry at most a few challenges; an image answer is ~4,000 characters of base64. */
/** Room for the largest answer set the answer limits allow (64 Ki characters) plus JSON's quoting. */
export const MAX_BODY_BYTES = 128 * 1024;
/** A codec request carries the payloads of one history event; Temporal refuses payloads over 2 MB. */
const MAX_CODEC_BODY_BYTES = 8 * 1024 * 1024;

const PAGE_DIR = fileURLToPath(new URL('./page/', import.meta.url));
const STATIC_FILES: Record<string, { file: string; type: string }> = {
  '/': { file: 'index.html', type: 'text/html; charset=utf-8' },
  '/index.html': { file: 'index.html', type: 'text/html; charset=utf-8' },
  '/app.js': { file: 'app.js', type: 'text/javascript; charset=utf-8' },
  '/style.css': { file: 'style.css', type: 'text/css; charset=utf-8' },
};

const SECURITY_HEADERS = {
  'content-security-policy': "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
};

const AnswerBody = z.strictObject({
  challengeSetId: z.string().min(1, { message: 'must not be empty' }).max(100),
  responses: SecurityResponses.refine((responses) => Object.keys(responses).length > 0, { message: 'must answer at least one prompt' }),
});

const ListQuery = z.strictObject({
  status: z.enum([...CONNECTION_STATUSES, 'any']).default('AwaitingAnswer'),
  customer: z.string().min(1).max(200).optional(),
  institution: z.string().min(1).max(200).optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
});

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

export interface ConsoleOptions {
  readonly connections: ConnectionsClient;
  readonly token: string;
  /**
   * The codecs of the console's data converter (`dataConverterFor(config)?.payloadCodecs`), served
   * at /codec/encode and /codec/decode; none (encryption off): those answer 404.
   */
  readonly payloadCodecs?: readonly PayloadCodec[] | undefined;
  /** Browser origins allowed to call /codec/* with credentials (the Temporal Web UI); default none. */
  readonly codecCorsOrigins?: readonly string[] | undefined;
}

export interface ConsoleServer {
  readonly server: Server;
  listen(port: number, host?: string): Promise<{ url: string; port: number }>;
  close(): Promise<void>;
}

class HttpError extends Error {
  override readonly name = 'HttpError';
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

/** The token that opens the codec endpoint only, derived from the console token (see the header). */
export function codecTokenFor(consoleToken: string): string {
  return createHmac('sha256', consoleToken).update('temporal-web-ui-codec').digest('base64url').slice(0, 32);
}

export function createConsoleServer(options: ConsoleOptions): ConsoleServer {
  const expected = digest(options.token);
  const expectedCodecToken = digest(codecTokenFor(options.token));
  const corsOrigins: ReadonlySet<string> = new Set(options.codecCorsOrigins ?? []);
  const codecs = options.payloadCodecs ?? [];
  const isToken = (candidate: string | undefined) => candidate !== undefined && candidate !== '' && timingSafeEqual(digest(candidate), expected);

  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      const http = toHttpError(error);
      sendJson(response, http.status, { error: http.code, message: http.message, ...http.extra });
    });
  });

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? '/', 'http://console.invalid');
    const method = request.method ?? 'GET';

    // Unauthenticated, for container health checks: it says only that the server answers.
    if (url.pathname === '/healthz' && method === 'GET') {
      sendJson(response, 200, { state: 'RUNNING' });
      return;
    }

    const codecPath = /^\/codec(?:\/([A-Za-z0-9_-]{1,64}))?\/(encode|decode)$/.exec(url.pathname);
    const codecAction = codecPath?.[2] as 'encode' | 'decode' | undefined;
    const codecPathToken = codecPath?.[1];
    // CORS first: a preflight carries no credentials, and every answer (401 too) must be readable by the Web UI.
    if (codecAction !== undefined && allowCors(request, response, corsOrigins)) return;

    // `?token=` once: set the cookie and drop the token from the address bar.
    const queryToken = url.searchParams.get('token');
    if (queryToken !== null && method === 'GET' && !url.pathname.startsWith('/api/')) {
      if (!isToken(queryToken)) throw new HttpError(401, 'Unauthorized', 'the token in the address is not the console token');
      url.searchParams.delete('token');
      response.writeHead(303, {
        ...SECURITY_HEADERS,
        'set-cookie': `${COOKIE_NAME}=${encodeURIComponent(queryToken)}; HttpOnly; SameSite=Strict; Path=/`,
        location: `${url.pathname}${url.search}`,
        'cache-control': 'no-store',
      });
      response.end();
      return;
    }
    if (codecPathToken !== undefined) {
      if (!timingSafeEqual(digest(codecPathToken), expectedCodecToken)) throw new HttpError(401, 'Unauthorized', 'the token in the codec address is not this console\'s codec token');
    } else if (!isToken(bearerToken(request)) && !isToken(cookieToken(request))) {
      throw new HttpError(401, 'Unauthorized', 'the console needs its token: Authorization: Bearer <token>, or open the page once with ?token=<token>');
    }

    const asset = STATIC_FILES[url.pathname];
    if (asset && (method === 'GET' || method === 'HEAD')) {
      const body = await readFile(`${PAGE_DIR}${asset.file}`);
      response.writeHead(200, { ...SECURITY_HEADERS, 'content-type': asset.type, 'cache-control': 'no-store' });
      response.end(method === 'HEAD' ? undefined : body);
      return;
    }

    if (url.pathname === '/api/connections') {
      if (method !== 'GET') throw methodNotAllowed('GET');
      const query = parse(ListQuery, Object.fromEntries(url.searchParams), 'query');
      const connections = await options.connections.list({
        status: query.status === 'any' ? undefined : query.status,
        customerId: query.customer,
        institution: query.institution,
        limit: query.limit,
      });
      sendJson(response, 200, { connections });
      return;
    }

    if (codecAction !== undefined) {
      if (method !== 'POST') throw methodNotAllowed('POST');
      if (codecs.length === 0) {
        throw new HttpError(404, 'EncryptionOff', 'payload encryption is off on this console (PAYLOAD_ENCRYPTION=off): there is no codec to encode or decode with');
      }
      const body = parse(CodecBody, await readJsonBody(request, MAX_CODEC_BODY_BYTES), 'body');
      let payloads = body.payloads.map(fromJson);
      // Like the SDK's data converter: encode through the codecs in order, decode in reverse order.
      if (codecAction === 'encode') for (const codec of codecs) payloads = await codec.encode(payloads);
      else for (const codec of [...codecs].reverse()) payloads = await codec.decode(payloads);
      sendJson(response, 200, { payloads: payloads.map(toJson) });
      return;
    }

    const match = /^\/api\/connections\/([^/]+)(?:\/(answer|cancel))?$/.exec(url.pathname);
    if (match) {
      const workflowId = parse(WorkflowId, safeDecode(match[1] ?? ''), 'workflow id');
      const action = match[2];
      if (action === undefined) {
        if (method !== 'GET') throw methodNotAllowed('GET');
        const state = await options.connections.getState(workflowId);
        sendJson(response, 200, { workflowId, state, now: new Date().toISOString() });
        return;
      }
      if (method !== 'POST') throw methodNotAllowed('POST');
      checkSameOrigin(request);
      if (action === 'cancel') {
        await options.connections.cancel(workflowId);
        sendJson(response, 202, { cancelled: true });
        return;
      }
      const body = parse(AnswerBody, await readJsonBody(request), 'body');
      const outcome = await options.connections.answer(workflowId, body);
      sendJson(response, 200, { outcome });
      return;
    }
    throw new HttpError(404, 'NotFound', `no such page: ${url.pathname}`);
  }

  return {
    server,
    listen: (port, host = '127.0.0.1') =>
      new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => {
          server.off('error', reject);
          const address = server.address() as AddressInfo;
          resolve({ url: `http://${host}:${address.port}`, port: address.port });
        });
      }),
    close: () =>
      new Promise((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}

/**
 * CORS for the codec endpoint. A request from an allowed origin gets that origin back with
 * credentials allowed; its preflight (OPTIONS) is answered here (returns true). A browser request
 * from any other origin is refused, so only the Web UI's pages can use the cookie cross-origin.
 */
function allowCors(request: IncomingMessage, response: ServerResponse, allowed: ReadonlySet<string>): boolean {
  const origin = request.headers.origin;
  response.setHeader('vary', 'Origin');
  if (origin === undefined || isSameOrigin(request)) {
    if (request.method === 'OPTIONS') throw new HttpError(400, 'BadRequest', 'OPTIONS is for CORS preflights (send an Origin header)');
    return false;
  }
  if (!allowed.has(origin)) {
    throw new HttpError(403, 'Forbidden', `origin ${origin} may not call the codec endpoint (allowed: ${[...allowed].join(', ') || 'none'}; see CONSOLE_CODEC_CORS_ORIGINS)`);
  }
  response.setHeader('access-control-allow-origin', origin);
  response.setHeader('access-control-allow-credentials', 'true');
  if (request.method !== 'OPTIONS') return false;
  const requested = request.headers['access-control-request-headers'];
  response.writeHead(204, {
    ...SECURITY_HEADERS,
    'access-control-allow-methods': 'POST, OPTIONS',
    // The Web UI sends Content-Type and X-Namespace, and Authorization when it passes its access token.
    'access-control-allow-headers': typeof requested === 'string' && /^[A-Za-z0-9-]+(\s*,\s*[A-Za-z0-9-]+)*$/.test(requested.trim()) ? requested.trim() : 'content-type, x-namespace, authorization',
    'access-control-max-age': '600',
  });
  response.end();
  return true;
}

function fromJson(payload: JsonPayload): Payload {
  return {
    metadata: Object.fromEntries(Object.entries(payload.metadata ?? {}).map(([key, value]) => [key, Buffer.from(value, 'base64')])),
    data: Buffer.from(payload.data ?? '', 'base64'),
  };
}

function toJson(payload: Payload): { metadata: Record<string, string>; data: string } {
  const base64 = (bytes: Uint8Array | null | undefined) => Buffer.from(bytes ?? new Uint8Array()).toString('base64');
  return {
    metadata: Object.fromEntries(Object.entries(payload.metadata ?? {}).map(([key, value]) => [key, base64(value)])),
    data: base64(payload.data),
  };
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

function bearerToken(request: IncomingMessage): string | undefined {
  const header = request.headers.authorization;
  const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  return match?.[1];
}

function cookieToken(request: IncomingMessage): string | undefined {
  for (const part of (request.headers.cookie ?? '').split(';')) {
    const [name, ...value] = part.trim().split('=');
    if (name === COOKIE_NAME) return safeDecode(value.join('='));
  }
  return undefined;
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    throw new HttpError(400, 'BadRequest', 'malformed percent-encoding in the address');
  }
}

/** True without an Origin header, or when it names this server (Host). */
function isSameOrigin(request: IncomingMessage): boolean {
  const origin = request.headers.origin;
  if (origin === undefined) return true;
  try {
    return new URL(origin).host === request.headers.host;
  } catch {
    return false;
  }
}

/** A browser's cross-site POST carries a foreign Origin; refuse it (the cookie is also SameSite=Strict). */
function checkSameOrigin(request: IncomingMessage): void {
  if (!isSameOrigin(request)) throw new HttpError(403, 'Forbidden', 'cross-origin requests are refused');
}

async function readJsonBody(request: IncomingMessage, limit = MAX_BODY_BYTES): Promise<unknown> {
  const type = request.headers['content-type'] ?? '';
  if (!/^application\/json\b/i.test(type)) throw new HttpError(415, 'UnsupportedMediaType', 'send the body as application/json');
  const declared = Number(request.headers['content-length'] ?? '0');
  if (declared > limit) throw new HttpError(413, 'PayloadTooLarge', `the body must be at most ${limit} bytes`);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    const buffer = chunk as Buffer;
    size += buffer.length;
    if (size > limit) {
      request.destroy();
      throw new HttpError(413, 'PayloadTooLarge', `the body must be at most ${limit} bytes`);
    }
    chunks.push(buffer);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
  } catch (error) {
    throw new HttpError(400, 'InvalidJson', `the body is not JSON: ${(error as Error).message}`);
  }
}

function parse<S extends z.ZodType>(schema: S, value: unknown, what: string): z.output<S> {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new HttpError(400, 'InvalidRequest', `invalid ${what}: ${describeIssues(parsed.error)}`);
  return parsed.data;
}

function methodNotAllowed(allowed: string): HttpError {
  return new HttpError(405, 'MethodNotAllowed', `use ${allowed}`);
}

function toHttpError(error: unknown): HttpError {
  if (error instanceof HttpError) return error;
  if (error instanceof AnswerRejectedError) {
    return new HttpError(422, 'AnswerRejected', error.problem, { source: error.source, challengeSetId: error.challengeSetId });
  }
  if (error instanceof ConnectionNotFoundError) return new HttpError(404, 'ConnectionNotFound', error.message);
  if (error instanceof PayloadDecryptionError) return new HttpError(422, 'DecryptionFailed', error.message, { keyId: error.keyId });
  if (error instanceof InvalidConnectionInputError || error instanceof InvalidBusinessKeyError) return new HttpError(400, 'InvalidRequest', error.message);
  return new HttpError(502, 'TemporalError', error instanceof Error ? error.message : String(error));
}

function sendJson(response: ServerResponse, status: number, body: unknown): void {
  if (response.headersSent) {
    response.end();
    return;
  }
  const text = JSON.stringify(body);
  response.writeHead(status, {
    ...SECURITY_HEADERS,
    'content-type': 'application/json; charset=utf-8',
    'cache-control': 'no-store',
    ...(status === 401 ? { 'www-authenticate': 'Bearer realm="console"' } : {}),
  });
  response.end(text);
}
