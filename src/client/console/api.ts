/**
 * The console's JSON API over the pipeline client:
 *   GET  /api/connections?status=AwaitingAnswer|...|any&customer=&institution=&limit=
 *   GET  /api/connections/:workflowId                  → { workflowId, state, now }
 *   POST /api/connections/:workflowId/answer           { challengeSetId, responses } → { outcome }
 *   POST /api/connections/:workflowId/cancel           → { cancelled: true }
 */
import { z } from 'zod';
import { SecurityResponses } from '../../aggregator/schemas.js';
import { CONNECTION_STATUSES } from '../../contract/connection-definitions.js';
import { WorkflowId } from '../business-key.js';
import type { ConnectionsClient } from '../connections.js';
import { checkSameOrigin, parse, readJsonBody, safeDecode } from './http.js';
import type { Params, Route } from './router.js';

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
  const workflowIdOf = (params: Params) => parse(WorkflowId, safeDecode(params.workflowId ?? ''), 'workflow id');
  return [
    {
      method: 'GET',
      path: '/api/connections',
      handler: async ({ url }) => {
        const query = parse(ListQuery, Object.fromEntries(url.searchParams), 'query');
        const listed = await connections.list({
          status: query.status === 'any' ? undefined : query.status,
          customerId: query.customer,
          institution: query.institution,
          limit: query.limit,
        });
        return { status: 200, body: { connections: listed } };
      },
    },
    {
      method: 'GET',
      path: '/api/connections/:workflowId',
      handler: async ({ params }) => {
        const workflowId = workflowIdOf(params);
        const state = await connections.getState(workflowId);
        return { status: 200, body: { workflowId, state, now: new Date().toISOString() } };
      },
    },
    {
      method: 'POST',
      path: '/api/connections/:workflowId/answer',
      handler: async ({ request, params }) => {
        const workflowId = workflowIdOf(params);
        checkSameOrigin(request);
        const body = parse(AnswerBody, await readJsonBody(request), 'body');
        return { status: 200, body: { outcome: await connections.answer(workflowId, body) } };
      },
    },
    {
      method: 'POST',
      path: '/api/connections/:workflowId/cancel',
      handler: async ({ request, params }) => {
        const workflowId = workflowIdOf(params);
        checkSameOrigin(request);
        await connections.cancel(workflowId);
        return { status: 202, body: { cancelled: true } };
      },
    },
  ];
}
