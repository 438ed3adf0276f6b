/**
 * An answer to a connection's challenges, checked before it is sent: its size always (an oversized
 * answer must never reach Temporal), and by default its challenge set and its responses against the
 * challenges the connection presents. Apart from the client because it is the checking, not the sending.
 */
import type { SecurityResponses } from '../aggregator/schemas.js';
import type { ConnectionState } from '../contract/connection/connection-definitions.js';
import { checkAnswer, checkAnswerSize, describeProblems } from '../workflows/connection/challenges.js';
import { AnswerRejectedError } from './errors.js';

export interface AnswerInput {
  /** The challenge set being answered; defaults to the one the connection presents now. */
  readonly challengeSetId?: string | undefined;
  /** Prompt text (exactly as asked; for TextOrCall, the chosen option) → answers. */
  readonly responses: SecurityResponses;
}

export interface AnswerOptions {
  /** Check the answer against the challenges before sending it (default true). */
  readonly checkLocally?: boolean;
}

/** The challenge set the answer goes to, once checked; AnswerRejectedError (from 'client') says why not. */
export async function challengeSetToAnswer(
  workflowId: string,
  answer: AnswerInput,
  options: AnswerOptions,
  getState: (workflowId: string) => Promise<ConnectionState>,
): Promise<string> {
  let challengeSetId = answer.challengeSetId;
  // Size is checked even when the caller checked the answer itself: an oversized answer must never
  // reach Temporal (past its message limit it fails slowly and misleadingly).
  const tooLarge = checkAnswerSize(answer.responses);
  if (tooLarge.length > 0) throw new AnswerRejectedError(workflowId, 'client', describeProblems(tooLarge), challengeSetId);
  if (options.checkLocally ?? true) {
    const state = await getState(workflowId);
    const set = state.challengeSet;
    if (state.status !== 'AwaitingAnswer' || set === undefined) {
      throw new AnswerRejectedError(workflowId, 'client', `the connection is not awaiting an answer (status ${state.status})`, challengeSetId);
    }
    if (challengeSetId !== undefined && challengeSetId !== set.id) {
      throw new AnswerRejectedError(
        workflowId,
        'client',
        `challenge set ${challengeSetId} is no longer current (now ${set.id}); look at the new challenges and answer again`,
        challengeSetId,
      );
    }
    challengeSetId = set.id;
    const problems = checkAnswer(set.challenges, answer.responses);
    if (problems.length > 0) throw new AnswerRejectedError(workflowId, 'client', describeProblems(problems), challengeSetId);
  }
  if (challengeSetId === undefined) {
    challengeSetId = (await getState(workflowId)).challengeSet?.id ?? '';
  }
  return challengeSetId;
}
