/**
 * The retention timer's public surface: one workflow per login of a tenant with a retention policy,
 * started (or pushed back) by a signal-with-start after every successful retrieval, that forgets the
 * login `days` after the last one.
 */
import { defineQuery, defineSignal } from '@temporalio/workflow';

export const RETENTION_WORKFLOW_TYPE = 'loginRetentionWorkflow';

/** Bounds of a policy's days (also checked where RETENTION_DAYS is parsed). */
export const RETENTION_DAYS_LIMITS = { min: 1, max: 36_500 } as const;

export interface RetentionInput {
  readonly customerId: string;
  readonly loginId: string;
  /** Carried over by continue-as-new; a fresh timer learns both from its first notice. */
  readonly days?: number | undefined;
  readonly lastRetrievalAt?: string | undefined;
}

/** Sent after each successful retrieval of the login (by the connection's last activity). */
export interface RetrievalNotice {
  /** When the data was retrieved (ISO 8601). An older notice than the last one changes nothing. */
  readonly at: string;
  /** The tenant's policy when the notice was sent (the latest one wins); null: the policy is off, the timer ends. */
  readonly days: number | null;
  readonly workflowId?: string | undefined;
}

export interface RetentionState {
  readonly customerId: string;
  readonly loginId: string;
  readonly status: 'waiting' | 'forgetting';
  readonly days?: number | undefined;
  readonly lastRetrievalAt?: string | undefined;
  /** lastRetrievalAt + days. */
  readonly forgetAt?: string | undefined;
  readonly notices: number;
}

/** How a retention timer ended: it fired and handed the login to a forget workflow, or the policy was turned off. */
export type RetentionOutcome = RetentionFired | RetentionTurnedOff;

export interface RetentionTurnedOff {
  readonly outcome: 'policy-off';
  readonly customerId: string;
  readonly loginId: string;
  readonly lastRetrievalAt?: string | undefined;
}

/** The forget workflow runs on its own (its record is its result). */
export interface RetentionFired {
  readonly outcome: 'forget-started';
  readonly customerId: string;
  readonly loginId: string;
  readonly days: number;
  readonly lastRetrievalAt: string;
  readonly forgetAt: string;
  readonly forgetWorkflowId: string;
  /** When the forget workflow was started (workflow time). */
  readonly forgetStartedAt: string;
  /** A forget of this login was already running (asked by the pipeline): it does the work. */
  readonly alreadyForgetting: boolean;
}

export const retrievalNoticeSignal = defineSignal<[RetrievalNotice]>('retrievalNotice');
export const retentionStateQuery = defineQuery<RetentionState>('retentionState');
