import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { SecurityChallenge } from '../../src/aggregator/schemas.js';
import { checkAnswer, describeProblems } from '../../src/workflows/connection/challenges.js';

const question = (Prompt: string): SecurityChallenge => ({ Type: 'QuestionAndAnswer', Prompt });
const choice: SecurityChallenge = {
  Type: 'MultipleChoice',
  Prompt: 'Which of these streets have you lived on?',
  Iterables: ['Elm', 'Oak', 'None of the above'],
};
const multi: SecurityChallenge = { Type: 'MultipleChoiceMultipleAnswers', Prompt: 'Which banks have you used?', Iterables: ['A', 'B', 'C'] };
const textOrCall: SecurityChallenge = { Type: 'TextOrCall', Prompt: 'Where should we send the code?', Iterables: ['xxx-xxx-1234', 'xxx-xxx-9876'] };
const device: SecurityChallenge = { Type: 'WaitUntilEUAccept', Prompt: 'Approve the sign-in on your trusted device' };
const images: SecurityChallenge = { Type: 'ImageSelection', Prompt: 'Select your image', Iterables: ['aW1hZ2UtMQ==', 'aW1hZ2UtMg=='] };
const pickQuestion: SecurityChallenge = { Type: 'QuestionAndAnswer', Prompt: 'Choose new security question 1', Iterables: ['First pet?', 'First car?'] };
const token = question('Enter the 6-digit code from your SecurID token');

describe('checkAnswer', () => {
  it('accepts three questions answered together in one answer', () => {
    const challenges = [question('City of birth?'), question('First school?'), question('Favourite colour?')];
    assert.deepEqual(checkAnswer(challenges, { 'City of birth?': ['Montreal'], 'First school?': ['Lakeside'], 'Favourite colour?': ['blue'] }), []);
  });

  it('refuses an answer that leaves one of several prompts unanswered', () => {
    const problems = checkAnswer([question('A?'), question('B?')], { 'A?': ['x'] });
    assert.equal(problems.length, 1);
    assert.match(describeProblems(problems), /"B\?": is not answered/);
  });

  it('refuses a key that was not asked, even when it differs only by case', () => {
    const problems = checkAnswer([question('City of birth?')], { 'City of birth?': ['x'], 'city of birth?': ['x'] });
    assert.match(describeProblems(problems), /"city of birth\?" was not asked/);
  });

  it('refuses an empty answer to a question', () => {
    assert.match(describeProblems(checkAnswer([question('A?')], { 'A?': ['  '] })), /empty/);
  });

  it('rejects a MultipleChoice answer that is not among the options', () => {
    assert.match(describeProblems(checkAnswer([choice], { [choice.Prompt]: ['Maple'] })), /not one of the offered options/);
  });

  it('rejects a MultipleChoice answer with two options', () => {
    assert.match(describeProblems(checkAnswer([choice], { [choice.Prompt]: ['Elm', 'Oak'] })), /exactly one/);
  });

  it('accepts the none-of-the-above option of a MultipleChoice', () => {
    assert.deepEqual(checkAnswer([choice], { [choice.Prompt]: ['None of the above'] }), []);
  });

  it('accepts several listed options for MultipleChoiceMultipleAnswers and refuses unlisted or repeated ones', () => {
    assert.deepEqual(checkAnswer([multi], { [multi.Prompt]: ['A', 'C'] }), []);
    assert.match(describeProblems(checkAnswer([multi], { [multi.Prompt]: ['A', 'D'] })), /not among the offered options/);
    assert.match(describeProblems(checkAnswer([multi], { [multi.Prompt]: ['A', 'A'] })), /more than once/);
    assert.match(describeProblems(checkAnswer([multi], { [multi.Prompt]: [] })), /one or more/);
  });

  it('accepts TextOrCall keyed by a listed phone option with Text or Call', () => {
    assert.deepEqual(checkAnswer([textOrCall], { 'xxx-xxx-1234': ['Text'] }), []);
    assert.deepEqual(checkAnswer([textOrCall], { 'xxx-xxx-9876': ['Call'] }), []);
  });

  it('refuses TextOrCall keyed by the prompt, by two options, or with another method', () => {
    assert.match(describeProblems(checkAnswer([textOrCall], { [textOrCall.Prompt]: ['Text'] })), /was not asked/);
    assert.match(describeProblems(checkAnswer([textOrCall], { 'xxx-xxx-1234': ['Text'], 'xxx-xxx-9876': ['Call'] })), /only one phone option/);
    assert.match(describeProblems(checkAnswer([textOrCall], { 'xxx-xxx-1234': ['Email'] })), /"Text"\] or \["Call"\]/);
  });

  it('requires a token code of exactly six digits', () => {
    assert.deepEqual(checkAnswer([token], { [token.Prompt]: ['123456'] }), []);
    assert.match(describeProblems(checkAnswer([token], { [token.Prompt]: ['12345'] })), /6 digits/);
    assert.match(describeProblems(checkAnswer([token], { [token.Prompt]: ['12345a'] })), /6 digits/);
  });

  it('requires VERIFIED for a trusted-device challenge', () => {
    assert.deepEqual(checkAnswer([device], { [device.Prompt]: ['VERIFIED'] }), []);
    assert.match(describeProblems(checkAnswer([device], { [device.Prompt]: ['yes'] })), /VERIFIED/);
  });

  it('requires one of the offered images for ImageSelection', () => {
    assert.deepEqual(checkAnswer([images], { [images.Prompt]: ['aW1hZ2UtMg=='] }), []);
    assert.match(describeProblems(checkAnswer([images], { [images.Prompt]: ['b3RoZXI='] })), /not one of the offered images/);
  });

  it('takes a chosen question and its answer for a question with candidate questions', () => {
    assert.deepEqual(checkAnswer([pickQuestion], { [pickQuestion.Prompt]: ['First car?', 'Civic'] }), []);
    assert.match(describeProblems(checkAnswer([pickQuestion], { [pickQuestion.Prompt]: ['Last car?', 'Civic'] })), /not one of the offered questions/);
    assert.match(describeProblems(checkAnswer([pickQuestion], { [pickQuestion.Prompt]: ['First car?'] })), /two values/);
  });

  it('refuses an answer with no responses at all', () => {
    assert.match(describeProblems(checkAnswer([question('A?')], {})), /no answer given/);
  });
});
