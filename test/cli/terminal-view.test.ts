import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { SecurityChallenge } from '../../src/aggregator/schemas.js';
import { checkAnswer } from '../../src/workflows/connection/challenges.js';
import type { ChallengeSet, ConnectionState } from '../../src/contract/connection/connection-definitions.js';
import { formatElapsed, parseAnswerTokens, presentChallengeSet, presentState, printable, progressLine } from '../../src/cli/terminal-view.js';

const multipleChoice: SecurityChallenge = {
  Type: 'MultipleChoice',
  Prompt: 'Which street?',
  Iterables: ['Rue Sherbrooke', 'Maple Avenue', 'None of the above'],
};
const multipleAnswers: SecurityChallenge = {
  Type: 'MultipleChoiceMultipleAnswers',
  Prompt: 'Which institutions?',
  Iterables: ['A Bank', 'B Trust', 'C Union', 'D Savings'],
};
const textOrCall: SecurityChallenge = { Type: 'TextOrCall', Prompt: 'Where should we send your code?', Iterables: ['***-4821', '***-7730'] };
const trustedDevice: SecurityChallenge = { Type: 'WaitUntilEUAccept', Prompt: 'Accept on your trusted device' };
const images: SecurityChallenge = { Type: 'ImageSelection', Prompt: 'Select your image', Iterables: Array.from({ length: 16 }, (_, i) => `iVBORw0KGgo${i}`) };
const question: SecurityChallenge = { Type: 'QuestionAndAnswer', Prompt: 'What city were you born in?' };
const token: SecurityChallenge = { Type: 'QuestionAndAnswer', Prompt: 'Enter the 6-digit code shown on your SecurID token' };
const chooseQuestion: SecurityChallenge = { Type: 'QuestionAndAnswer', Prompt: 'Choose security question 1', Iterables: ['First car?', 'Favourite teacher?'] };

function set(challenges: SecurityChallenge[]): ChallengeSet {
  return { id: '4', challenges, presentedAt: '2030-01-01T00:00:00.000Z', attempt: 1, answerBy: '2030-01-01T00:15:00.000Z' };
}

void describe('presenting challenges to an operator', () => {
  void it('numbers the options of a MultipleChoice challenge and says how to answer', () => {
    const lines = presentChallengeSet(set([multipleChoice]));
    assert.ok(lines.includes('[1] MultipleChoice: Which street?'));
    assert.ok(lines.includes('    1) Rue Sherbrooke'));
    assert.ok(lines.includes('    3) None of the above'));
    assert.ok(lines.some((line) => line.includes('one option number (1-3)')));
  });

  void it('lists the phone options of a TextOrCall challenge with the Text or Call choice', () => {
    const lines = presentChallengeSet(set([textOrCall]));
    assert.ok(lines.includes('    1) ***-4821'));
    assert.ok(lines.includes('    2) ***-7730'));
    assert.ok(lines.some((line) => line.includes(':text or :call')));
  });

  void it('adds a note to ask the customer for trusted-device approval', () => {
    const lines = presentChallengeSet(set([trustedDevice]));
    assert.ok(lines.some((line) => line.includes('trusted device') && line.includes('note:')));
    assert.ok(lines.some((line) => line.includes('answer: verified')));
  });

  void it('prints the saved file of each of the 16 images of an ImageSelection challenge', () => {
    const paths = Array.from({ length: 16 }, (_, i) => `/tmp/x/image-${String(i + 1).padStart(2, '0')}.png`);
    const lines = presentChallengeSet(set([question, images]), { imagePaths: new Map([[1, paths]]) });
    assert.ok(lines.includes('[2] ImageSelection: Select your image'));
    assert.ok(lines.includes('     1) /tmp/x/image-01.png'));
    assert.ok(lines.includes('    16) /tmp/x/image-16.png'));
    assert.ok(!lines.some((line) => line.includes('iVBORw0KGgo')), 'the base64 text itself is never printed');
  });

  void it('asks for 6 digits on a token-code prompt', () => {
    const lines = presentChallengeSet(set([token]));
    assert.ok(lines.some((line) => line.includes('6-digit code')));
  });

  void it('ends with the command that answers the set, one placeholder per challenge', () => {
    const lines = presentChallengeSet(set([question, multipleChoice]), { answerCommand: 'connections answer wf-1 --set 4' });
    assert.equal(lines.at(-1), 'To answer: connections answer wf-1 --set 4 <answer 1> <answer 2>');
  });

  void it('shows how long is left to answer when given the time', () => {
    const lines = presentChallengeSet(set([question]), { now: Date.parse('2030-01-01T00:05:00.000Z') });
    assert.match(lines[0] ?? '', /10m 00s left/);
  });

  void it('strips terminal escape sequences from service-provided text', () => {
    assert.equal(printable('Name\u001b[2J\u001b[31m?\u0007'), 'Name??');
    const lines = presentChallengeSet(set([{ Type: 'QuestionAndAnswer', Prompt: 'evil\u001b[2Jprompt' }]));
    assert.ok(lines.includes('[1] QuestionAndAnswer: evilprompt'));
  });
});

void describe('presenting a connection state', () => {
  const state: ConnectionState = {
    status: 'Retrieving',
    mode: 'live',
    customerId: 'demo-lender',
    institution: 'SandboxBank',
    loginId: '11111111-2222-3333-4444-555555555555',
    sessionRestarts: 0,
    pending: { operation: 'accounts detail', code: 'OPERATION_PENDING', pollCount: 2, since: '2030-01-01T00:00:10.000Z', deadline: '2030-01-01T00:30:10.000Z' },
    totalPolls: 2,
    retrieved: [],
    lastRejection: { source: 'service', message: 'wrong answer', serviceCode: 'INVALID_SECURITY_RESPONSE', at: '2030-01-01T00:00:05.000Z' },
    startedAt: '2030-01-01T00:00:00.000Z',
    updatedAt: '2030-01-01T00:00:30.000Z',
  };

  void it('names the status, elapsed time, polls, pending operation and last rejection', () => {
    const lines = presentState('wf-1', state, Date.parse('2030-01-01T00:01:05.000Z'));
    assert.equal(lines[0], 'Connection wf-1: Retrieving, running 1m 05s');
    assert.ok(lines.some((line) => line.includes('institution SandboxBank')));
    assert.ok(lines.some((line) => line.includes('pending accounts detail (OPERATION_PENDING), poll 2')));
    assert.ok(lines.some((line) => line.includes('rejected by the service [INVALID_SECURITY_RESPONSE]: wrong answer')));
  });

  void it('gives watch one line with elapsed time, status and polls', () => {
    const line = progressLine(state, Date.parse('2030-01-01T00:00:42.000Z'));
    assert.match(line, /^\s+42s {2}Retrieving\s+polls 2 {2}pending accounts detail \(poll 2\)$/);
  });

  void it('formats durations in hours, minutes and seconds', () => {
    assert.equal(formatElapsed(0), '0s');
    assert.equal(formatElapsed(-5000), '0s');
    assert.equal(formatElapsed(61_000), '1m 01s');
    assert.equal(formatElapsed(3_720_000), '1h 02m');
  });
});

void describe('parsing answers typed by an operator', () => {
  void it('turns option numbers into the option texts of each challenge, in order', () => {
    const parsed = parseAnswerTokens([multipleChoice, multipleAnswers], ['2', '1,3']);
    assert.deepEqual(parsed, { ok: true, responses: { 'Which street?': ['Maple Avenue'], 'Which institutions?': ['A Bank', 'C Union'] } });
  });

  void it('accepts the exact text of a MultipleChoice option, or its unique case-insensitive match', () => {
    assert.deepEqual(parseAnswerTokens([multipleChoice], ['Maple Avenue']), { ok: true, responses: { 'Which street?': ['Maple Avenue'] } });
    assert.deepEqual(parseAnswerTokens([multipleChoice], ['maple avenue']), { ok: true, responses: { 'Which street?': ['Maple Avenue'] } });
  });

  void it('keys a TextOrCall answer by the chosen phone option, Text unless Call is asked', () => {
    assert.deepEqual(parseAnswerTokens([textOrCall], ['2']), { ok: true, responses: { '***-7730': ['Text'] } });
    assert.deepEqual(parseAnswerTokens([textOrCall], ['1:CALL']), { ok: true, responses: { '***-4821': ['Call'] } });
  });

  void it('answers a trusted-device challenge with VERIFIED whatever the case typed', () => {
    assert.deepEqual(parseAnswerTokens([trustedDevice], ['verified']), { ok: true, responses: { 'Accept on your trusted device': ['VERIFIED'] } });
  });

  void it('answers an ImageSelection challenge with the base64 text of the numbered image', () => {
    const parsed = parseAnswerTokens([images], ['16']);
    assert.deepEqual(parsed, { ok: true, responses: { 'Select your image': ['iVBORw0KGgo15'] } });
  });

  void it('answers a choose-a-question challenge with [chosenQuestion, answer]', () => {
    const parsed = parseAnswerTokens([chooseQuestion], ['2:Mrs: Smith']);
    assert.deepEqual(parsed, { ok: true, responses: { 'Choose security question 1': ['Favourite teacher?', 'Mrs: Smith'] } });
  });

  void it('keeps free-text answers verbatim', () => {
    assert.deepEqual(parseAnswerTokens([question], ['  Montréal ']), { ok: true, responses: { 'What city were you born in?': ['  Montréal '] } });
  });

  void it('produces answers the workflow check accepts for every challenge type', () => {
    const challenges = [multipleChoice, multipleAnswers, textOrCall, trustedDevice, images, question, chooseQuestion];
    const parsed = parseAnswerTokens(challenges, ['3', '4', '1:call', 'VERIFIED', '7', 'Laval', '1:Civic']);
    assert.ok(parsed.ok);
    assert.deepEqual(checkAnswer(challenges, parsed.responses), []);
  });

  void it('refuses an option number that is not listed, naming the challenge and the range', () => {
    const parsed = parseAnswerTokens([multipleChoice], ['5']);
    assert.deepEqual(parsed, { ok: false, problems: ['answer 1 (MultipleChoice "Which street?"): 5 is not an option number (1-3)'] });
  });

  void it('refuses the wrong number of answers', () => {
    const parsed = parseAnswerTokens([multipleChoice, question], ['1']);
    assert.equal(parsed.ok, false);
    assert.match(parsed.ok ? '' : (parsed.problems[0] ?? ''), /expected 2 answers \(one per challenge, in order\), got 1/);
  });

  void it('refuses an option listed twice in a multiple-answers challenge', () => {
    const parsed = parseAnswerTokens([multipleAnswers], ['1,1']);
    assert.equal(parsed.ok, false);
    assert.match(parsed.ok ? '' : (parsed.problems[0] ?? ''), /option 1 is listed twice/);
  });

  void it('refuses a trusted-device answer other than verified', () => {
    const parsed = parseAnswerTokens([trustedDevice], ['yes']);
    assert.equal(parsed.ok, false);
    assert.match(parsed.ok ? '' : (parsed.problems[0] ?? ''), /answer "verified" once the customer approved/);
  });

  void it('refuses a choose-a-question answer without the colon or with an empty answer', () => {
    const noColon = parseAnswerTokens([chooseQuestion], ['2']);
    assert.match(noColon.ok ? '' : (noColon.problems[0] ?? ''), /question number, a colon, and the answer/);
    const empty = parseAnswerTokens([chooseQuestion], ['2:  ']);
    assert.match(empty.ok ? '' : (empty.problems[0] ?? ''), /answer after the colon is empty/);
  });

  void it('refuses image selection by anything but a number', () => {
    const parsed = parseAnswerTokens([images], ['iVBORw0KGgo1']);
    assert.equal(parsed.ok, false);
    assert.match(parsed.ok ? '' : (parsed.problems[0] ?? ''), /is not an option number \(1-16\)/);
  });
});
