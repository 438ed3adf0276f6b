/**
 * The connection workflow: one connection to the aggregation service, from opening a session
 * through multi-factor challenges to the requested data. Deterministic code only.
 *
 * Status: Authorizing → AwaitingAnswer ⇄ Authorizing → Retrieving → Completed | Failed | Cancelled.
 */
import {
  ApplicationFailure,
  CancellationScope,
  allHandlersFinished,
  condition,
  isCancellation,
  log,
  proxyActivities,
  proxyLocalActivities,
  setCurrentDetails,
  setHandler,
  upsertMemo,
  upsertSearchAttributes,
  type ActivityOptions,
  type LocalActivityOptions,
} from '@temporalio/workflow';
import type { SearchAttributeUpdatePair } from '@temporalio/common';
import type { AuthorizeOutcome, ConnectionActivities, DataOutcome } from '../activities/connection-activities.js';
import type { ServiceFailureDetails } from '../activities/failures.js';
import type { InputActivities } from '../activities/input-activities.js';
import type { AccountsDetailOptions, SecurityChallenge } from '../aggregator/schemas.js';
import { checkAnswer, describeProblems } from './challenges.js';
import type { ConnectionInput, ConnectionInputArgs } from './connection-input.js';
import {
  answerChallengeSignal,
  awaitFirstStepUpdate,
  connectionStateQuery,
  submitAnswerUpdate,
  type AnswerOutcome,
  type ChallengeAnswer,
  type ChallengeSet,
  type ConnectionFailureInfo,
  type ConnectionFailureType,
  type ConnectionResult,
  type ConnectionState,
  type ConnectionStatus,
  type FirstStep,
  type ProductName,
} from './definitions.js';
import { activityFailureType, applicationFailureOf, serviceDetailsOf, timeoutFailureOf } from './failures.js';
import { pollUntilReady } from './polling.js';
import { ConnectionStatusKey, CustomerIdKey, InstitutionKey, LoginIdKey } from './search-attributes.js';

/** Transient upstream errors (rate limits, 5xx, resets) back off; the table decides what is transient. */
const TRANSIENT_RETRY = { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s' } as const;

/** Authorize calls: visible activities in the Web UI, a few attempts for transient errors. */
const AUTHORIZE_OPTIONS: ActivityOptions = {
  startToCloseTimeout: '90s',
  retry: { ...TRANSIENT_RETRY, maximumAttempts: 5 },
};

/**
 * Data requests and polls are local activities: a poll is one short HTTP call, and recording it as a
 * marker keeps a poll to ~6 history events instead of ~11. Their retries are bounded by the
 * pending operation's deadline.
 */
function localOptions(summary: string, deadline: number): LocalActivityOptions {
  return {
    startToCloseTimeout: '90s',
    scheduleToCloseTimeout: Math.max(1_000, deadline - Date.now()),
    retry: TRANSIENT_RETRY,
    summary,
  };
}

/** Activity failure type (from the service code) → the connection's failure type. */
const FAILURE_BY_ACTIVITY_TYPE: Record<string, ConnectionFailureType> = {
  InvalidUsername: 'InvalidCredentials',
  InvalidPassword: 'InvalidCredentials',
  InvalidLogin: 'InvalidCredentials',
  InvalidSecurityResponse: 'InvalidSecurityResponse',
  Unauthorized: 'EndUserActionRequired',
  NewAccount: 'EndUserActionRequired',
  DisabledLogin: 'EndUserActionRequired',
  QuestionNotFound: 'EndUserActionRequired',
  DisabledInstitution: 'InstitutionUnavailable',
  RetryLater: 'InstitutionUnavailable',
  SessionExpired: 'SessionExpired',
  SessionNonexistent: 'SessionExpired',
  TooManyRequests: 'ServiceUnavailable',
  AggregationError: 'ServiceUnavailable',
  ServiceUnreachable: 'ServiceUnavailable',
  MalformedServiceAnswer: 'ServiceUnavailable',
  CardInUse: 'ServiceUnavailable',
  PollingTimedOut: 'PollingTimedOut',
  SessionLoading: 'PollingTimedOut',
  InvalidConnectionInput: 'InvalidConnectionInput',
};

/** Failures the workflow raises itself, passed through as they are. */
const OWN_FAILURE_TYPES = new Set<string>(['ChallengeAbandoned', 'UnexpectedServiceAnswer', 'InvalidConnectionInput', 'PollingTimedOut']);

interface QueuedAnswer {
  readonly seq: number;
  readonly answer: ChallengeAnswer;
  /** Only updates wait for an outcome; signals are fire-and-forget. */
  readonly awaited: boolean;
}

type SessionOpen = Extract<AuthorizeOutcome, { kind: 'session-open' }>;
type ChallengeOutcome = Extract<AuthorizeOutcome, { kind: 'challenge' }>;

/** Input validation runs outside the workflow sandbox (see input-activities.ts); it never retries. */
const { validateConnectionInput } = proxyLocalActivities<InputActivities>({ startToCloseTimeout: '10s', retry: { maximumAttempts: 1 }, summary: 'validate input' });

export async function connectionWorkflow(args: ConnectionInputArgs): Promise<ConnectionResult> {
  const now = () => new Date().toISOString();
  // Every handler is registered before the first await (an update, such as update-with-start's,
  // is refused if its handler does not exist in the activation that delivers it), so the state
  // starts from the raw input and takes the validated values once validation has run.
  let customerId = typeof args?.customerId === 'string' ? args.customerId : '';
  let session: ConnectionInput['session'];
  let products: ConnectionInput['products'];
  let timing: ConnectionInput['timing'];

  let state: ConnectionState = {
    status: 'Authorizing',
    mode: args?.session?.kind === 'cached' || args?.session?.kind === 'refresh' ? args.session.kind : 'live',
    customerId,
    totalPolls: 0,
    retrieved: [],
    startedAt: now(),
    updatedAt: now(),
  };
  let challengeSetCounter = 0;
  let answerSeq = 0;
  let queued: QueuedAnswer | undefined;
  let inFlight: QueuedAnswer | undefined;
  const outcomes = new Map<number, AnswerOutcome>();
  let firstStep: FirstStep | undefined;

  // ----- state, search attributes and what the Web UI shows -----------------------------------

  function patch(changes: Partial<ConnectionState>): void {
    const previous = state;
    state = { ...state, ...changes, updatedAt: now() };
    const searchAttributes: SearchAttributeUpdatePair[] = [];
    if (state.status !== previous.status) searchAttributes.push({ key: ConnectionStatusKey, value: state.status });
    if (state.loginId !== previous.loginId && state.loginId) searchAttributes.push({ key: LoginIdKey, value: state.loginId });
    if (state.institution !== previous.institution && state.institution) searchAttributes.push({ key: InstitutionKey, value: state.institution });
    if (searchAttributes.length) upsertSearchAttributes(searchAttributes);
    if (state.status !== previous.status) upsertMemo({ status: state.status, challengeSetId: state.challengeSet?.id ?? null });
    setCurrentDetails(describeForHumans(state));
  }

  /** Takes the validated input: state and search attributes say who and what this connection is. */
  function adopt(input: ConnectionInput): void {
    ({ customerId, session, products, timing } = input);
    patch({
      mode: session.kind,
      customerId,
      institution: session.kind === 'live' ? session.institution : undefined,
      loginId: session.kind === 'live' ? undefined : session.loginId,
    });
    // patch() upserted Institution and LoginId; status and customer are set here for starts that
    // did not set them (e.g. `temporal workflow start`).
    upsertSearchAttributes([
      { key: ConnectionStatusKey, value: state.status },
      { key: CustomerIdKey, value: customerId },
    ]);
  }

  // ----- messages --------------------------------------------------------------------------------

  /** Why an answer cannot be taken now, or undefined; shared by the update validator and the signal. */
  function answerProblem(answer: unknown): string | undefined {
    if (!isChallengeAnswer(answer)) return 'an answer is { challengeSetId: string, responses: { [prompt]: string[] } }';
    const set = state.challengeSet;
    if (state.status !== 'AwaitingAnswer' || !set) return `no challenge is awaiting an answer (status ${state.status})`;
    if (answer.challengeSetId !== set.id) return `challenge set ${answer.challengeSetId} is not the current one (current: ${set.id})`;
    if (queued || inFlight) return `an answer to challenge set ${set.id} is already being processed`;
    const problems = checkAnswer(set.challenges, answer.responses);
    return problems.length ? describeProblems(problems) : undefined;
  }

  function enqueue(answer: ChallengeAnswer, awaited: boolean): number {
    answerSeq += 1;
    queued = { seq: answerSeq, answer, awaited };
    return answerSeq;
  }

  function settle(answer: QueuedAnswer, outcome: AnswerOutcome): void {
    if (answer.awaited) outcomes.set(answer.seq, outcome);
  }

  setHandler(connectionStateQuery, () => state);

  setHandler(answerChallengeSignal, (answer) => {
    const problem = answerProblem(answer);
    if (problem) {
      // A signal cannot be refused to its sender: the rejection is kept for the query and the log.
      log.warn('answer signal refused', { problem: problem.slice(0, 200) });
      patch({ lastRejection: { source: 'validator', message: problem, challengeSetId: state.challengeSet?.id, at: now() } });
      return;
    }
    enqueue(answer, false);
  });

  setHandler(
    submitAnswerUpdate,
    async (answer) => {
      const seq = enqueue(answer, true);
      await condition(() => outcomes.has(seq));
      const outcome = outcomes.get(seq) as AnswerOutcome;
      outcomes.delete(seq);
      return outcome;
    },
    {
      validator: (answer) => {
        const problem = answerProblem(answer);
        if (problem) throw new Error(problem);
      },
      description: 'Answer the current challenge set; refused before it is recorded if the answer does not fit the challenges.',
    },
  );

  setHandler(
    awaitFirstStepUpdate,
    async () => {
      await condition(() => firstStep !== undefined);
      return firstStep as FirstStep;
    },
    { description: 'Wait for the first challenge set or an open session (for update-with-start).' },
  );

  // ----- steps -----------------------------------------------------------------------------------

  function authorizeActivity(summary: string) {
    return proxyActivities<ConnectionActivities>({ ...AUTHORIZE_OPTIONS, summary });
  }

  function present(challenge: ChallengeOutcome, attempt: number): ChallengeSet {
    challengeSetCounter += 1;
    const presentedAt = Date.now();
    const set: ChallengeSet = {
      id: String(challengeSetCounter),
      challenges: challenge.challenges,
      presentedAt: new Date(presentedAt).toISOString(),
      attempt,
      answerBy: new Date(presentedAt + timing.answerTimeoutMs).toISOString(),
    };
    patch({ status: 'AwaitingAnswer', challengeSet: set, requestId: challenge.requestId });
    firstStep ??= { step: 'challenge', challengeSet: set };
    log.info('challenge set presented', { challengeSetId: set.id, types: set.challenges.map((c: SecurityChallenge) => c.Type), attempt });
    return set;
  }

  /** Waits for answers to one 203 (and any that follow) until the service opens the session. */
  async function answerChallenges(first: ChallengeOutcome): Promise<AuthorizeOutcome> {
    let challenge = first;
    let attempt = 1;
    let set = present(challenge, attempt);
    for (;;) {
      const answered = await condition(() => queued !== undefined, Math.max(0, Date.parse(set.answerBy) - Date.now()), {
        summary: `wait for an answer to challenge set ${set.id}`,
      });
      if (!answered) {
        throw connectionFailure('ChallengeAbandoned', `no answer to challenge set ${set.id} within ${Math.round(timing.answerTimeoutMs / 1000)} s`);
      }
      const answering = queued as QueuedAnswer;
      inFlight = answering;
      queued = undefined;
      patch({ status: 'Authorizing' });
      try {
        const next = await authorizeActivity(`answer challenge set ${set.id}`).answerChallenge({
          customerId,
          requestId: challenge.requestId,
          responses: answering.answer.responses,
        });
        inFlight = undefined;
        if (next.kind !== 'challenge') {
          settle(answering, { outcome: 'accepted', status: next.kind === 'session-open' ? 'Retrieving' : state.status });
          return next;
        }
        challenge = next;
        attempt = 1;
        set = present(challenge, attempt);
        settle(answering, { outcome: 'accepted', status: 'AwaitingAnswer', nextChallengeSet: set });
      } catch (error) {
        const details = serviceDetailsOf(error);
        if (activityFailureType(error) !== 'InvalidSecurityResponse' || attempt >= timing.maxAnswerAttempts) throw error;
        inFlight = undefined;
        const message = `the service refused the answer to challenge set ${set.id} (attempt ${attempt} of ${timing.maxAnswerAttempts})`;
        patch({ lastRejection: { source: 'service', message, challengeSetId: set.id, serviceCode: details?.serviceCode, at: now() } });
        attempt += 1;
        set = present(challenge, attempt);
        settle(answering, { outcome: 'rejected', message, serviceCode: details?.serviceCode, nextChallengeSet: set });
      }
    }
  }

  async function openSession(): Promise<SessionOpen> {
    let outcome = await authorizeActivity(`authorize (${session.kind})`).openSession({ customerId, session });
    for (;;) {
      if (outcome.kind === 'session-open') return outcome;
      if (outcome.kind === 'pending') throw connectionFailure('UnexpectedServiceAnswer', `Authorize answered ${outcome.code}; a session cannot be polled`);
      outcome = await answerChallenges(outcome);
    }
  }

  function pollObserver(operation: string) {
    return {
      pending: (progress: { code: string; pollCount: number; since: number; deadline: number; nextPollAt: number }) =>
        patch({
          pending: {
            operation,
            code: progress.code,
            pollCount: progress.pollCount,
            since: new Date(progress.since).toISOString(),
            deadline: new Date(progress.deadline).toISOString(),
            nextPollAt: new Date(progress.nextPollAt).toISOString(),
          },
        }),
      polled: () => {
        state = { ...state, totalPolls: state.totalPolls + 1, pending: state.pending && { ...state.pending, pollCount: state.pending.pollCount + 1, nextPollAt: undefined } };
      },
    };
  }

  function markRetrieved(product: ProductName): void {
    patch({ pending: undefined, retrieved: [...state.retrieved, product] });
  }

  function retrieveAccountsDetail(requestId: string, options: AccountsDetailOptions) {
    const operation = 'accounts detail';
    return pollUntilReady(
      operation,
      ({ deadline }) => proxyLocalActivities<ConnectionActivities>(localOptions('request accounts detail', deadline)).requestAccountsDetail({ customerId, requestId, options }),
      ({ pollNumber, deadline }) => proxyLocalActivities<ConnectionActivities>(localOptions(`poll accounts detail #${pollNumber}`, deadline)).pollAccountsDetail({ customerId, requestId }),
      timing,
      pollObserver(operation),
    );
  }

  /** Investments and attributes: the same request, repeated while it answers 202. */
  function retrieveByRepeating<T>(operation: string, request: (deadline: number, summary: string) => Promise<DataOutcome<T>>) {
    return pollUntilReady(
      operation,
      ({ deadline }) => request(deadline, `request ${operation}`),
      ({ pollNumber, deadline }) => request(deadline, `poll ${operation} #${pollNumber}`),
      timing,
      pollObserver(operation),
    );
  }

  async function retrieve(open: SessionOpen): Promise<ConnectionResult> {
    const loginId = open.login.Id;
    patch({ status: 'Retrieving', loginId, requestId: open.requestId, institution: state.institution ?? open.institution, challengeSet: undefined });
    firstStep ??= { step: 'session-open', loginId, requestId: open.requestId };
    let result: ConnectionResult = { customerId, loginId, requestId: open.requestId, institution: state.institution, totalPolls: 0 };

    if (products.accountsDetail) {
      result = { ...result, accountsDetail: await retrieveAccountsDetail(open.requestId, products.accountsDetail) };
      markRetrieved('accountsDetail');
    }
    if (products.investments) {
      const investments = await retrieveByRepeating('investments', (deadline, summary) =>
        proxyLocalActivities<ConnectionActivities>(localOptions(summary, deadline)).requestInvestments({ customerId, loginId, requestId: open.requestId }),
      );
      result = { ...result, investments };
      markRetrieved('investments');
    }
    if (products.attributes) {
      const attributesProduct = products.attributes;
      // Spec: attributes need a RequestId from a cached Authorize, and accounts detail retrieved for it.
      let requestId = open.requestId;
      if (session.kind !== 'cached') {
        const cached = await authorizeActivity('authorize (cached, for attributes)').openSession({ customerId, session: { kind: 'cached', loginId } });
        if (cached.kind !== 'session-open') throw connectionFailure('UnexpectedServiceAnswer', `cached Authorize answered ${cached.kind}`);
        requestId = cached.requestId;
        patch({ requestId });
      }
      if (!(products.accountsDetail && requestId === open.requestId)) await retrieveAccountsDetail(requestId, products.accountsDetail ?? {});
      const label = 'package' in attributesProduct ? `attributes ${attributesProduct.package}` : 'custom attributes';
      const attributes = await retrieveByRepeating(label, (deadline, summary) =>
        proxyLocalActivities<ConnectionActivities>(localOptions(summary, deadline)).requestAttributes({ customerId, loginId, requestId, product: attributesProduct }),
      );
      result = { ...result, requestId, attributes };
      markRetrieved('attributes');
    }
    return { ...result, totalPolls: state.totalPolls };
  }

  // ----- run -------------------------------------------------------------------------------------

  try {
    adopt(await validateConnectionInput(args));
    const open = await openSession();
    const result = await retrieve(open);
    patch({ status: 'Completed', pending: undefined });
    log.info('connection completed', { loginId: result.loginId, retrieved: state.retrieved, totalPolls: state.totalPolls });
    return result;
  } catch (error) {
    if (isCancellation(error)) {
      patch({ status: 'Cancelled', pending: undefined });
      throw error;
    }
    const failure = toConnectionFailure(error);
    const info: ConnectionFailureInfo = { type: failure.type as ConnectionFailureType, message: failure.message, serviceCode: serviceDetailsOf(error)?.serviceCode };
    patch({ status: 'Failed', failure: info, pending: undefined });
    firstStep ??= { step: 'ended', status: 'Failed', failure: info };
    log.warn('connection failed', { type: info.type, serviceCode: info.serviceCode });
    throw failure;
  } finally {
    // Answers still waiting for a verdict learn that the connection ended; then let handlers return.
    for (const answer of [inFlight, queued]) {
      if (answer) settle(answer, { outcome: 'ended', status: state.status, failure: state.failure });
    }
    firstStep ??= { step: 'ended', status: state.status, failure: state.failure };
    await CancellationScope.nonCancellable(() => condition(allHandlersFinished));
  }
}

function isChallengeAnswer(value: unknown): value is ChallengeAnswer {
  if (typeof value !== 'object' || value === null) return false;
  const { challengeSetId, responses } = value as Record<string, unknown>;
  if (typeof challengeSetId !== 'string' || typeof responses !== 'object' || responses === null || Array.isArray(responses)) return false;
  return Object.values(responses).every((answers) => Array.isArray(answers) && answers.every((answer) => typeof answer === 'string'));
}

function connectionFailure(type: ConnectionFailureType, message: string, details?: ServiceFailureDetails): ApplicationFailure {
  return ApplicationFailure.create({ type, message, nonRetryable: true, details: details ? [details] : [] });
}

/** Every way the connection can end badly becomes one typed, non-retryable failure. */
function toConnectionFailure(error: unknown): ApplicationFailure {
  if (error instanceof ApplicationFailure && OWN_FAILURE_TYPES.has(error.type ?? '')) return error;
  const timeout = timeoutFailureOf(error);
  if (timeout) return connectionFailure('PollingTimedOut', `an upstream call did not succeed before the pending operation's deadline: ${timeout.message}`);
  const failure = applicationFailureOf(error);
  if (failure) {
    const type = FAILURE_BY_ACTIVITY_TYPE[failure.type ?? ''] ?? 'ServiceRejected';
    return connectionFailure(type, failure.message, failure.details?.[0] as ServiceFailureDetails | undefined);
  }
  return connectionFailure('ServiceRejected', error instanceof Error ? error.message : String(error));
}

/** The Web UI's "current details": one line a person watching understands. */
function describeForHumans(state: ConnectionState): string {
  switch (state.status) {
    case 'AwaitingAnswer':
      return `Awaiting an answer to challenge set ${state.challengeSet?.id} (${state.challengeSet?.challenges.map((c) => c.Type).join(', ')}), attempt ${state.challengeSet?.attempt}, answer by ${state.challengeSet?.answerBy}`;
    case 'Retrieving':
      return state.pending
        ? `Retrieving: ${state.pending.operation} pending (${state.pending.code}), poll ${state.pending.pollCount}, gives up at ${state.pending.deadline}`
        : `Retrieving data${state.retrieved.length ? ` (done: ${state.retrieved.join(', ')})` : ''}`;
    case 'Failed':
      return `Failed: ${state.failure?.type} - ${state.failure?.message}`;
    default:
      return `${state.status}${state.lastRejection ? ` (last rejection: ${state.lastRejection.message})` : ''}`;
  }
}

export type { ConnectionStatus };
