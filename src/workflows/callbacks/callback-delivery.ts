/**
 * A completion callback's delivery (src/contract/callbacks/callback-definitions.ts): posts the event, signed,
 * until the receiver answers 2xx or a day has passed, backing off from 5 s to an hour between
 * attempts on durable timers; then, for a result sent by reference, keeps its one-time claim open
 * until it expires. Every attempt is in history and in the state query (Delivering, Retrying,
 * Delivered, GivenUp). The body is made once, so every attempt posts the same bytes under the same
 * webhook-id. Deterministic code only.
 *
 * AutoUpgrade: a delivery outlives deploys (up to a day of attempts and two of claims), so it moves
 * to the current build, and a change to its steps needs a patch (src/workflows/patches.ts).
 */
import {
  ApplicationFailure,
  allHandlersFinished,
  condition,
  log,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  setWorkflowOptions,
  sleep,
} from '@temporalio/workflow';
import type { CallbackActivities } from '../../activities/callback-activities.js';
import {
  CALLBACK_DELIVERY_WINDOW_MS,
  CALLBACK_FIRST_RETRY_MS,
  CALLBACK_MAX_RETRY_MS,
  CLAIM_REFUSALS,
  callbackDeliveryStateQuery,
  claimResultUpdate,
  RESULT_CLAIM_WINDOW_MS,
  type CallbackAttemptOutcome,
  type CallbackDeliveryInput,
  type CallbackDeliveryState,
  type CallbackEvent,
  type ClaimedResult,
  type ResultReference,
} from '../../contract/callbacks/callback-definitions.js';
import { UNTIL_IT_LANDS_RETRY } from '../../retry/activity-retry.js';

/** One attempt: the receiver's answer or the network's error comes back as a value; a worker lost mid-attempt is a failed attempt. */
const { deliverCallback } = proxyActivities<CallbackActivities>({ startToCloseTimeout: '30s', retry: { maximumAttempts: 1 }, summary: 'post the callback' });
const { mintResultClaim } = proxyLocalActivities<CallbackActivities>({
  startToCloseTimeout: '10s',
  retry: UNTIL_IT_LANDS_RETRY,
  summary: 'mint the result claim',
});

/** The URL without its query (which may carry the receiver's own secret): no URL parser in here. */
function shownUrl(url: string): string {
  const query = url.indexOf('?');
  return query < 0 ? url : `${url.slice(0, query)}?…`;
}

export async function callbackDeliveryWorkflow(input: CallbackDeliveryInput): Promise<CallbackDeliveryState> {
  const startedAt = Date.now();
  let state: CallbackDeliveryState = {
    webhookId: input.webhookId,
    eventType: input.event.type,
    url: shownUrl(input.url),
    status: 'Delivering',
    attempts: 0,
    resultClaim: 'none',
  };
  let reference: ResultReference | undefined;
  setHandler(callbackDeliveryStateQuery, () => state);
  setHandler(
    claimResultUpdate,
    (): ClaimedResult => {
      state = { ...state, resultClaim: 'claimed' };
      log.info('result claimed', { webhookId: input.webhookId });
      return { workflowId: input.event.data.workflowId, runId: input.event.data.runId };
    },
    {
      // Refused before it is recorded: a wrong token, a second claim or a late one leaves no trace in history.
      validator: ({ token }) => {
        const refuse = (why: (typeof CLAIM_REFUSALS)[keyof typeof CLAIM_REFUSALS]) =>
          ApplicationFailure.create({ type: why.type, message: why.message, nonRetryable: true });
        if (reference === undefined) throw refuse(CLAIM_REFUSALS.none);
        if (state.resultClaim === 'claimed') throw refuse(CLAIM_REFUSALS.claimed);
        if (state.resultClaim === 'expired' || Date.now() >= Date.parse(reference.expiresAt)) throw refuse(CLAIM_REFUSALS.expired);
        if (typeof token !== 'string' || token !== reference.token) throw refuse(CLAIM_REFUSALS.wrongToken);
      },
      description: 'Claim the result sent by reference, once, with the token of the event.',
    },
  );

  if (input.resultByReference) {
    reference = await mintResultClaim({
      customerId: input.customerId,
      webhookId: input.webhookId,
      expiresAt: new Date(startedAt + RESULT_CLAIM_WINDOW_MS).toISOString(),
    });
    state = { ...state, resultClaim: 'waiting' };
  }
  const event: CallbackEvent = reference === undefined ? input.event : { ...input.event, data: { ...input.event.data, resultRef: reference } };
  const body = JSON.stringify(event);

  const deadline = startedAt + CALLBACK_DELIVERY_WINDOW_MS;
  let delay = CALLBACK_FIRST_RETRY_MS;
  for (;;) {
    const at = Date.now();
    const lastChance = at + delay > deadline;
    state = {
      ...state,
      attempts: state.attempts + 1,
      firstAttemptAt: state.firstAttemptAt ?? new Date(at).toISOString(),
      lastAttemptAt: new Date(at).toISOString(),
      nextAttemptAt: undefined,
    };
    let outcome: CallbackAttemptOutcome;
    try {
      outcome = await deliverCallback({ customerId: input.customerId, url: input.url, webhookId: input.webhookId, body, lastChance });
    } catch (error) {
      outcome = { delivered: false, error: `the attempt did not finish: ${error instanceof Error ? error.message : String(error)}` };
    }
    if (outcome.delivered) {
      state = { ...state, status: 'Delivered', deliveredAt: new Date().toISOString(), lastError: undefined };
      log.info('callback delivered', { webhookId: input.webhookId, attempts: state.attempts, statusCode: outcome.statusCode });
      break;
    }
    if (lastChance || outcome.permanent === true) {
      state = { ...state, status: 'GivenUp', givenUpAt: new Date().toISOString(), lastError: outcome.error };
      log.warn('callback given up', { webhookId: input.webhookId, attempts: state.attempts, error: outcome.error });
      break;
    }
    state = { ...state, status: 'Retrying', lastError: outcome.error, nextAttemptAt: new Date(Date.now() + delay).toISOString() };
    await sleep(delay);
    delay = Math.min(delay * 2, CALLBACK_MAX_RETRY_MS);
  }

  if (reference !== undefined) {
    const expiresAt = Date.parse(reference.expiresAt);
    const claimed = await condition(() => state.resultClaim === 'claimed', Math.max(1, expiresAt - Date.now()));
    if (!claimed) state = { ...state, resultClaim: 'expired' };
  }
  await condition(allHandlersFinished);
  return state;
}

setWorkflowOptions({ versioningBehavior: 'AUTO_UPGRADE' }, callbackDeliveryWorkflow);
