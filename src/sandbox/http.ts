/**
 * Wire helpers: the error type handlers throw, the reply type they return, reading and validating
 * JSON bodies. Status codes come from SERVICE_CODES so the sandbox and the client agree.
 */
import type { IncomingMessage } from 'node:http';
import type { z } from 'zod';
import { SERVICE_CODES, type ServiceCode } from '../aggregator/errors.js';
import { describeIssues, type Link } from '../aggregator/schemas.js';

/** What a handler answers; `raw` is already-serialized JSON (the cached data path). */
export type Reply =
  | { readonly status: number; readonly body: unknown; readonly headers?: Record<string, string> }
  | { readonly status: number; readonly raw: string; readonly headers?: Record<string, string> };

/** A refusal with a service code; the server turns it into an error body. */
export class SandboxError extends Error {
  override readonly name = 'SandboxError';
  readonly httpStatus: number;

  constructor(
    readonly code: ServiceCode | undefined,
    message: string,
    options: { httpStatus?: number; requestId?: string | undefined; headers?: Record<string, string>; links?: Link[] } = {},
  ) {
    super(message);
    this.httpStatus = options.httpStatus ?? (code ? SERVICE_CODES[code].httpStatus[0] : 500);
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

const MAX_BODY_BYTES = 1_000_000;

/** Reads the body as JSON; an empty body is `undefined`. Malformed JSON → 400 INVALID_REQUEST. */
export async function readJson(request: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new SandboxError('INVALID_REQUEST', `The request body exceeds ${MAX_BODY_BYTES} bytes`);
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
