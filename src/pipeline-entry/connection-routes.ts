/**
 * The pipeline entry's routes on a tenant's connections, each behind the tenant's pipeline key (the
 * tenant is always the key's: app.ts identifies it before these run):
 *   POST /v1/connections  { applicationId, connection: <the connection input without customerId>,
 *                           callback?: { url, includeResult? } }
 *     → 202 { workflowId, runId }. Refused, with nothing started: a body naming another tenant (403,
 *     naming it); a callback URL outside the tenant's CALLBACK_URLS (400, the problem), or asking for
 *     the result in the body for a tenant not in CALLBACK_RESULT_IN_BODY (400); a bad body or
 *     input (400, naming the field, in the pipeline client's words); the application's connection
 *     still running (409, naming it and its run), or ended when a rerun is not allowed (409).
 *   GET  /v1/connections/:applicationId          → 200 { workflowId, state }; 404 when none.
 *   POST /v1/connections/:applicationId/cancel   → 202 { workflowId, runId, cancelRequested: true };
 *     404 when none, 409 when it has ended.
 * Starts and cancels are sent to Temporal under the identity `pipeline:<customerId>`, which the
 * connection's history (and its activity) records.
 *
 * Two starts of one application at the same instant may both pass the running check: the client
 * starts with USE_EXISTING, so both find the one run and answer 202 with its id.
 */
import { z } from 'zod';
import { displayedUrl } from '../callbacks/callback-urls.js';
import { callbackRequestRefusal } from '../callbacks/callback-policy.js';
import { connectionKey, KeySegment } from '../client/business-key.js';
import type { ConnectionsClient } from '../client/connections.js';
import { CallbackInput, type ConnectionInputArgs } from '../contract/connection/connection-input.js';
import { HttpError, parse, readJsonBody, safeDecode } from '../http/json-http.js';
import { ConnectionNotFoundError } from '../client/errors.js';
import type { ConnectionSummary } from '../client/connection-summary.js';
import type { EntryCall, KeyRoute } from './entry-routes.js';
import { audited, keyActor } from './entry-audit.js';
import type { PipelineCaller } from '../identity/pipeline-keys.js';

const StartBody = z.strictObject({
  applicationId: KeySegment,
  /** Only to be refused when it is another tenant's: the tenant is the key's. */
  customerId: z.string().max(200).optional(),
  /** Checked by the pipeline client's own schema (src/contract/connection/connection-input.ts), which names the field. */
  connection: z.record(z.string(), z.unknown(), { error: 'must be the connection input (an object: session, products, timing?)' }),
  callback: CallbackInput.optional(),
});

/** One client per tenant, acting as `pipeline:<customerId>` in Temporal's histories (made once, sharing the connection). */
const acting = new WeakMap<ConnectionsClient, Map<string, ConnectionsClient>>();
function clientFor(connections: ConnectionsClient, customerId: string): ConnectionsClient {
  let clients = acting.get(connections);
  if (clients === undefined) {
    clients = new Map();
    acting.set(connections, clients);
  }
  let client = clients.get(customerId);
  if (client === undefined) {
    client = connections.actingAs(`pipeline:${customerId}`);
    clients.set(customerId, client);
  }
  return client;
}

/** What visibility says of the application's connection now, or undefined when it never ran. */
async function current(connections: ConnectionsClient, workflowId: string): Promise<ConnectionSummary | undefined> {
  try {
    return await connections.describe(workflowId);
  } catch (error) {
    if (error instanceof ConnectionNotFoundError) return undefined;
    throw error;
  }
}

/** The application id of the path, and the tenant's business key for it. */
function connectionOf(call: EntryCall, caller: PipelineCaller): string {
  const applicationId = parse(KeySegment, safeDecode(call.params.applicationId ?? ''), 'application id');
  return connectionKey(caller.customerId, applicationId);
}

export const startRoute: KeyRoute = {
  auth: 'pipeline-key',
  method: 'POST',
  pattern: /^\/v1\/connections$/,
  action: 'start',
  handler: (call) => {
    const { caller, options, audit, log } = call;
    const tenant = caller.customerId;
    return audited(audit, { actor: keyActor(caller), action: 'start', tenant }, log, async ({ note, begin }) => {
      const body = parse(StartBody, await readJsonBody(call.request, options.maxBodyBytes), 'body');
      const workflowId = connectionKey(tenant, body.applicationId);
      note({ target: workflowId });
      // The tenant is the key's: a body that names another is a pipeline (or a key) used across tenants.
      const named = [body.customerId, body.connection.customerId].filter((value) => value !== undefined);
      const other = named.find((value) => value !== tenant);
      if (other !== undefined) {
        note({
          tenant: typeof other === 'string' && other !== '' ? other.slice(0, 200) : tenant,
          detail: `named customerId ${JSON.stringify(other).slice(0, 200)} with ${tenant}'s key`,
        });
        throw new HttpError(
          403,
          'Forbidden',
          `the body names customerId ${JSON.stringify(other)}, but this key is ${tenant}'s: a key starts its own tenant's connections only (leave customerId out)`,
          { customerId: other },
        );
      }
      const { customerId: _named, ...connection } = body.connection;
      if (body.callback !== undefined && connection.callback !== undefined)
        throw new HttpError(400, 'InvalidRequest', 'invalid body: callback: give it once, beside connection (not inside it)');
      const callback = body.callback ?? (connection.callback === undefined ? undefined : parse(CallbackInput, connection.callback, 'callback'));
      if (callback !== undefined) {
        note({ detail: `callback ${displayedUrl(callback.url)}` });
        // The worker's own check (src/callbacks/callback-policy.ts), asked before anything starts.
        const refusal = callbackRequestRefusal({ urls: options.callbackUrls, resultInBody: options.resultInBody ?? new Set() }, tenant, callback);
        if (refusal?.field === 'url') throw new HttpError(400, 'CallbackUrlRefused', `callback.url ${refusal.problem}; nothing was started`);
        if (refusal?.field === 'includeResult')
          throw new HttpError(
            400,
            'CallbackResultRefused',
            `callback.includeResult: ${refusal.problem}; leave it out to get a one-time reference; nothing was started`,
          );
      }
      const input = { ...connection, customerId: tenant, ...(callback === undefined ? {} : { callback }) } as ConnectionInputArgs;
      const running = await current(options.connections, workflowId);
      if (running?.executionStatus === 'RUNNING') {
        throw new HttpError(
          409,
          'ConnectionRunning',
          `application ${body.applicationId} already has a running connection: ${workflowId} (run ${running.runId}); read its state, or cancel it first`,
          { workflowId, runId: running.runId },
        );
      }
      await begin();
      const client = clientFor(options.connections, tenant);
      const { runId } = await client.start(workflowId, input);
      return { reply: { status: 202, body: { workflowId, runId } }, detail: `run ${runId}` };
    });
  },
};

export const stateRoute: KeyRoute = {
  auth: 'pipeline-key',
  method: 'GET',
  pattern: /^\/v1\/connections\/(?<applicationId>[^/]+)$/,
  action: 'read',
  handler: (call) => {
    const { caller, options, audit, log } = call;
    // A read is recorded only when refused (as the console's): `begin` is never called.
    return audited(audit, { actor: keyActor(caller), action: 'read', tenant: caller.customerId }, log, async ({ note }) => {
      const workflowId = connectionOf(call, caller);
      note({ target: workflowId });
      const state = await options.connections.getState(workflowId);
      return { reply: { status: 200, body: { workflowId, state } } };
    });
  },
};

export const cancelRoute: KeyRoute = {
  auth: 'pipeline-key',
  method: 'POST',
  pattern: /^\/v1\/connections\/(?<applicationId>[^/]+)\/cancel$/,
  action: 'cancel',
  handler: (call) => {
    const { caller, options, audit, log } = call;
    return audited(audit, { actor: keyActor(caller), action: 'cancel', tenant: caller.customerId }, log, async ({ note, begin }) => {
      const workflowId = connectionOf(call, caller);
      note({ target: workflowId });
      const running = await current(options.connections, workflowId);
      if (running === undefined) throw new ConnectionNotFoundError(workflowId);
      if (running.executionStatus !== 'RUNNING')
        throw new HttpError(409, 'ConnectionEnded', `${workflowId} has ended (${running.executionStatus}): there is nothing to cancel`, {
          workflowId,
          runId: running.runId,
        });
      await begin();
      await clientFor(options.connections, caller.customerId).cancel(workflowId);
      return { reply: { status: 202, body: { workflowId, runId: running.runId, cancelRequested: true } }, detail: `run ${running.runId}` };
    });
  },
};
