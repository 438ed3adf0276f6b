/**
 * The pipeline entry's HTTP server: a small JSON API for a lending pipeline without Temporal (a loan
 * origination system in Java, .NET or Ruby), each request under a tenant's own credential:
 *   POST /v1/connections                       { applicationId, connection, callback? } → 202 { workflowId, runId }
 *   GET  /v1/connections/:applicationId        → 200 { workflowId, state }
 *   POST /v1/connections/:applicationId/cancel → 202 { workflowId, cancelRequested: true }
 *     with `Authorization: Bearer <the tenant's pipeline key>` (pipeline-keys.ts): the tenant is the
 *     key's, never the request's (connection-routes.ts);
 *   GET  /v1/results/:customerId/:webhookId    → 200 { workflowId, runId, result }
 *     with `Authorization: Bearer <the callback event's resultRef token>`: the one-time token is the
 *     credential (result-route.ts).
 *   GET  /healthz                              → 200 { state: 'RUNNING' }, unauthenticated.
 * Answers are JSON, refusals `{ error, message }` as the console's (src/http/json-http.ts, whose
 * helpers it reuses); every start, cancel, claim and refusal is in the audit trail (entry-audit.ts).
 */
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { bearerToken, closeNow, HttpError, listenOn, methodNotAllowed, sendJson } from '../http/json-http.js';
import { startRoute, stateRoute, cancelRoute } from './connection-routes.js';
import { PIPELINE_MAX_BODY_BYTES, type EntryCall, type EntryRoute, type PipelineEntryOptions } from './entry-routes.js';
import { EntryAudit, unknownKeyActor } from './entry-audit.js';
import { toHttpError } from './entry-errors.js';
import { keyHashPrefix, pipelineKeyHash } from '../identity/pipeline-keys.js';
import { resultRoute } from './result-route.js';

export { PIPELINE_MAX_BODY_BYTES, type PipelineEntryOptions } from './entry-routes.js';

export interface PipelineEntryServer {
  readonly server: Server;
  listen(port: number, host?: string): Promise<{ url: string; port: number }>;
  close(): Promise<void>;
}

const ROUTES: readonly EntryRoute[] = [startRoute, stateRoute, cancelRoute, resultRoute];

/** What a 401's `www-authenticate` names. */
const REALM = 'pipeline-entry';

export function createPipelineEntryServer(options: PipelineEntryOptions): PipelineEntryServer {
  const settled = { ...options, maxBodyBytes: options.maxBodyBytes ?? PIPELINE_MAX_BODY_BYTES };
  const audit = new EntryAudit(options.audit);
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));

  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      const http = toHttpError(error, log);
      sendJson(response, { status: http.status, body: { error: http.code, message: http.message, ...http.extra } }, REALM);
    });
  });

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? '/', 'http://pipeline-entry.invalid');
    const method = request.method ?? 'GET';
    if (url.pathname === '/healthz' && method === 'GET') {
      sendJson(response, { status: 200, body: { state: 'RUNNING' } }, REALM);
      return;
    }
    const matched = ROUTES.flatMap((route) => {
      const match = route.pattern.exec(url.pathname);
      return match ? [{ route, params: { ...match.groups } }] : [];
    });
    if (matched.length === 0) throw new HttpError(404, 'NotFound', `no such address: ${url.pathname}`);
    const chosen = matched.find((each) => each.route.method === method);
    if (chosen === undefined) throw methodNotAllowed([...new Set(matched.map((each) => each.route.method))]);
    const { route, params } = chosen;
    const call: EntryCall = { request, params, options: settled, audit, log };
    if (route.auth === 'own') {
      sendJson(response, await route.handler(call), REALM);
      return;
    }
    const key = bearerToken(request);
    const caller = key === undefined ? undefined : options.keys.identify(key);
    if (caller === undefined) {
      // A key of no tenant: recorded (its hash's prefix tells one prober's tries from another's), then refused.
      await audit.refused(
        {
          actor: unknownKeyActor(key === undefined ? undefined : keyHashPrefix(pipelineKeyHash(key))),
          action: route.action,
          detail: `${method} ${url.pathname}`,
        },
        'UnknownKey',
      );
      throw new HttpError(
        401,
        'Unauthorized',
        key === undefined ? 'send Authorization: Bearer <your pipeline key>' : 'the pipeline key is not one of any tenant (revoked, mistyped, or never issued)',
      );
    }
    sendJson(response, await route.handler({ ...call, caller }), REALM);
  }

  return {
    server,
    listen: (port, host) => listenOn(server, port, host),
    close: () => closeNow(server),
  };
}
