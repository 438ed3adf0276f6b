/**
 * The answer inbox's handling of signals that arrive while an Authorize is in flight. The SDK
 * delivers a workflow task's signals before its activity results, so an answer to the challenge set
 * that very result presents must be parked, then judged once the set is presented. Found by the
 * chaos run: such an answer was refused and its connection waited until its deadline.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AnswerInbox } from '../../src/workflows/connection/answer-inbox.js';
import type { ChallengeSet, ConnectionState } from '../../src/contract/connection/connection-definitions.js';

const SET: ChallengeSet = {
  id: '1',
  challenges: [{ Type: 'QuestionAndAnswer', Prompt: 'What city were you born in?' }],
  presentedAt: '2026-11-22T00:00:00.000Z',
  attempt: 1,
  answerBy: '2026-11-22T00:15:00.000Z',
};
const BASE: ConnectionState = {
  status: 'Authorizing',
  mode: 'live',
  customerId: 'c',
  totalPolls: 0,
  sessionRestarts: 0,
  retrieved: [],
  startedAt: '',
  updatedAt: '',
};
const AUTHORIZING = BASE;
const AWAITING: ConnectionState = { ...BASE, status: 'AwaitingAnswer', challengeSet: SET };
const RETRIEVING: ConnectionState = { ...BASE, status: 'Retrieving' };
const ANSWER = { challengeSetId: '1', responses: { 'What city were you born in?': ['Montreal'] } };

void describe('signals that arrive while an Authorize is in flight', () => {
  void it('parks an answer to the set about to be presented, and queues it once that set is presented', () => {
    const inbox = new AnswerInbox();
    assert.equal(inbox.receiveSignal(ANSWER, AUTHORIZING), undefined, 'not refused while Authorizing');
    assert.deepEqual(inbox.unpark(AWAITING), [], 'it fits the presented set');
    assert.deepEqual(inbox.take(), ANSWER);
  });

  void it('refuses a parked answer that fits nothing once the session opened, naming why', () => {
    const inbox = new AnswerInbox();
    inbox.receiveSignal(ANSWER, AUTHORIZING);
    const problems = inbox.unpark(RETRIEVING);
    assert.equal(problems.length, 1);
    assert.match(problems[0] ?? '', /no challenge is awaiting an answer \(status Retrieving\)/);
  });

  void it('queues only the first of two parked answers and refuses the second', () => {
    const inbox = new AnswerInbox();
    inbox.receiveSignal(ANSWER, AUTHORIZING);
    inbox.receiveSignal(ANSWER, AUTHORIZING);
    const problems = inbox.unpark(AWAITING);
    assert.equal(problems.length, 1);
    assert.match(problems[0] ?? '', /already being processed/);
  });

  void it('refuses at once what is malformed, and answers to nothing when no Authorize is in flight', () => {
    const inbox = new AnswerInbox();
    assert.match(inbox.receiveSignal('x', AUTHORIZING) ?? '', /an answer is \{ challengeSetId/);
    assert.match(inbox.receiveSignal({ undecodablePayload: 'unknown encoding' }, AUTHORIZING) ?? '', /could not be decoded/);
    assert.match(inbox.receiveSignal(ANSWER, RETRIEVING) ?? '', /no challenge is awaiting an answer/);
    assert.deepEqual(inbox.unpark(AWAITING), [], 'nothing was parked');
  });
});
