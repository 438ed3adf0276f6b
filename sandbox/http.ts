/**
 * Wire helpers: the error type handlers throw, the reply type they return, reading and validating
 * JSON bodies. Status codes come from SERVICE_CODES so the sandbox and the client agree.
 */
import type { IncomingMessage } from 'node:http';
import type { z } from 'zod';
import { SERVICE_CODES, isServiceCode, type ServiceCode } from '../src/aggregator/failure-table.js';
import { type Link } from '../src/aggregator/schemas.js';
import { describeIssues } from '../src/validation/parse-or-refuse.js';

/**
 * What a handler answers; `raw` is already-serialized JSON, `chunks` JSON in pieces written one
 * after the other (the cached accounts path: a cached Buffer is sent as is, never copied).
 */
export type Reply =
  | { readonly status: number; readonly body: unknown; readonly headers?: Record<string, string> }
  | { readonly status: number; readonly raw: string; readonly headers?: Record<string, string> }
  | { readonly status: number; readonly chunks: readonly (string | Uint8Array)[]; readonly headers?: Record<string, string> };

/**
 * Codes only the sandbox answers: the spec and FACTS.md name no request size limit, so no service
 * code exists for it. A client reads it as an unrecognised code (HTTP 413: not retryable).
 */
export type SandboxOnlyCode = 'REQUEST_TOO_LARGE';

/** A refusal with a service code; the server turns it into an error body. */
export class SandboxError extends Error {
  override readonly name = 'SandboxError';
  readonly httpStatus: number;

  constructor(
    readonly code: ServiceCode | SandboxOnlyCode | undefined,
    message: string,
    options: { httpStatus?: number; requestId?: string | undefined; headers?: Record<string, string>; links?: Link[] } = {},
  ) {
    super(message);
    this.httpStatus = options.httpStatus ?? (isServiceCode(code) ? SERVICE_CODES[code].httpStatus[0] : 500);
    this.requestId = options.requestId;
    this.headers = options.headers;
    this.links = options.links;
  }

  readonly requestId: string | undefined;
  readonly headers: Record<string, string> | undefined;
  readonly links: Link[] | undefined;
}

/** Error body per FACTS.md: HttpStatusCode, Message, the code field, RequestId and Links when known. */
export function errorReply(error: SandboxError): Reply {
  const body: Record<string, unknown> = { HttpStatusCode: error.httpStatus, Message: error.message };
  if (error.code) body.ServiceCode = error.code;
  if (error.requestId) body.RequestId = error.requestId;
  if (error.links) body.Links = error.links;
  return { status: error.httpStatus, body, ...(error.headers ? { headers: error.headers } : {}) };
}

/** Largest request body read (the biggest real one, an ImageSelection answer, is a few KB). */
export const MAX_BODY_BYTES = 1_000_000;

/**
 * 413 REQUEST_TOO_LARGE with `Connection: close`: node:http then closes the socket once the answer
 * is written, without reading the rest of the body, so the sender is not left blocked on a full
 * TCP window and no later request waits behind unread bytes on a kept-alive connection.
 */
function tooLarge(what: string): SandboxError {
  return new SandboxError('REQUEST_TOO_LARGE', `The request body ${what} the limit of ${MAX_BODY_BYTES} bytes`, {
    httpStatus: 413,
    headers: { connection: 'close' },
  });
}

/** Reads the body as JSON; an empty body is `undefined`. Malformed JSON → 400 INVALID_REQUEST, oversized → 413. */
export async function readJson(request: IncomingMessage): Promise<unknown> {
  // A declared length over the limit is refused before reading a byte.
  if (Number(request.headers['content-length'] ?? 0) > MAX_BODY_BYTES) throw tooLarge('is declared larger than');
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw tooLarge('exceeds');
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new SandboxError('INVALID_REQUEST', `The request body is not valid JSON: ${(error as Error).message}`);
  }
}

/** Validates with a contract schema; the message names each offending field (describeIssues). */
export function parseWith<S extends z.ZodType>(schema: S, value: unknown, what: string): z.output<S> {
  if (value === undefined) throw new SandboxError('INVALID_REQUEST', `${what}: a JSON body is required`);
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new SandboxError('INVALID_REQUEST', `${what}: ${describeIssues(parsed.error)}`);
  return parsed.data;
}
