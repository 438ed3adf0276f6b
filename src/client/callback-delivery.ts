/**
 * A connection's completion callback as the client reads it through its delivery workflow: the
 * delivery's state, and the one-time claim of a result sent by reference (its token the credential),
 * then that run's result. Apart from the client because it speaks to the delivery, not the connection.
 */
import { ApplicationFailure, ServiceError, WorkflowNotFoundError, WorkflowUpdateFailedError, type Client } from '@temporalio/client';
import type { ConnectionResult, ConnectionState } from '../contract/connection/connection-definitions.js';
import {
  CLAIM_REFUSALS,
  callbackDeliveryStateQuery,
  callbackWorkflowId,
  claimResultUpdate,
  sourceRunIdOfWebhookId,
  type CallbackDeliveryState,
  type ClaimedResult,
} from '../contract/callbacks/callback-definitions.js';
import { isTenantId, tenantOfWorkflowId } from '../contract/workflow-tenant.js';
import { ResultClaimRefusedError, ResultWaitFailedError } from './errors.js';
import type { ResultClaimRefusal } from './errors.js';
import { retryTransient, TransientRetryExhaustedError, type TransientRetryOptions } from './transient-retry.js';

/** The delivery of the connection's completion callback, or undefined (see `ConnectionsClient.callbackDelivery`). */
export async function callbackDeliveryOf(client: Client, state: ConnectionState): Promise<CallbackDeliveryState | undefined> {
  if (state.callback === undefined) return undefined;
  const handle = client.workflow.getHandle(state.callback.deliveryWorkflowId);
  try {
    // An ended delivery's final state is its result (its close event): a query would have a worker
    // replay its history, every time the console's page polls.
    // One that ended other than by itself (terminated by hand) has no final state: not shown.
    const { status } = await handle.describe();
    if (status.name === 'RUNNING') return await handle.query(callbackDeliveryStateQuery);
    return status.name === 'COMPLETED' ? ((await handle.result()) as CallbackDeliveryState) : undefined;
  } catch (error) {
    // Gone or unreachable: not shown.
    if (error instanceof WorkflowNotFoundError || error instanceof ServiceError) return undefined;
    throw error;
  }
}

/**
 * Claims the result `webhookId` refers to and reads it (see `ConnectionsClient.claimCallbackResult`);
 * `mapError` says what else Temporal threw about the workflow named.
 */
export async function claimCallbackResult(
  client: Client,
  mapError: (workflowId: string, error: unknown) => Error,
  customerId: string,
  webhookId: string,
  token: string,
  options: TransientRetryOptions,
): Promise<ClaimedResult & { readonly result: ConnectionResult }> {
  const runId = sourceRunIdOfWebhookId(webhookId);
  if (runId === undefined || !isTenantId(customerId)) throw new ResultClaimRefusedError(webhookId, 'unknown', 'no result reference has this address');
  const deliveryId = callbackWorkflowId(customerId, runId);
  let claimed: ClaimedResult;
  try {
    claimed = await client.workflow.getHandle(deliveryId).executeUpdate(claimResultUpdate, { args: [{ token }] });
  } catch (error) {
    if (error instanceof WorkflowUpdateFailedError) {
      const said = error.cause?.message ?? error.message;
      throw new ResultClaimRefusedError(webhookId, claimRefusalOf(error.cause), said, { cause: error });
    }
    if (error instanceof WorkflowNotFoundError || (error instanceof ServiceError && /not found|already completed/i.test(error.message))) {
      throw new ResultClaimRefusedError(webhookId, ...(await endedClaim(client, deliveryId)), { cause: error });
    }
    throw mapError(deliveryId, error);
  }
  // The delivery names the run it stands for: never another tenant's, nor another run.
  if (tenantOfWorkflowId(claimed.workflowId) !== customerId || claimed.runId !== runId) {
    throw new ResultClaimRefusedError(
      webhookId,
      'unknown',
      `the delivery named ${claimed.workflowId} (run ${claimed.runId}), not a run of ${customerId}'s ${runId}`,
    );
  }
  const handle = client.workflow.getHandle(claimed.workflowId, claimed.runId);
  try {
    const result = (await retryTransient(() => handle.result(), options)) as ConnectionResult;
    return { ...claimed, result };
  } catch (error) {
    if (error instanceof TransientRetryExhaustedError) throw new ResultWaitFailedError(claimed.workflowId, error.lastCode, error.attempts, { cause: error });
    throw mapError(claimed.workflowId, error);
  }
}

/**
 * Why a delivery takes no claim any more: it has ended (after its result was claimed, or once the
 * window passed: its final state says which), or there is none at this address.
 */
async function endedClaim(client: Client, deliveryId: string): Promise<[ResultClaimRefusal, string]> {
  const handle = client.workflow.getHandle(deliveryId);
  const status = await handle.describe().then(
    (info) => info.status.name,
    () => undefined,
  );
  if (status === undefined) return ['unknown', 'no result reference has this address'];
  const final = status === 'COMPLETED' ? await (handle.result() as Promise<CallbackDeliveryState>).catch(() => undefined) : undefined;
  const why = final?.resultClaim === 'claimed' ? CLAIM_REFUSALS.claimed : final?.resultClaim === 'none' ? CLAIM_REFUSALS.none : CLAIM_REFUSALS.expired;
  return [why.reason, why.message];
}

/**
 * Why the delivery's validator refused a claim, by the failure type it threw (CLAIM_REFUSALS), or by
 * its message: a delivery still on a build from before the types threw plain errors with the same
 * messages, and deliveries live for days across deploys.
 */
function claimRefusalOf(failure: Error | undefined): ResultClaimRefusal {
  const type = failure instanceof ApplicationFailure ? failure.type : undefined;
  return Object.values(CLAIM_REFUSALS).find((refusal) => refusal.type === type || refusal.message === failure?.message)?.reason ?? 'wrong-token';
}
