/**
 * One console route's call as an audited action: the handler checks its caller's role on the tenant
 * it acts on (authorize), every refusal is recorded, each attempt is recorded before the action and
 * ended with its outcome after it, an action whose record cannot be written is refused
 * (http/audited-action.ts, as the pipeline entry's routes), and a handler that checked no role answers nothing (it fails closed).
 */
import type { IncomingMessage } from 'node:http';
import type { AuditTrail } from '../audit/audit-trail.js';
import { AuditedAction } from '../http/audited-action.js';
import { HttpError, type JsonReply } from '../http/json-http.js';
import { describeRoles, LEAST_ROLE, may, type Permission, type Principal } from '../identity/roles.js';
import { toHttpError } from './http-errors.js';
import type { Grant, Params, Route } from './router.js';

/** What the server knows of a request when its route is called. */
export interface RouteRequest {
  readonly request: IncomingMessage;
  readonly url: URL;
  readonly params: Params;
  readonly grant: Grant;
  readonly principal: Principal;
}

/** A 403 that says who may not do what on which tenant, and which role it would take. */
function forbidden(principal: Principal, permission: Permission, tenant: string | undefined): HttpError {
  const role = LEAST_ROLE[permission];
  const on = tenant === undefined ? 'every tenant (*)' : `tenant ${tenant}`;
  return new HttpError(
    403,
    'Forbidden',
    `${principal.name} may not ${permission} here: it takes the ${role} role on ${on} (${principal.name} has ${describeRoles(principal.roles)})`,
    {
      permission,
      role,
      ...(tenant === undefined ? {} : { tenant }),
    },
  );
}

/** Calls `route` for the request, audited as above; its reply, or a thrown HttpError. */
export async function callRoute(route: Route, { request, url, params, grant, principal }: RouteRequest, audit: AuditTrail): Promise<JsonReply> {
  const routeAudit = route.audit;
  let authorized = route.authorizesEachPayload === true;
  /** This request's attempts, one per tenant it touched, ended together with its outcome. */
  const action = new AuditedAction(audit);
  const recorded = new Set<string>();
  const begin = (tenant: string | undefined) => ({
    actor: principal,
    action: routeAudit?.action ?? 'read',
    tenant,
    target: routeAudit?.target?.(params),
    detail: routeAudit?.detail?.(params),
  });
  const recordAccess = async (tenant: string | undefined, refused?: 'refused') => {
    if (routeAudit === undefined) return;
    const key = `${refused ?? 'ok'}:${tenant ?? ''}`;
    if (recorded.has(key)) return;
    recorded.add(key);
    if (refused) await action.refused(begin(tenant), 'NotPermitted');
    else await action.begin(begin(tenant));
  };
  const authorize = async (tenant: string | undefined, permission: Permission = route.permission) => {
    if (!may(principal, permission, tenant)) {
      // Every refusal is recorded, reads' too: it is how a probe of another tenant's work shows.
      await action.refused(begin(tenant), 'Forbidden');
      throw forbidden(principal, permission, tenant);
    }
    authorized = true;
    await recordAccess(tenant);
  };
  return action.run({
    work: async () => {
      const reply = await route.handler({ request, url, params, grant, principal, authorize, recordAccess, recordedIds: () => action.attemptIds() });
      // A route that checked no role answers nothing: a handler that forgot its check fails closed.
      if (!authorized) throw new HttpError(500, 'RouteNotAuthorized', `${route.method} ${route.path} checked no role: its answer is withheld`);
      return reply;
    },
    detailOf: (reply) => reply.auditDetail ?? routeAudit?.outcome?.(reply.body),
    toHttpError,
  });
}
