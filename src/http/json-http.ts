/**
 * The JSON-over-HTTP helpers the console and the pipeline entry share: the error handlers throw
 * (an HTTP status and a code the page, the Web UI and a pipeline can read), JSON answers with the
 * security headers, reading and validating JSON bodies, the bearer token, and the same-origin check
 * of state-changing requests.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { z } from 'zod';
import { parseOrRefuse } from '../validation/parse-or-refuse.js';
import { toJsonLines } from '../audit/audit-trail.js';

/** Room for the largest answer set the answer limits allow (64 Ki characters) plus JSON's quoting. */
export const MAX_BODY_BYTES = 128 * 1024;

export const SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
};

/** A refusal: answered as `{ error: code, message, ...extra }` with this status. */
export class HttpError extends Error {
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

/** What a route handler answers: sent as JSON. */
export interface JsonReply {
  readonly status: number;
  readonly body: unknown;
  /** How it ended, for the audit trail (never a secret): e.g. how many payloads were decoded. */
  readonly auditDetail?: string;
  /** Sent as JSON lines (application/x-ndjson), one element of `body` (an array) a line: an export. */
  readonly jsonLines?: boolean;
}

/** `realm`: the server a 401's `www-authenticate` names (the console, or the pipeline entry that shares these helpers). */
export function sendJson(response: ServerResponse, { status, body, jsonLines = false }: JsonReply, realm = 'console'): void {
  if (response.headersSent) {
    response.end();
    return;
  }
  const text = jsonLines && Array.isArray(body) ? toJsonLines(body) : JSON.stringify(body);
  response.writeHead(status, {
    ...SECURITY_HEADERS,
    'content-type': jsonLines ? 'application/x-ndjson; charset=utf-8' : 'application/json; charset=utf-8',
    'cache-control': 'no-store',
    ...(status === 401 ? { 'www-authenticate': `Bearer realm="${realm}"` } : {}),
  });
  response.end(text);
}

export function methodNotAllowed(allowed: readonly string[]): HttpError {
  return new HttpError(405, 'MethodNotAllowed', `use ${allowed.join(', ')}`);
}

export function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    throw new HttpError(400, 'BadRequest', 'malformed percent-encoding in the address');
  }
}

/** True without an Origin header, or when it names this server (Host). */
export function isSameOrigin(request: IncomingMessage): boolean {
  const origin = request.headers.origin;
  if (origin === undefined) return true;
  try {
    return new URL(origin).host === request.headers.host;
  } catch {
    return false;
  }
}

/** A browser's cross-site POST carries a foreign Origin; refuse it (the cookie is also SameSite=Strict). */
export function checkSameOrigin(request: IncomingMessage): void {
  if (!isSameOrigin(request)) throw new HttpError(403, 'Forbidden', 'cross-origin requests are refused');
}

/** Whether the request carries a body: optional on the actions the page sends none with. */
export function hasBody(request: IncomingMessage): boolean {
  const length = request.headers['content-length'];
  return (length !== undefined && length !== '0') || request.headers['transfer-encoding'] !== undefined;
}

export async function readJsonBody(request: IncomingMessage, limit = MAX_BODY_BYTES): Promise<unknown> {
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

/** Validates with a zod schema; a refusal is a 400 naming each offending field. */
export function parse<S extends z.ZodType>(schema: S, value: unknown, what: string): z.output<S> {
  return parseOrRefuse(schema, value, (problem) => new HttpError(400, 'InvalidRequest', `invalid ${what}: ${problem}`));
}

/** Listens on `port` (0: any free one) and `host`, answering the address to reach it (an IPv6 host bracketed). */
export function listenOn(server: Server, port: number, host = '127.0.0.1'): Promise<{ readonly url: string; readonly port: number }> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      const address = server.address() as AddressInfo;
      resolve({ url: `http://${host.includes(':') ? `[${host}]` : host}:${address.port}`, port: address.port });
    });
  });
}

/** Closes the server and every connection it holds (keep-alive ones too). */
export function closeNow(server: Server): Promise<void> {
  return new Promise((resolve, reject) => {
    server.closeAllConnections();
    server.close((error) => (error ? reject(error) : resolve()));
  });
}

/** The token of an `Authorization: Bearer <token>` header, or undefined when there is none. */
export function bearerToken(request: IncomingMessage): string | undefined {
  const header = request.headers.authorization;
  const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  return match?.[1];
}
