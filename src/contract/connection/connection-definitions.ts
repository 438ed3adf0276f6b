/**
 * The connection workflow's public surface: its name, messages (signal, updates, query), state,
 * result and failure types. The pipeline client, the operator tools and the workflow all import
 * this one file, so they cannot disagree on a name or a shape.
 */
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { AttributesResponse, AccountsDetailResponse, InvestmentsResponse, SecurityChallenge, SecurityResponses } from '../../aggregator/schemas.js';
import type { DataWarning } from '../../aggregator/data-reader.js';
import type { ConnectionInput, PollStrategy } from './connection-input.js';
import type { ConnectionFailureType } from '../../aggregator/failure-table.js';

export { CONNECTION_FAILURE_TYPES, type ConnectionFailureType } from '../../aggregator/failure-table.js';

export const CONNECTION_WORKFLOW_TYPE = 'connectionWorkflow';

export const CONNECTION_STATUSES = ['Authorizing', 'AwaitingAnswer', 'Retrieving', 'Completed', 'Failed', 'Cancelled'] as const;
export type ConnectionStatus = (typeof CONNECTION_STATUSES)[number];
/** The statuses of a running connection: Completed, Failed and Cancelled close it. A connection terminated or timed out keeps its last one, so a query for these also asks ExecutionStatus = "Running". */
export const RUNNING_CONNECTION_STATUSES = ['Authorizing', 'AwaitingAnswer', 'Retrieving'] as const satisfies readonly ConnectionStatus[];

/** Challenges the service returned in one 203 answer, all answered together. */
export interface ChallengeSet {
  /** Changes whenever a new set is presented (also after the service rejects an answer). */
  readonly id: string;
  readonly challenges: SecurityChallenge[];
  readonly presentedAt: string;
  /** 1 for the first answer to this set; counts service rejections. */
  readonly attempt: number;
  /** When the connection gives up waiting for an answer. */
  readonly answerBy: string;
}

export interface ChallengeAnswer {
  /** The ChallengeSet.id being answered: a stale answer is refused. */
  readonly challengeSetId: string;
  /** Prompt text (exactly as asked; for TextOrCall, the chosen option) → answers. */
  readonly responses: SecurityResponses;
  /**
   * The message this answer was sealed for (`submitAnswer` or `answerChallenge`), set by this
   * product's clients: the seal binds it to its workflow, this binds it to its message, so a signal's
   * payload copied into an update (or back) is refused by name. Absent: any (older clients, tools).
   */
  readonly sentAs?: 'submitAnswer' | 'answerChallenge' | undefined;
}

export interface PendingOperation {
  /** e.g. "accounts detail", "investments", "attributes GetLendingAttributes". */
  readonly operation: string;
  readonly code: string;
  readonly pollCount: number;
  readonly since: string;
  readonly deadline: string;
  readonly nextPollAt?: string | undefined;
  /**
   * How the operation is polled (absent: `timer`). With `activity-retry` or `heartbeat` the workflow
   * does not see each poll: pollCount stays 0 until the activity returns; the Web UI's pending
   * activity shows its attempt (retry) or heartbeat details (heartbeat).
   */
  readonly strategy?: PollStrategy | undefined;
}

export interface Rejection {
  /** "validator": refused before anything was recorded or sent; "service": the service said no. */
  readonly source: 'validator' | 'service';
  readonly message: string;
  readonly challengeSetId?: string | undefined;
  readonly serviceCode?: string | undefined;
  readonly at: string;
}

/**
 * Why the connection opened a new session: an Authorize whose outcome is unknown (the worker died
 * while it was at the service, or the reply was lost) is never sent again; a new session is opened
 * and its challenges presented instead.
 */
export interface SessionRestart {
  readonly reason: string;
  /** The challenge set whose answer was in flight, if any. */
  readonly challengeSetId?: string | undefined;
  readonly at: string;
}

export interface ConnectionFailureInfo {
  readonly type: ConnectionFailureType;
  readonly message: string;
  readonly serviceCode?: string | undefined;
}

export type ProductName = 'accountsDetail' | 'investments' | 'attributes';

export interface ConnectionPriority {
  /** 1 (first) to 5 (last); absent: Temporal's default, 3. */
  readonly key?: number | undefined;
  readonly fairnessKey?: string | undefined;
  readonly fairnessWeight?: number | undefined;
}

export interface ConnectionState {
  readonly status: ConnectionStatus;
  readonly mode: ConnectionInput['session']['kind'];
  readonly customerId: string;
  readonly institution?: string | undefined;
  readonly loginId?: string | undefined;
  readonly requestId?: string | undefined;
  readonly challengeSet?: ChallengeSet | undefined;
  readonly pending?: PendingOperation | undefined;
  /** Polls made so far, over all pending operations of this connection. */
  readonly totalPolls: number;
  readonly lastRejection?: Rejection | undefined;
  /** New sessions opened because an Authorize's outcome was unknown; the last one's reason. */
  readonly sessionRestarts: number;
  readonly lastRestart?: SessionRestart | undefined;
  readonly retrieved: ProductName[];
  /**
   * The challenge type showing that this login needs its end user to authenticate (two-step or
   * trusted device, or any challenge met unattended); mirrored in the EndUserChallenge search attribute.
   */
  readonly endUserChallenge?: string | undefined;
  readonly failure?: ConnectionFailureInfo | undefined;
  /**
   * The Task Queue priority it started with, which its activities inherit: key 1 is served first
   * (an end user answering), the fairness key is the tenant and its weight the tenant's share.
   */
  readonly priority?: ConnectionPriority | undefined;
  /** Its completion callback, once it ended with one: the delivery's workflow and the event's webhook-id. */
  readonly callback?: { readonly deliveryWorkflowId: string; readonly webhookId: string } | undefined;
  /**
   * An unattended connection started outside a book waits for room at its tenant's admission
   * (src/workflows/admission/connection-admission.ts): when it asked, and when room was granted (absent while it waits).
   */
  readonly admission?: { readonly queuedAt: string; readonly admittedAt?: string | undefined } | undefined;
  readonly startedAt: string;
  readonly updatedAt: string;
}

export type AnswerOutcome =
  /** The service accepted the answer; the connection moved on (maybe to another challenge set). */
  | { readonly outcome: 'accepted'; readonly status: ConnectionStatus; readonly nextChallengeSet?: ChallengeSet | undefined }
  /** The service refused the answer; the same challenges are presented again under a new id. */
  | { readonly outcome: 'rejected'; readonly message: string; readonly serviceCode?: string | undefined; readonly nextChallengeSet?: ChallengeSet | undefined }
  /**
   * Whether the service took the answer is unknown (the worker died while it was at the service): it
   * was not sent again; a new session was opened and its first challenge set (or the open session's
   * status) is here. The end user may be asked again.
   */
  | { readonly outcome: 'restarted'; readonly reason: string; readonly status: ConnectionStatus; readonly nextChallengeSet?: ChallengeSet | undefined }
  /** The connection ended while the answer was in flight. */
  | { readonly outcome: 'ended'; readonly status: ConnectionStatus; readonly failure?: ConnectionFailureInfo | undefined };

/** What update-with-start answers: the first point where the caller has something to do or see. */
export type FirstStep =
  | { readonly step: 'challenge'; readonly challengeSet: ChallengeSet }
  | { readonly step: 'session-open'; readonly loginId: string; readonly requestId: string }
  | { readonly step: 'ended'; readonly status: ConnectionStatus; readonly failure?: ConnectionFailureInfo | undefined };

export interface ConnectionResult {
  readonly customerId: string;
  readonly loginId: string;
  readonly requestId: string;
  readonly institution?: string | undefined;
  readonly accountsDetail?: AccountsDetailResponse | undefined;
  readonly investments?: InvestmentsResponse | undefined;
  readonly attributes?: AttributesResponse | undefined;
  readonly totalPolls: number;
  /**
   * Fields of the products' data that their typed views could not read: each record named here is
   * kept exactly as the service sent it (so its fields may not have the types shown). Absent when none.
   */
  readonly warnings?: readonly DataWarning[] | undefined;
}

/** For `temporal workflow signal` and simple callers: no answer comes back; bad answers land in lastRejection. */
export const answerChallengeSignal = defineSignal<[ChallengeAnswer]>('answerChallenge');
/** For our client and console: validated before it touches history; answers with the service's verdict. */
export const submitAnswerUpdate = defineUpdate<AnswerOutcome, [ChallengeAnswer]>('submitAnswer');
/** For update-with-start: waits for the first challenge set or an open session. */
export const awaitFirstStepUpdate = defineUpdate<FirstStep, []>('awaitFirstStep');
export const connectionStateQuery = defineQuery<ConnectionState>('connectionState');
