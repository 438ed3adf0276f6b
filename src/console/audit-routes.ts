/**
 * Reading the audit trail (src/audit): GET /api/audit?customer=<tenant>&from=<ISO time>&to=<ISO time>&limit=<n>
 * → { entries } oldest first, or `format=jsonl` for an export as JSON lines. An admin of the tenant
 * reads its entries; an admin of every tenant may leave `customer` out for all of them (sign-ins
 * name no tenant). Reading the trail is itself recorded.
 */
import { z } from 'zod';
import type { AuditTrail } from '../audit/audit-trail.js';
import { parse } from '../http/json-http.js';
import type { Route } from './router.js';

export const MAX_AUDIT_ENTRIES = 10_000;

const When = z.iso.datetime({ offset: true, message: 'must be an ISO 8601 time such as 2026-11-29T00:00:00Z' }).transform((text) => new Date(text));
const AuditQueryParams = z
  .strictObject({
    customer: z.string().min(1).max(200).optional(),
    from: When.optional(),
    to: When.optional(),
    limit: z.coerce.number().int().min(1).max(MAX_AUDIT_ENTRIES).default(1_000),
    format: z.enum(['json', 'jsonl']).default('json'),
  })
  .refine((query) => query.from === undefined || query.to === undefined || query.from < query.to, { message: 'from must be before to', path: ['from'] });

export function auditRoutes(audit: AuditTrail, defaultCustomerId: string | undefined): Route[] {
  return [
    {
      method: 'GET',
      path: '/api/audit',
      permission: 'administer',
      audit: { action: 'audit.read' },
      handler: async ({ url, authorize, recordedIds }) => {
        const query = parse(AuditQueryParams, Object.fromEntries(url.searchParams), 'query');
        const tenant = query.customer ?? defaultCustomerId;
        await authorize(tenant);
        // This read's own attempt is recorded (before the query): it is not one of the entries it reads.
        const own = new Set(recordedIds());
        const entries = (await audit.query({ tenant, from: query.from, to: query.to, limit: query.limit + own.size }))
          .filter((entry) => !own.has(entry.id))
          .slice(0, query.limit);
        const detail = `${entries.length} entr${entries.length === 1 ? 'y' : 'ies'}${query.from ? ` from ${query.from.toISOString()}` : ''}${query.to ? ` to ${query.to.toISOString()}` : ''}`;
        return query.format === 'jsonl'
          ? { status: 200, body: entries, jsonLines: true, auditDetail: detail }
          : { status: 200, body: { tenant: tenant ?? null, entries }, auditDetail: detail };
      },
    },
  ];
}
