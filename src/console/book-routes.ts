/**
 * The console's JSON API for book refreshes, over the pipeline client's `books`. The tenant of the
 * listing is `?customer=`, else the console's default tenant (as the schedule routes); a refresh's
 * own routes need none (its id names its tenant):
 *   GET  /api/books/refreshes?customer=&cadence=&limit=    → { customerId, refreshes: [{ ...summary, progress | report }], latestReport }
 *   GET  /api/books/refreshes/:refreshId                   → { progress }
 *   GET  /api/books/refreshes/:refreshId/report            → { report } (409 ReportNotReady while it runs)
 *   GET  /api/books/refreshes/:refreshId/report/pages/:n   → { page }
 *   POST /api/books/refreshes/:refreshId/(pause|cancel)    [{ reason? }] → { progress }
 *   POST /api/books/refreshes/:refreshId/resume            → { progress }
 *   POST /api/books/refreshes/:refreshId/resize            { size } | { unpin: true } → { progress }
 */
import { z } from 'zod';
import type { BookProgress, BookReport } from '../contract/book/book-definitions.js';
import { tenantOfWorkflowId } from '../contract/workflow-tenant.js';
import type { BookRefreshSummary } from '../client/book-refresh-runs.js';
import type { ConnectionsClient } from '../client/connections.js';
import { BookReportNotReadyError } from '../client/errors.js';
import { checkSameOrigin, hasBody, HttpError, parse, readJsonBody, safeDecode } from '../http/json-http.js';
import type { Route, RouteCall } from './router.js';

const ListQuery = z.strictObject({
  customer: z.string().min(1).max(200).optional(),
  cadence: z.string().min(1).max(40).optional(),
  limit: z.coerce.number().int().min(1).max(50).default(10),
});
const ReasonBody = z.strictObject({ reason: z.string().trim().min(1).max(500).optional() });
const NoBody = z.strictObject({});
// The client checks the size's range and says so (400 from its InvalidBookRequestError).
const ResizeBody = z.union([z.strictObject({ size: z.number() }), z.strictObject({ unpin: z.literal(true) })], {
  error: () => 'must be { size } or { unpin: true }',
});
const PageNumber = z.coerce.number().int().min(1);

/** A refresh as the page lists it: running ones with their progress, ended ones with their report. */
export interface ListedRefresh extends BookRefreshSummary {
  readonly progress?: BookProgress | undefined;
  readonly report?: BookReport | undefined;
  /** Why neither could be read (a refresh terminated without a report, a query that failed). */
  readonly problem?: string | undefined;
}

export function bookRoutes(connections: ConnectionsClient, defaultCustomerId: string | undefined): Route[] {
  const { books } = connections;
  /** The refresh's id, once the caller may do the route's permission on its tenant (its id names it). */
  const refreshIdOf = async ({ params, authorize }: Pick<RouteCall, 'params' | 'authorize'>) => {
    const refreshId = safeDecode(params.refreshId ?? '');
    await authorize(tenantOfWorkflowId(refreshId));
    return refreshId;
  };
  const refreshTarget = (params: Readonly<Record<string, string>>) => safeDecode(params.refreshId ?? '');

  /** A state-changing call: same origin only, its body (optional unless `required`) checked. */
  async function bodyOf<S extends z.ZodType>(call: RouteCall, schema: S, required = false): Promise<z.output<S>> {
    checkSameOrigin(call.request);
    if (!required && !hasBody(call.request)) return parse(schema, {}, 'body');
    return parse(schema, await readJsonBody(call.request), 'body');
  }

  async function listed(summary: BookRefreshSummary): Promise<ListedRefresh> {
    try {
      // Ended: its result, read once from history, rather than a query the worker replays it for.
      if (summary.executionStatus !== 'RUNNING') return { ...summary, report: await books.report(summary.refreshWorkflowId) };
      return { ...summary, progress: await books.progress(summary.refreshWorkflowId) };
    } catch (error) {
      // Visibility lags the refresh by a moment: it ended since it was listed.
      if (error instanceof BookReportNotReadyError) return { ...summary, progress: await books.progress(summary.refreshWorkflowId) };
      return { ...summary, problem: error instanceof Error ? error.message : String(error) };
    }
  }

  return [
    {
      method: 'GET',
      path: '/api/books/refreshes',
      permission: 'read',
      handler: async ({ url, authorize }) => {
        const query = parse(ListQuery, Object.fromEntries(url.searchParams), 'query');
        const customerId = query.customer ?? defaultCustomerId;
        if (customerId === undefined) throw new HttpError(400, 'InvalidRequest', 'invalid request: customer: required (this console has no default tenant)');
        await authorize(customerId);
        const summaries = await books.refreshes({ customerId, ...(query.cadence ? { cadence: query.cadence } : {}), limit: query.limit });
        const refreshes = await Promise.all(summaries.map(listed));
        const latestReport = refreshes.find((refresh) => refresh.report)?.report ?? null;
        return { status: 200, body: { customerId, refreshes, latestReport } };
      },
    },
    {
      method: 'GET',
      path: '/api/books/refreshes/:refreshId',
      permission: 'read',
      handler: async (call) => ({ status: 200, body: { progress: await books.progress(await refreshIdOf(call)) } }),
    },
    {
      method: 'GET',
      path: '/api/books/refreshes/:refreshId/report',
      permission: 'read',
      handler: async (call) => ({ status: 200, body: { report: await books.report(await refreshIdOf(call)) } }),
    },
    {
      method: 'GET',
      path: '/api/books/refreshes/:refreshId/report/pages/:page',
      permission: 'read',
      handler: async (call) => {
        const refreshId = await refreshIdOf(call);
        const page = parse(PageNumber, safeDecode(call.params.page ?? ''), 'page');
        return { status: 200, body: { page: await books.reportPage(refreshId, page) } };
      },
    },
    {
      method: 'POST',
      path: '/api/books/refreshes/:refreshId/:action(pause|cancel)',
      permission: 'administer',
      audit: { action: 'book.change', target: refreshTarget, detail: (params) => params.action },
      handler: async (call) => {
        const refreshId = await refreshIdOf(call);
        const { reason } = await bodyOf(call, ReasonBody);
        const why = reason ?? `${call.params.action === 'pause' ? 'paused' : 'cancelled'} from the console`;
        const progress = call.params.action === 'pause' ? await books.pause(refreshId, why) : await books.cancel(refreshId, why);
        return { status: 200, body: { progress } };
      },
    },
    {
      method: 'POST',
      path: '/api/books/refreshes/:refreshId/resume',
      permission: 'administer',
      audit: { action: 'book.change', target: refreshTarget, detail: () => 'resume' },
      handler: async (call) => {
        const refreshId = await refreshIdOf(call);
        await bodyOf(call, NoBody);
        return { status: 200, body: { progress: await books.resume(refreshId) } };
      },
    },
    {
      method: 'POST',
      path: '/api/books/refreshes/:refreshId/resize',
      permission: 'administer',
      audit: { action: 'book.change', target: refreshTarget, detail: () => 'resize' },
      handler: async (call) => {
        const refreshId = await refreshIdOf(call);
        const request = await bodyOf(call, ResizeBody, true);
        return { status: 200, body: { progress: await books.resize(refreshId, request) } };
      },
    },
  ];
}
