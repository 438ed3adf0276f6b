/**
 * The console's JSON API for scheduled refresh and forgetting, over the pipeline client's
 * `schedules` and `logins`. The tenant is `?customer=` or the body's `customer`, else the console's
 * default tenant (AGGREGATOR_CUSTOMER_ID, as the CLI):
 *   GET  /api/schedules?customer=                        → { customerId, schedules: [... , latest] }
 *   POST /api/schedules/:loginId/(pause|resume|trigger)  [{ customer?, note? }] → { loginId, action }
 *   POST /api/schedules/:loginId/delete                  [{ customer? }] → { loginId, schedule: deleted|none }
 *   POST /api/logins/:loginId/forget                     [{ customer? }] → { record } (200), or
 *                                                        { workflowId, state: 'running' } (202) while it waits out a card in use
 */
import { z } from 'zod';
import type { ConnectionsClient } from '../client/connections.js';
import { LoginRef } from '../client/refresh-schedule-input.js';
import type { LatestRefresh } from '../client/schedules.js';
import { checkSameOrigin, hasBody, HttpError, parse, readJsonBody, safeDecode } from '../http/json-http.js';
import type { Route, RouteCall } from './router.js';

/** How long a forget request waits for the record before answering 202 (CARD_IN_USE waits can take hours). */
const FORGET_WAIT_MS = 15_000;

const CustomerQuery = z.strictObject({ customer: z.string().min(1).max(200).optional() });
const ActionBody = z.strictObject({ customer: z.string().min(1).max(200).optional(), note: z.string().trim().min(1).max(500).optional() });

export function scheduleRoutes(connections: ConnectionsClient, defaultCustomerId: string | undefined): Route[] {
  const customerOf = (given: string | undefined) => {
    const customerId = given ?? defaultCustomerId;
    if (customerId === undefined) throw new HttpError(400, 'InvalidRequest', 'invalid request: customer: required (this console has no default tenant)');
    return customerId;
  };

  /** The login of a state-changing call: same origin only; tenant from the query or the (optional) body. */
  async function loginCall({
    request,
    url,
    params,
    authorize,
  }: RouteCall): Promise<{ ref: { customerId: string; loginId: string }; note: string | undefined }> {
    checkSameOrigin(request);
    const query = parse(CustomerQuery, Object.fromEntries(url.searchParams), 'query');
    const body = hasBody(request) ? parse(ActionBody, await readJsonBody(request), 'body') : {};
    const ref = parse(LoginRef, { customerId: customerOf(body.customer ?? query.customer), loginId: safeDecode(params.loginId ?? '') }, 'login');
    await authorize(ref.customerId);
    return { ref, note: body.note };
  }
  const loginTarget = (params: Readonly<Record<string, string>>) => safeDecode(params.loginId ?? '');

  return [
    {
      method: 'GET',
      path: '/api/schedules',
      permission: 'read',
      handler: async ({ url, authorize }) => {
        const customerId = customerOf(parse(CustomerQuery, Object.fromEntries(url.searchParams), 'query').customer);
        await authorize(customerId);
        const listed = await connections.schedules.list({ customerId });
        const schedules = await Promise.all(
          listed.map(async (schedule) => ({ ...schedule, latest: compactLatest(await connections.schedules.latestRefresh(schedule)) })),
        );
        return { status: 200, body: { customerId, schedules } };
      },
    },
    {
      method: 'POST',
      path: '/api/schedules/:loginId/:action(pause|resume|trigger)',
      permission: 'administer',
      audit: { action: 'schedule.change', target: loginTarget, detail: (params) => params.action },
      handler: async (call) => {
        const { ref, note } = await loginCall(call);
        const action = call.params.action;
        if (action === 'pause') await connections.schedules.pause(ref, note ?? 'paused from the console');
        else if (action === 'resume') await connections.schedules.unpause(ref, note ?? 'resumed from the console');
        else await connections.schedules.trigger(ref);
        return { status: 200, body: { loginId: ref.loginId, action } };
      },
    },
    {
      method: 'POST',
      path: '/api/schedules/:loginId/delete',
      permission: 'administer',
      audit: { action: 'schedule.change', target: loginTarget, detail: () => 'delete' },
      handler: async (call) => {
        const { ref } = await loginCall(call);
        return { status: 200, body: { loginId: ref.loginId, schedule: await connections.schedules.delete(ref) } };
      },
    },
    {
      method: 'POST',
      path: '/api/logins/:loginId/forget',
      permission: 'administer',
      audit: { action: 'login.forget', target: loginTarget },
      handler: async (call) => {
        const { ref } = await loginCall(call);
        const { workflowId } = await connections.logins.startForget(ref);
        // forget() joins the run just started (USE_EXISTING) and waits for its record.
        const record = connections.logins.forget(ref);
        let timer: ReturnType<typeof setTimeout> | undefined;
        const waited = new Promise<undefined>((resolve) => {
          timer = setTimeout(() => resolve(undefined), FORGET_WAIT_MS);
        });
        try {
          const done = await Promise.race([record, waited]);
          if (done !== undefined) return { status: 200, body: { record: done } };
        } finally {
          clearTimeout(timer);
        }
        // Still waiting (a card in use): it finishes on its own; its failure is the workflow's to record.
        record.catch(() => undefined);
        return { status: 202, body: { workflowId, state: 'running' } };
      },
    },
  ];
}

/** The latest run without its result (account data stays out of the page's listing). */
function compactLatest(latest: LatestRefresh | undefined) {
  if (!latest) return null;
  const { outcome } = latest;
  return {
    workflowId: latest.workflowId,
    trigger: latest.trigger,
    startedAt: latest.startedAt,
    outcome: outcome.kind,
    ...(outcome.kind === 'failed' ? { failureType: outcome.type, serviceCode: outcome.serviceCode, reason: outcome.reason } : {}),
  };
}
