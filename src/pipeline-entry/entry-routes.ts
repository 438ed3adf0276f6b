/**
 * What the pipeline entry's parts agree on (app.ts serves the routes of connection-routes.ts and
 * result-route.ts): its options, what a route handler is given, and the two kinds of route, by the
 * credential they take. Types and one limit only, so the routes and the server need not import each other.
 */
import type { IncomingMessage } from 'node:http';
import type { AuditTrail } from '../audit/audit-trail.js';
import type { ConnectionsClient } from '../client/connections.js';
import type { JsonReply } from '../http/json-http.js';
import type { EntryAudit } from './entry-audit.js';
import type { PipelineCaller, PipelineKeys } from '../identity/pipeline-keys.js';

/** A start's body is a connection input (a live password, products' options) and a callback: small. */
export const PIPELINE_MAX_BODY_BYTES = 64 * 1024;

export interface PipelineEntryOptions {
  readonly connections: ConnectionsClient;
  /** Each tenant's key hashes (PIPELINE_KEY_FILES). */
  readonly keys: PipelineKeys;
  /** Each tenant's allowed callback URL prefixes (CALLBACK_URLS). */
  readonly callbackUrls: ReadonlyMap<string, readonly string[]>;
  /** The tenants whose callbacks may carry the result itself (CALLBACK_RESULT_IN_BODY); default none. */
  readonly resultInBody?: ReadonlySet<string> | undefined;
  readonly audit: AuditTrail;
  /** Default PIPELINE_MAX_BODY_BYTES. */
  readonly maxBodyBytes?: number;
  /** Where a failure the caller is not told about is said (stderr by default). */
  readonly log?: (line: string) => void;
}

/** What a route handler gets: the request, its captured path segments (raw) and the entry's parts. */
export interface EntryCall {
  readonly request: IncomingMessage;
  readonly params: Readonly<Record<string, string>>;
  readonly options: PipelineEntryOptions & { readonly maxBodyBytes: number };
  readonly audit: EntryAudit;
  /** Where a failure the caller is not told about is said. */
  readonly log: (line: string) => void;
}

/** A route behind a tenant's pipeline key: `caller` is the key's tenant. */
export interface KeyRoute {
  readonly auth: 'pipeline-key';
  readonly method: 'GET' | 'POST';
  readonly pattern: RegExp;
  /** Its action in the trail, for the refusal of a key of no tenant. */
  readonly action: 'start' | 'cancel' | 'read';
  readonly handler: (call: EntryCall & { readonly caller: PipelineCaller }) => Promise<JsonReply>;
}

/** A route whose credential it checks itself (the result's one-time token). */
export interface TokenRoute {
  readonly auth: 'own';
  readonly method: 'GET' | 'POST';
  readonly pattern: RegExp;
  readonly handler: (call: EntryCall) => Promise<JsonReply>;
}

export type EntryRoute = KeyRoute | TokenRoute;
