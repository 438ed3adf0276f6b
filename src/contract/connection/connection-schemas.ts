/**
 * zod schemas of what a connection answers: its state (the `connectionState` query), its result
 * (what connectionWorkflow returns), its first step (the `awaitFirstStep` update) and an answer's
 * outcome (the `submitAnswer` update). The workflow keeps the plain interfaces of
 * connection-definitions.ts (its bundle stays free of zod); these schemas are for readers outside it
 * (tests, the Python models of scripts/generate-python-models.ts). The checks at the end fail the
 * typecheck when an interface and its schema stop describing the same shape.
 */
import { z } from 'zod';
import { AccountsDetailResponse, AttributesResult, InvestmentsResponse, SecurityChallenge } from '../../aggregator/schemas.js';
import { CONNECTION_FAILURE_TYPES } from '../../aggregator/failure-table.js';
import { POLL_STRATEGIES } from './connection-input.js';
import {
  CONNECTION_STATUSES,
  type AnswerOutcome,
  type ChallengeSet,
  type ConnectionFailureInfo,
  type ConnectionPriority,
  type ConnectionResult,
  type ConnectionState,
  type FirstStep,
  type PendingOperation,
  type Rejection,
  type SessionRestart,
} from './connection-definitions.js';

const ConnectionStatusSchema = z.enum(CONNECTION_STATUSES);

export const ChallengeSetSchema = z.object({
  id: z.string(),
  challenges: z.array(SecurityChallenge),
  presentedAt: z.string(),
  attempt: z.number().int(),
  answerBy: z.string(),
});

export const PendingOperationSchema = z.object({
  operation: z.string(),
  code: z.string(),
  pollCount: z.number().int(),
  since: z.string(),
  deadline: z.string(),
  nextPollAt: z.string().optional(),
  strategy: z.enum(POLL_STRATEGIES).optional(),
});

export const RejectionSchema = z.object({
  source: z.enum(['validator', 'service']),
  message: z.string(),
  challengeSetId: z.string().optional(),
  serviceCode: z.string().optional(),
  at: z.string(),
});

export const SessionRestartSchema = z.object({ reason: z.string(), challengeSetId: z.string().optional(), at: z.string() });

export const ConnectionFailureInfoSchema = z.object({ type: z.enum(CONNECTION_FAILURE_TYPES), message: z.string(), serviceCode: z.string().optional() });

export const ConnectionPrioritySchema = z.object({
  key: z.number().int().optional(),
  fairnessKey: z.string().optional(),
  fairnessWeight: z.number().optional(),
});

export const ConnectionStateSchema = z.object({
  status: ConnectionStatusSchema,
  mode: z.enum(['live', 'cached', 'refresh']),
  customerId: z.string(),
  institution: z.string().optional(),
  loginId: z.string().optional(),
  requestId: z.string().optional(),
  challengeSet: ChallengeSetSchema.optional(),
  pending: PendingOperationSchema.optional(),
  totalPolls: z.number().int(),
  lastRejection: RejectionSchema.optional(),
  sessionRestarts: z.number().int(),
  lastRestart: SessionRestartSchema.optional(),
  retrieved: z.array(z.enum(['accountsDetail', 'investments', 'attributes'])),
  endUserChallenge: z.string().optional(),
  failure: ConnectionFailureInfoSchema.optional(),
  priority: ConnectionPrioritySchema.optional(),
  callback: z.object({ deliveryWorkflowId: z.string(), webhookId: z.string() }).optional(),
  admission: z.object({ queuedAt: z.string(), admittedAt: z.string().optional() }).optional(),
  startedAt: z.string(),
  updatedAt: z.string(),
});

export const DataWarningSchema = z.object({ operation: z.string(), path: z.string(), problem: z.string() });

export const ConnectionResultSchema = z.object({
  customerId: z.string(),
  loginId: z.string(),
  requestId: z.string(),
  institution: z.string().optional(),
  accountsDetail: AccountsDetailResponse.optional(),
  investments: InvestmentsResponse.optional(),
  // The parsed answer (its groups apart), as the activity returns it, not the service's raw body.
  attributes: AttributesResult.optional(),
  totalPolls: z.number().int(),
  warnings: z.array(DataWarningSchema).readonly().optional(),
});

export const AnswerOutcomeSchema = z.discriminatedUnion('outcome', [
  z.object({ outcome: z.literal('accepted'), status: ConnectionStatusSchema, nextChallengeSet: ChallengeSetSchema.optional() }),
  z.object({ outcome: z.literal('rejected'), message: z.string(), serviceCode: z.string().optional(), nextChallengeSet: ChallengeSetSchema.optional() }),
  z.object({ outcome: z.literal('restarted'), reason: z.string(), status: ConnectionStatusSchema, nextChallengeSet: ChallengeSetSchema.optional() }),
  z.object({ outcome: z.literal('ended'), status: ConnectionStatusSchema, failure: ConnectionFailureInfoSchema.optional() }),
]);

export const FirstStepSchema = z.discriminatedUnion('step', [
  z.object({ step: z.literal('challenge'), challengeSet: ChallengeSetSchema }),
  z.object({ step: z.literal('session-open'), loginId: z.string(), requestId: z.string() }),
  z.object({ step: z.literal('ended'), status: ConnectionStatusSchema, failure: ConnectionFailureInfoSchema.optional() }),
]);

/**
 * true when A and B are assignable both ways and name the same keys (an optional field on one side
 * only would pass assignability); anything else makes the `true` below a type error.
 */
type Assignable<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Same<A, B> = Assignable<A, B> extends true ? Assignable<keyof A, keyof B> : false;
const _challengeSet: Same<ChallengeSet, z.infer<typeof ChallengeSetSchema>> = true;
const _pending: Same<PendingOperation, z.infer<typeof PendingOperationSchema>> = true;
const _rejection: Same<Rejection, z.infer<typeof RejectionSchema>> = true;
const _restart: Same<SessionRestart, z.infer<typeof SessionRestartSchema>> = true;
const _failure: Same<ConnectionFailureInfo, z.infer<typeof ConnectionFailureInfoSchema>> = true;
const _priority: Same<ConnectionPriority, z.infer<typeof ConnectionPrioritySchema>> = true;
const _state: Same<ConnectionState, z.infer<typeof ConnectionStateSchema>> = true;
const _result: Same<ConnectionResult, z.infer<typeof ConnectionResultSchema>> = true;
const _outcome: Same<AnswerOutcome, z.infer<typeof AnswerOutcomeSchema>> = true;
const _firstStep: Same<FirstStep, z.infer<typeof FirstStepSchema>> = true;
