/**
 * The forget workflow's public surface: its name, input, progress query and the record it leaves.
 * The pipeline client, the activities and the workflow import this one file.
 */
import { defineQuery } from '@temporalio/workflow';

export const FORGET_WORKFLOW_TYPE = 'forgetLoginWorkflow';

/** Who asked: the pipeline (client `forget`) or the tenant's retention policy. */
export type ForgetTrigger = 'request' | 'retention';

export interface ForgetTiming {
  /** Wait between two DeleteCard calls answered CARD_IN_USE (a durable timer). Default 30 s. */
  readonly cardInUseRetryMs?: number | undefined;
  /** Give up when the card is still in use after this long. Default 2 h (a data operation is capped at 30 min). */
  readonly cardInUseTimeoutMs?: number | undefined;
}

export const DEFAULT_FORGET_TIMING = { cardInUseRetryMs: 30_000, cardInUseTimeoutMs: 2 * 60 * 60_000 } as const;

export interface ForgetInput {
  readonly customerId: string;
  readonly loginId: string;
  readonly trigger: ForgetTrigger;
  readonly timing?: ForgetTiming | undefined;
}

export type ForgetStep = 'schedule' | 'book' | 'retention' | 'card' | 'workflows' | 'done';

export interface ForgetState {
  readonly customerId: string;
  readonly loginId: string;
  readonly step: ForgetStep;
  /** DeleteCard calls answered CARD_IN_USE so far, each followed by a durable wait. */
  readonly cardInUseWaits: number;
  readonly startedAt: string;
}

/** What happened to the payloads of the login's connections in the external payload store. */
export type PayloadsForgotten = { readonly store: 'off' } | { readonly store: string; readonly deleted: number };

/** What one forget deleted, and when: the workflow's result, found by `LoginId = "..."`. */
export interface ForgetRecord {
  readonly customerId: string;
  readonly loginId: string;
  readonly trigger: ForgetTrigger;
  /** The login's refresh schedule: deleted now, or there was none. */
  readonly schedule: 'deleted' | 'none';
  /** The login's place in its tenant's book: taken out now, or it had none (absent: a forget from before books). */
  readonly book?: 'removed' | 'none' | undefined;
  /** The login's retention timer: cancelled (a forget on request), none running, or the one that asked. */
  readonly retentionTimer: 'cancelled' | 'none' | 'fired';
  /** DeleteCard: the service deleted the saved login now, or it did not know it (already deleted). */
  readonly card: 'deleted' | 'not-found';
  readonly cardInUseWaits: number;
  /** The login's connection workflows whose histories and stored payloads were deleted. */
  readonly connections: { readonly count: number; readonly workflowIds: readonly string[] };
  readonly payloads: PayloadsForgotten;
  readonly startedAt: string;
  readonly completedAt: string;
}

/** Most workflow ids a record lists by name (the count is always whole). */
export const FORGET_RECORD_MAX_IDS = 100;

export const forgetStateQuery = defineQuery<ForgetState>('forgetState');
