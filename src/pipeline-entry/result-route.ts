/**
 * GET /v1/results/:customerId/:webhookId with `Authorization: Bearer <token>`: the result a completion
 * callback sent by reference (the event's `resultRef`: src/contract/callbacks/callback-definitions.ts), handed
 * out once. No pipeline key: the one-time token is the credential, so a receiver that holds the event
 * (and nothing of ours) can fetch it.
 *
 * The entry executes `claimResultUpdate` on the delivery `callback-<customerId>:<runId>` (the run read
 * from the webhook id `msg_<runId>`): its validator refuses a wrong token (401), a second claim or one
 * after the window (410), and the entry answers 404 for an address of no delivery; a refused claim
 * leaves no trace in the delivery's history, and is recorded here in the audit trail. On success the
 * entry reads that run's result with the product's converter (the pipeline client's codec) and
 * answers 200 `{ workflowId, runId, result }`.
 *
 * If the entry dies (or the connection to the caller breaks) between the claim and the answer, the
 * claim is spent: the delivery has recorded it and refuses the next with 410, and the trail shows the
 * attempt as `unknown` (or ok, with the answer undelivered). Nothing is lost but this one reference:
 * the pipeline still reads the connection's state with its own key (GET /v1/connections/:applicationId:
 * Completed, with what it retrieved), and gets the data again by starting the application's connection
 * anew (a cached session on the saved login), or through an operator. A second reference is never
 * minted for the same event: a token that could be claimed twice would be one an eavesdropper could use.
 */
import { bearerToken, HttpError, safeDecode } from '../http/json-http.js';
import type { TokenRoute } from './entry-routes.js';
import { audited, resultTokenActor } from './entry-audit.js';

/** A token longer than this is no token of ours (nor worth hashing through the update). */
const MAX_TOKEN_CHARS = 512;

export const resultRoute: TokenRoute = {
  auth: 'own',
  method: 'GET',
  pattern: /^\/v1\/results\/(?<customerId>[^/]+)\/(?<webhookId>[^/]+)$/,
  handler: (call) => {
    const customerId = safeDecode(call.params.customerId ?? '').slice(0, 200);
    const webhookId = safeDecode(call.params.webhookId ?? '').slice(0, 200);
    return audited(
      call.audit,
      { actor: resultTokenActor(customerId), action: 'result.claim', tenant: customerId, target: webhookId },
      call.log,
      async ({ begin }) => {
        const token = bearerToken(call.request);
        if (token === undefined || token.length > MAX_TOKEN_CHARS)
          throw new HttpError(401, 'Unauthorized', "send Authorization: Bearer <the token of the event's resultRef>");
        // The attempt is recorded before the claim: a claim spent without its answer shows as unknown.
        await begin();
        const claimed = await call.options.connections.claimCallbackResult(customerId, webhookId, token);
        return { reply: { status: 200, body: claimed }, detail: `${claimed.workflowId} run ${claimed.runId}` };
      },
    );
  },
};
