/**
 * Completion callbacks: how a connection started with a callback URL tells a pipeline without
 * Temporal that it ended, in the Standard Webhooks format (https://www.standardwebhooks.com): a POST
 * of one JSON event with `webhook-id`, `webhook-timestamp` and `webhook-signature` headers, signed
 * with each of the tenant's current secrets (several during a rotation).
 *
 * The delivery is its own workflow, `callback-<customerId>:<runId of the connection>` (so its
 * payloads are sealed under the tenant's key), started when the connection ends. It posts until a 2xx
 * or a day has passed, then, when the result went by reference, keeps the one-time claim of the
 * result open for RESULT_CLAIM_WINDOW_MS. The webhook-id is the same on every attempt: a receiver that
 * answers 2xx twice for one event sees it twice with one id, and keeps one.
 *
 * Import-light (Temporal's definitions and types): the workflow bundle carries it.
 */
import { defineQuery, defineUpdate } from '@temporalio/workflow';
import type { ConnectionFailureInfo, ConnectionResult } from '../connection/connection-definitions.js';
import type { BookCounts } from '../book/book-definitions.js';

export const CALLBACK_DELIVERY_WORKFLOW_TYPE = 'callbackDeliveryWorkflow';

/** The kind of a delivery's workflow id: `callback-<customerId>:<runId>` (listed among the kinds src/contract/workflow-tenant.ts reads the tenant from). */
export const CALLBACK_WORKFLOW_ID_KIND = 'callback-';

export function callbackWorkflowId(customerId: string, sourceRunId: string): string {
  return `${CALLBACK_WORKFLOW_ID_KIND}${customerId}:${sourceRunId}`;
}

/** The event's stable id (the `webhook-id` header): one per ended run, the same on every attempt. */
export function webhookIdOf(sourceRunId: string): string {
  return `msg_${sourceRunId}`;
}

/** The run a webhook id stands for, or undefined when it is not one of ours. */
export function sourceRunIdOfWebhookId(webhookId: string): string | undefined {
  const match = /^msg_([0-9a-f-]{36})$/.exec(webhookId);
  return match?.[1];
}

/** A day of attempts (backoff doubling from 5 s to an hour), then the delivery gives up. */
export const CALLBACK_DELIVERY_WINDOW_MS = 24 * 60 * 60_000;
export const CALLBACK_FIRST_RETRY_MS = 5_000;
export const CALLBACK_MAX_RETRY_MS = 60 * 60_000;
/** How long a result sent by reference can be claimed, from the delivery's start. */
export const RESULT_CLAIM_WINDOW_MS = 2 * 24 * 60 * 60_000;

export const CALLBACK_EVENT_TYPES = [
  'connection.completed',
  'connection.failed',
  'connection.cancelled',
  'book.refresh.completed',
  'book.refresh.cancelled',
] as const;
export type CallbackEventType = (typeof CALLBACK_EVENT_TYPES)[number];

/**
 * Why a delivery refuses a claim of its result: the failure type its validator throws, the words, and
 * the refusal the clients report (ResultClaimRefusedError's `reason`). One table for the workflow that
 * refuses and the clients that read the refusal.
 */
export const CLAIM_REFUSALS = {
  none: { type: 'ResultClaimNone', reason: 'unknown', message: 'no result to claim: this event carries none by reference' },
  claimed: { type: 'ResultClaimed', reason: 'claimed', message: 'already claimed: a result by reference is fetched once' },
  expired: { type: 'ResultClaimExpired', reason: 'expired', message: 'expired: the claim window has closed' },
  wrongToken: { type: 'ResultClaimWrongToken', reason: 'wrong-token', message: 'wrong token' },
} as const;

/** A result sent by reference: POST-free, one GET with the token as bearer, once, before `expiresAt`. */
export interface ResultReference {
  readonly url: string;
  readonly token: string;
  readonly expiresAt: string;
}

/**
 * The body of a callback (JSON): what ended, how, and the result or its reference. A book refresh's
 * event carries its counts (no login's data): the per-login report is read through the book API.
 */
export interface CallbackEvent {
  readonly type: CallbackEventType;
  /** When the connection (or book refresh) ended (workflow time). */
  readonly timestamp: string;
  readonly data: {
    /** The connection's (or the book refresh's) workflow id and the run that ended. */
    readonly workflowId: string;
    readonly runId: string;
    readonly customerId: string;
    readonly status: 'Completed' | 'Failed' | 'Cancelled';
    /** A book refresh's outcome by kind. */
    readonly counts?: BookCounts | undefined;
    readonly loginId?: string | undefined;
    readonly failure?: ConnectionFailureInfo | undefined;
    /** The result itself (tenant opted in, and asked for it). */
    readonly result?: ConnectionResult | undefined;
    /** Where to fetch the result once (a completed connection whose result is not in the body). */
    readonly resultRef?: ResultReference | undefined;
  };
}

/** What the delivery workflow starts with (from the connection's end). */
export interface CallbackDeliveryInput {
  readonly customerId: string;
  readonly url: string;
  readonly webhookId: string;
  /** The event without its result reference (the delivery mints the reference's token). */
  readonly event: CallbackEvent;
  /** Whether the result is sent by reference (a completed connection without includeResult). */
  readonly resultByReference: boolean;
}

export const CALLBACK_DELIVERY_STATUSES = ['Delivering', 'Retrying', 'Delivered', 'GivenUp'] as const;
export type CallbackDeliveryStatus = (typeof CALLBACK_DELIVERY_STATUSES)[number];

export interface CallbackDeliveryState {
  readonly webhookId: string;
  readonly eventType: CallbackEventType;
  /** The receiver's URL, without its query (which may carry the receiver's own secret). */
  readonly url: string;
  readonly status: CallbackDeliveryStatus;
  readonly attempts: number;
  readonly firstAttemptAt?: string | undefined;
  readonly lastAttemptAt?: string | undefined;
  /** Why the last attempt failed (the receiver's status, a network error, a refusal). */
  readonly lastError?: string | undefined;
  readonly nextAttemptAt?: string | undefined;
  readonly deliveredAt?: string | undefined;
  readonly givenUpAt?: string | undefined;
  /** The result's one-time claim: none (in the body, or nothing to fetch), waiting, claimed or expired. */
  readonly resultClaim: 'none' | 'waiting' | 'claimed' | 'expired';
}

/** One attempt's outcome, as the delivery activity reports it. */
export interface CallbackAttemptOutcome {
  readonly delivered: boolean;
  /** The receiver's HTTP status, when it answered. */
  readonly statusCode?: number | undefined;
  readonly error?: string | undefined;
  /** A failure no retry can fix (the URL no longer allowed, the tenant has no secret): give up now. */
  readonly permanent?: boolean | undefined;
}

export interface ResultClaim {
  /** The token of the event's resultRef. */
  readonly token: string;
}

/** Which connection run the claimed result is: the pipeline entry reads it with the product's keys. */
export interface ClaimedResult {
  readonly workflowId: string;
  readonly runId: string;
}

export const callbackDeliveryStateQuery = defineQuery<CallbackDeliveryState>('callbackDeliveryState');
/** Claims the result once: refused (before history) for a wrong token, a second claim, or after expiry. */
export const claimResultUpdate = defineUpdate<ClaimedResult, [ResultClaim]>('claimResult');
