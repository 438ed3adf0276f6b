/**
 * The console's JSON API over the pipeline client:
 *   GET  /api/connections?status=AwaitingAnswer|...|any&customer=&institution=&limit=
 *   GET  /api/connections/:workflowId                  → { workflowId, state, now, callback? } (callback: its delivery, once it ended with one)
 *   POST /api/connections/:workflowId/answer           { challengeSetId, responses } → { outcome }
 *   POST /api/connections/:workflowId/cancel           → { cancelled: true }
 *   GET  /api/connections/:workflowId/activity         → { workflowId, activity: [{ at, who, action, name?, outcome? }] }
 * Answers and cancels are sent under the signed-in operator's identity (`console:<name> <subject>`),
 * which Temporal records in the connection's history: its activity says who answered.
 */
import { z } from 'zod';
import { SecurityResponses } from '../aggregator/schemas.js';
import { CONNECTION_STATUSES } from '../contract/connection/connection-definitions.js';
import { tenantOfWorkflowId } from '../contract/workflow-tenant.js';
import type { ConnectionSummary } from '../client/connection-summary.js';
import { ALL_TENANTS, tenantsWhere, type Principal } from '../identity/roles.js';
import { WorkflowId } from '../client/business-key.js';
import type { ConnectionsClient } from '../client/connections.js';
import { checkSameOrigin, parse, readJsonBody, safeDecode } from '../http/json-http.js';
import type { Route, RouteCall } from './router.js';

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

export function connectionRoutes(connections: ConnectionsClient): Route[] {
  /** The connection's id, once the caller may do the route's permission on its tenant. */
  const workflowIdOf = async ({ params, authorize }: Pick<RouteCall, 'params' | 'authorize'>) => {
    const workflowId = parse(WorkflowId, safeDecode(params.workflowId ?? ''), 'workflow id');
    await authorize(tenantOfWorkflowId(workflowId));
    return workflowId;
  };
  const connectionTarget = (params: Readonly<Record<string, string>>) => safeDecode(params.workflowId ?? '');
  return [
    {
      method: 'GET',
      path: '/api/connections',
      permission: 'read',
      handler: async ({ url, principal, authorize }) => {
        const query = parse(ListQuery, Object.fromEntries(url.searchParams), 'query');
        const filter = { status: query.status === 'any' ? undefined : query.status, institution: query.institution, limit: query.limit };
        const readable = tenantsWhere(principal, 'read');
        // Each tenant's operator sees its own tenants' connections only: one listing per tenant, newest
        // first. Each is authorized; no tenant at all is refused, naming the role, not an empty list.
        const tenants = query.customer !== undefined ? [query.customer] : readable === ALL_TENANTS || readable.length === 0 ? [undefined] : readable;
        for (const tenant of tenants) await authorize(tenant);
        const lists = await Promise.all(tenants.map((customerId) => connections.list({ ...filter, customerId })));
        const listed = tenants.length === 1 ? (lists[0] ?? []) : newestFirst(lists.flat()).slice(0, query.limit);
        return { status: 200, body: { connections: listed } };
      },
    },
    {
      method: 'GET',
      path: '/api/connections/:workflowId',
      permission: 'read',
      handler: async (call) => {
        const workflowId = await workflowIdOf(call);
        const state = await connections.getState(workflowId);
        const callback = await connections.callbackDelivery(state);
        return { status: 200, body: { workflowId, state, now: new Date().toISOString(), ...(callback ? { callback } : {}) } };
      },
    },
    {
      method: 'GET',
      path: '/api/connections/:workflowId/activity',
      permission: 'read',
      handler: async (call) => {
        const workflowId = await workflowIdOf(call);
        return { status: 200, body: { workflowId, activity: await connections.activity(workflowId) } };
      },
    },
    {
      method: 'POST',
      path: '/api/connections/:workflowId/answer',
      permission: 'answer',
      audit: { action: 'answer', target: connectionTarget, outcome: (body) => (body as { outcome?: { outcome?: string } }).outcome?.outcome },
      handler: async (call) => {
        const { request } = call;
        const workflowId = await workflowIdOf(call);
        checkSameOrigin(request);
        const body = parse(AnswerBody, await readJsonBody(request), 'body');
        return { status: 200, body: { outcome: await connections.actingAs(identityOf(call.principal)).answer(workflowId, body) } };
      },
    },
    {
      method: 'POST',
      path: '/api/connections/:workflowId/cancel',
      permission: 'cancel',
      audit: { action: 'cancel', target: connectionTarget },
      handler: async (call) => {
        const { request } = call;
        const workflowId = await workflowIdOf(call);
        checkSameOrigin(request);
        await connections.actingAs(identityOf(call.principal)).cancel(workflowId);
        return { status: 202, body: { cancelled: true } };
      },
    },
  ];
}

/** The identity an operator's requests carry into Temporal's history. */
export function identityOf(principal: Principal): string {
  return `console:${principal.name} <${principal.subject}>`;
}

function newestFirst(connections: ConnectionSummary[]): ConnectionSummary[] {
  return [...connections].sort((a, b) => b.startedAt.localeCompare(a.startedAt));
}
