/**
 * Opening the connection's session: the first Authorize, the challenge sets it leads to, the
 * operators' answers, the service's rejections, and recovery when an Authorize's outcome is unknown.
 *
 * Recovery: an Authorize with credentials or answers is never sent again once it may have reached
 * the service (authorize.ts). When its outcome is unknown, the session it belonged to is abandoned
 * and a new one opened; its challenges are presented again, with the reason in the state and in the
 * outcome of the update whose answer was in flight. The end user is asked again only then.
 */
import { log } from '@temporalio/workflow';
import type { AuthorizeOutcome } from '../../activities/connection-activity-types.js';
import type { SecurityChallenge } from '../../aggregator/schemas.js';
import type { ConnectionInput } from '../../contract/connection/connection-input.js';
import type { AnswerInbox } from './answer-inbox.js';
import { authorize, AuthorizeOutcomeUnknownError } from './authorize.js';
import { describeEndUserChallenge, endUserChallengeOf } from './challenges.js';
import type { ChallengeSet, FirstStep } from '../../contract/connection/connection-definitions.js';
import { connectionFailure, serviceDetailsOf, applicationFailureOf } from './failures.js';
import { isoNow, type StateRecorder } from './state-recorder.js';
import { countSessionRestart } from './session-metrics.js';

export type SessionOpen = Extract<AuthorizeOutcome, { kind: 'session-open' }>;
type ChallengeOutcome = Extract<AuthorizeOutcome, { kind: 'challenge' }>;

/** New sessions one connection may open after unknown outcomes before it gives up. */
export const MAX_SESSION_RESTARTS = 3;

export interface SessionContext {
  readonly input: ConnectionInput;
  readonly recorder: StateRecorder;
  readonly inbox: AnswerInbox;
  /** Called once, with the first thing update-with-start callers should see. */
  readonly reportFirstStep: (step: FirstStep) => void;
  /** Judges the signals that arrived while an Authorize was in flight (see answer-inbox.ts). */
  readonly judgeParkedSignals: () => void;
}

/**
 * An unattended run (a scheduled refresh) met a challenge: nobody is there to answer it, so the run
 * ends at once as EndUserActionRequired and flags the login, instead of waiting out answerTimeoutMs.
 */
function endUserRequired(challenge: ChallengeOutcome, { input, recorder }: SessionContext) {
  const types = challenge.challenges.map((c: SecurityChallenge) => c.Type);
  const flag = endUserChallengeOf(challenge.challenges) ?? types[0] ?? 'QuestionAndAnswer';
  recorder.patch({ endUserChallenge: flag });
  const loginId = input.session.kind === 'live' ? 'the login' : `login ${input.session.loginId}`;
  log.warn('unattended connection met a challenge', { types });
  return connectionFailure(
    'EndUserActionRequired',
    `${loginId} needs its end user: an unattended refresh met ${types.join(' + ')} (${describeEndUserChallenge(flag)}); it cannot be refreshed without them`,
  );
}

export async function openSession(context: SessionContext): Promise<SessionOpen> {
  const { input, recorder, inbox } = context;
  let challengeSetCounter = 0;

  function present(challenge: ChallengeOutcome, attempt: number): ChallengeSet {
    challengeSetCounter += 1;
    const presentedAt = Date.now();
    const set: ChallengeSet = {
      id: String(challengeSetCounter),
      challenges: challenge.challenges,
      presentedAt: new Date(presentedAt).toISOString(),
      attempt,
      answerBy: new Date(presentedAt + input.timing.answerTimeoutMs).toISOString(),
    };
    // A two-step or trusted-device challenge flags the login: it cannot be refreshed unattended.
    const endUserChallenge = recorder.state.endUserChallenge ?? endUserChallengeOf(set.challenges);
    recorder.patch({ status: 'AwaitingAnswer', challengeSet: set, requestId: challenge.requestId, endUserChallenge });
    context.reportFirstStep({ step: 'challenge', challengeSet: set });
    inbox.settleRestart('AwaitingAnswer', set);
    log.info('challenge set presented', { challengeSetId: set.id, types: set.challenges.map((c: SecurityChallenge) => c.Type), attempt });
    return set;
  }

  /** Waits for answers to one 203 (and any that follow) until the service opens the session. */
  async function answerChallenges(first: ChallengeOutcome): Promise<AuthorizeOutcome> {
    let challenge = first;
    let attempt = 1;
    let set = present(challenge, attempt);
    for (;;) {
      context.judgeParkedSignals();
      const answered = await inbox.waitForAnswer(Date.parse(set.answerBy) - Date.now(), `wait for an answer to challenge set ${set.id}`);
      if (!answered) {
        throw connectionFailure('ChallengeAbandoned', `no answer to challenge set ${set.id} within ${Math.round(input.timing.answerTimeoutMs / 1000)} s`);
      }
      const answer = inbox.take();
      recorder.patch({ status: 'Authorizing' });
      const requestId = challenge.requestId;
      try {
        const next = await authorize(
          `answer challenge set ${set.id}`,
          (activities) => activities.answerChallenge({ customerId: input.customerId, requestId, responses: answer.responses }),
          {
            idempotent: false,
          },
        );
        if (next.kind !== 'challenge') {
          inbox.settle({ outcome: 'accepted', status: next.kind === 'session-open' ? 'Retrieving' : recorder.state.status });
          return next;
        }
        challenge = next;
        attempt = 1;
        set = present(challenge, attempt);
        inbox.settle({ outcome: 'accepted', status: 'AwaitingAnswer', nextChallengeSet: set });
      } catch (error) {
        if (error instanceof AuthorizeOutcomeUnknownError) {
          inbox.holdForRestart(error.reason);
          throw error;
        }
        if (applicationFailureOf(error)?.type !== 'InvalidSecurityResponse' || attempt >= input.timing.maxAnswerAttempts) throw error;
        const serviceCode = serviceDetailsOf(error)?.serviceCode;
        const message = `the service refused the answer to challenge set ${set.id} (attempt ${attempt} of ${input.timing.maxAnswerAttempts})`;
        recorder.reject({ source: 'service', message, challengeSetId: set.id, serviceCode });
        attempt += 1;
        set = present(challenge, attempt);
        inbox.settle({ outcome: 'rejected', message, serviceCode, nextChallengeSet: set });
      }
    }
  }

  for (let restarts = 0; ;) {
    try {
      const { customerId, session } = input;
      let outcome = await authorize(`authorize (${session.kind})`, (activities) => activities.openSession({ customerId, session }), {
        idempotent: session.kind === 'cached',
      });
      if (outcome.kind === 'challenge' && input.unattended) throw endUserRequired(outcome, context);
      while (outcome.kind === 'challenge') outcome = await answerChallenges(outcome);
      if (outcome.kind === 'pending') throw connectionFailure('UnexpectedServiceAnswer', `Authorize answered ${outcome.code}; a session cannot be polled`);
      inbox.settleRestart('Retrieving');
      return outcome;
    } catch (error) {
      if (!(error instanceof AuthorizeOutcomeUnknownError)) throw error;
      if (restarts >= MAX_SESSION_RESTARTS) {
        throw connectionFailure('ServiceUnavailable', `gave up after ${restarts} new sessions: an Authorize's outcome was unknown again (${error.reason})`);
      }
      restarts += 1;
      countSessionRestart('outcome_unknown');
      const abandoned = recorder.state.challengeSet?.id;
      recorder.patch({
        status: 'Authorizing',
        challengeSet: undefined,
        sessionRestarts: restarts,
        lastRestart: { reason: `${error.reason}; opening a new session`, challengeSetId: abandoned, at: isoNow() },
      });
      log.warn('Authorize outcome unknown: opening a new session', { restarts, challengeSetId: abandoned });
    }
  }
}
