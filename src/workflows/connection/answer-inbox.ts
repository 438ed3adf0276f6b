/**
 * The connection's answer inbox: answers arriving by signal or update, the checks both share, the one
 * answer being sent to the service, and the outcomes update callers wait for.
 *
 * An answer moves queued → in flight → settled. If the service's verdict on the answer in flight is
 * unknown (the worker died while it was at the service), the answer is held until a new session has
 * presented its challenges, and its caller learns that the session was restarted.
 *
 * A signal that arrives while an Authorize is in flight is parked, not judged: the SDK delivers a
 * workflow task's signals before its activity results, so an answer to the challenge set that very
 * result presents (one a query already showed, replaying the same events) would otherwise be refused.
 * Parked signals are judged when the connection next waits for an answer, or leaves Authorizing.
 */
import { condition } from '@temporalio/workflow';
import type { SecurityResponses } from '../../aggregator/schemas.js';
import { isUndecodablePayload } from '../../contract/undecodable-payload.js';
import { checkAnswer, describeProblems } from './challenges.js';
import type { AnswerOutcome, ChallengeAnswer, ChallengeSet, ConnectionState, ConnectionStatus } from '../../contract/connection/connection-definitions.js';

/** The two messages an answer arrives as. */
export type AnswerMessage = 'submitAnswer' | 'answerChallenge';

export interface QueuedAnswer {
  readonly seq: number;
  readonly answer: ChallengeAnswer;
  /** Only updates wait for an outcome; signals are fire-and-forget. */
  readonly awaited: boolean;
}

export class AnswerInbox {
  private seq = 0;
  private queued: QueuedAnswer | undefined;
  private inFlight: QueuedAnswer | undefined;
  private restarting: { readonly answer: QueuedAnswer; readonly reason: string } | undefined;
  private readonly outcomes = new Map<number, AnswerOutcome>();
  private parked: ChallengeAnswer[] = [];

  /** Why an answer cannot be taken now, or undefined; shared by the update validator (`via` submitAnswer) and the signal (answerChallenge). */
  problemWith(answer: unknown, state: ConnectionState, via: AnswerMessage): string | undefined {
    if (isUndecodablePayload(answer)) return `the answer could not be decoded: ${answer.undecodablePayload}`;
    if (!isChallengeAnswer(answer)) return 'an answer is { challengeSetId: string, responses: { [prompt]: string[] } }';
    const sentAs: unknown = (answer as { sentAs?: unknown }).sentAs;
    if (sentAs !== undefined && sentAs !== via) {
      return `an answer sealed for ${typeof sentAs === 'string' ? `the ${truncate(sentAs)} message` : 'another message'} sent as the ${via} ${via === 'submitAnswer' ? 'update' : 'signal'}: an answer is taken only as the message it was sent as`;
    }
    const set = state.challengeSet;
    if (state.status !== 'AwaitingAnswer' || !set) return `no challenge is awaiting an answer (status ${state.status})`;
    if (answer.challengeSetId !== set.id) return `challenge set ${truncate(answer.challengeSetId)} is not the current one (current: ${set.id})`;
    if (this.queued || this.inFlight) return `an answer to challenge set ${set.id} is already being processed`;
    const problems = checkAnswer(set.challenges, answer.responses);
    return problems.length ? describeProblems(problems) : undefined;
  }

  /** A signal: queued, parked (while Authorizing), or refused; returns the problem to record, if any. */
  receiveSignal(answer: unknown, state: ConnectionState): string | undefined {
    const problem = this.problemWith(answer, state, 'answerChallenge');
    if (problem === undefined) {
      this.enqueue(answer as ChallengeAnswer, false);
      return undefined;
    }
    if (state.status === 'Authorizing' && isChallengeAnswer(answer) && this.parked.length < MAX_PARKED) {
      this.parked.push(answer);
      return undefined;
    }
    return problem;
  }

  /** Judges parked signals against the state now: the first that fits is queued; the problems of the others are returned. */
  unpark(state: ConnectionState): string[] {
    const problems: string[] = [];
    for (const answer of this.parked.splice(0)) {
      const problem = this.problemWith(answer, state, 'answerChallenge');
      if (problem === undefined) this.enqueue(answer, false);
      else problems.push(problem);
    }
    return problems;
  }

  enqueue(answer: ChallengeAnswer, awaited: boolean): number {
    this.seq += 1;
    this.queued = { seq: this.seq, answer, awaited };
    return this.seq;
  }

  /** Waits for an answer until `timeoutMs` passes; true when one is queued. */
  waitForAnswer(timeoutMs: number, summary: string): Promise<boolean> {
    return condition(() => this.queued !== undefined, Math.max(0, timeoutMs), { summary });
  }

  /** The queued answer becomes the one in flight. */
  take(): ChallengeAnswer {
    if (!this.queued) throw new Error('AnswerInbox.take: no answer is queued');
    this.inFlight = this.queued;
    this.queued = undefined;
    return this.inFlight.answer;
  }

  /** The service gave its verdict on the answer in flight. */
  settle(outcome: AnswerOutcome): void {
    if (this.inFlight) this.deliver(this.inFlight, outcome);
    this.inFlight = undefined;
  }

  /** The service's verdict on the answer in flight is unknown: hold it until a new session shows what comes next. */
  holdForRestart(reason: string): void {
    if (this.inFlight) this.restarting = { answer: this.inFlight, reason };
    this.inFlight = undefined;
  }

  /** The new session presented a challenge set, or opened: the held answer learns of the restart. */
  settleRestart(status: ConnectionStatus, nextChallengeSet?: ChallengeSet): void {
    if (!this.restarting) return;
    const { answer, reason } = this.restarting;
    this.restarting = undefined;
    this.deliver(answer, { outcome: 'restarted', reason, status, nextChallengeSet });
  }

  /** The connection ended: every answer still waiting learns it. */
  endAll(outcome: Extract<AnswerOutcome, { outcome: 'ended' }>): void {
    for (const answer of [this.restarting?.answer, this.inFlight, this.queued]) {
      if (answer) this.deliver(answer, outcome);
    }
    this.restarting = this.inFlight = this.queued = undefined;
  }

  /** What an update's caller is answered. */
  async outcomeOf(seq: number): Promise<AnswerOutcome> {
    await condition(() => this.outcomes.has(seq));
    const outcome = this.outcomes.get(seq) as AnswerOutcome;
    this.outcomes.delete(seq);
    return outcome;
  }

  private deliver(answer: QueuedAnswer, outcome: AnswerOutcome): void {
    if (answer.awaited) this.outcomes.set(answer.seq, outcome);
  }
}

/** Signals parked at most while one Authorize is in flight; more are refused at once. */
const MAX_PARKED = 4;

function isChallengeAnswer(value: unknown): value is ChallengeAnswer {
  if (typeof value !== 'object' || value === null) return false;
  const { challengeSetId, responses } = value as Record<string, unknown>;
  if (typeof challengeSetId !== 'string' || typeof responses !== 'object' || responses === null || Array.isArray(responses)) return false;
  return Object.values(responses as SecurityResponses).every((answers) => Array.isArray(answers) && answers.every((answer) => typeof answer === 'string'));
}

/** A set id is short; anything else is quoted only in part. */
function truncate(text: string): string {
  return text.length > 40 ? `${text.slice(0, 37)}...` : text;
}
