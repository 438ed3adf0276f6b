/**
 * The console's connection counts, per tenant the caller may read:
 *   GET /api/connections/counts?customer=a,b&limit=
 *     → { tenants: [{ customerId, total, running: { Authorizing, AwaitingAnswer, Retrieving },
 *                     closed: { Completed, Failed, Canceled, Terminated, TimedOut, ContinuedAsNew } }],
 *         found: 'named' | 'roles' | 'visibility', more, countedAt }
 * Counted through Temporal visibility, each query scoped to one tenant's CustomerId (connection-counts.ts);
 * the worker's `aggregation_connections` gauge stays fleet-wide, for the platform team
 * (docs/threat-model.md).
 *
 * Which tenants:
 * - `?customer=a,b`: those, each authorized (a tenant the caller may not read answers 403, recorded
 *   as refused, as every route's refusal is);
 * - else a caller with roles on listed tenants (an operator of A and B): exactly those tenants, zeros
 *   included, from its roles and never from visibility, so nothing of another tenant is even looked up;
 * - else a caller with a role on every tenant (`*`: the dev stack's shared token, a platform admin):
 *   the tenants that have connections, found through visibility (most recently active first, at most
 *   `limit`, `more` when there are others; `?customer=` names any one). Not the role map's tenants:
 *   the shared token's console has no role map, and the map names whom operators work for, not which
 *   lenders have connections (a tenant served by `*` admins alone is in no entry). Not one count
 *   `GROUP BY CustomerId`: visibility groups by ExecutionStatus only.
 * A caller with no role at all is refused (403, naming the role), as the list is.
 *
 * A read like the list: permission `read`, no audit record of its own (refusals are recorded).
 * Registered before `/api/connections/:workflowId`, which would otherwise take `counts` for a
 * workflow id (the router answers with the first route that matches path and method).
 */
import { z } from 'zod';
import { isTenantId } from '../contract/workflow-tenant.js';
import { ALL_TENANTS, tenantsWhere } from '../identity/roles.js';
import type { TenantConnectionCounts } from '../client/connection-counts.js';
import type { ConnectionsClient } from '../client/connections.js';
import { parse } from '../http/json-http.js';
import type { Route } from './router.js';

/** At most this many tenants per answer: each costs four count queries. */
export const MAX_COUNTED_TENANTS = 100;
/** Tenants counted at once (each four queries in parallel). */
const TENANTS_AT_ONCE = 5;

const CountsQuery = z.strictObject({
  customer: z
    .string()
    .max(4000)
    .transform((text) => [
      ...new Set(
        text
          .split(',')
          .map((part) => part.trim())
          .filter((part) => part !== ''),
      ),
    ])
    .refine((tenants) => tenants.length > 0, { message: 'must name at least one customer id' })
    .refine((tenants) => tenants.length <= MAX_COUNTED_TENANTS, { message: `must name at most ${MAX_COUNTED_TENANTS} customer ids` })
    .refine((tenants) => tenants.every(isTenantId), { message: 'must be customer ids (letters, digits, ".", "_", "-") separated by ","' })
    .optional(),
  limit: z.coerce.number().int().min(1).max(MAX_COUNTED_TENANTS).default(25),
});

export function countRoutes(connections: ConnectionsClient): Route[] {
  return [
    {
      method: 'GET',
      path: '/api/connections/counts',
      permission: 'read',
      handler: async ({ url, principal, authorize }) => {
        const query = parse(CountsQuery, Object.fromEntries(url.searchParams), 'query');
        const readable = tenantsWhere(principal, 'read');
        let tenants: string[];
        let found: 'named' | 'roles' | 'visibility';
        let more = false;
        if (query.customer !== undefined) {
          tenants = query.customer;
          found = 'named';
        } else if (readable !== ALL_TENANTS) {
          // No role at all: refused by name (authorize of no tenant needs a role on every tenant).
          if (readable.length === 0) await authorize(undefined);
          tenants = readable;
          found = 'roles';
        } else {
          await authorize(undefined);
          ({ tenants, more } = await connections.counts.tenants(query.limit));
          found = 'visibility';
        }
        for (const tenant of tenants) await authorize(tenant);
        const counted: TenantConnectionCounts[] = [];
        for (let start = 0; start < tenants.length; start += TENANTS_AT_ONCE) {
          counted.push(...(await Promise.all(tenants.slice(start, start + TENANTS_AT_ONCE).map((tenant) => connections.counts.ofTenant(tenant)))));
        }
        return { status: 200, body: { tenants: counted, found, more, countedAt: new Date().toISOString() } };
      },
    },
  ];
}
