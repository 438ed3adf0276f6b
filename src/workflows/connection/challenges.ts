/**
 * Pure checks of an operator's answers against the challenges the service asked, one rule per
 * challenge type of the spec, and one for a type the spec does not name (institutions add them: an
 * SMS code, a plain question): answered by its prompt with one free-text value. Used by the update
 * validator (so a bad answer never touches history or the service) and by the CLI and console (so
 * it is refused before it is even sent).
 */
import { isKnownChallengeType } from '../../aggregator/challenge-types.js';
import type { SecurityChallenge, SecurityResponses } from '../../aggregator/schemas.js';

/**
 * Challenges only the end user can pass at the moment they are asked: a two-step code sent to their
 * phone (TextOrCall, then the code) and a sign-in accepted on their trusted device. A login that asks
 * one cannot be refreshed unattended (the spec: two-step accounts cannot be refreshed automatically).
 */
export const END_USER_CHALLENGE_TYPES: readonly string[] = ['TextOrCall', 'WaitUntilEUAccept'];

/** The first challenge of a set that needs the end user in person, if any. */
export function endUserChallengeOf(challenges: readonly SecurityChallenge[]): SecurityChallenge['Type'] | undefined {
  return challenges.find((challenge) => END_USER_CHALLENGE_TYPES.includes(challenge.Type))?.Type;
}

/** Why a login flagged with this challenge type cannot be refreshed unattended, in words. */
export function describeEndUserChallenge(type: string): string {
  switch (type) {
    case 'TextOrCall':
      return "two-step verification (a code sent to the end user's phone)";
    case 'WaitUntilEUAccept':
      return 'a trusted device (the end user must accept the sign-in)';
    default:
      return `a ${type} challenge met by an unattended refresh`;
  }
}

export interface AnswerProblem {
  /** The prompt (or response key) the problem is about; absent for problems of the whole answer. */
  readonly prompt?: string | undefined;
  readonly message: string;
}

/**
 * Size limits of one answer set, checked before anything else (by the client, CLI, console and the
 * update validator), so an oversized answer is refused before it is recorded or sent. An
 * ImageSelection answer is one ~4,000-character base64 image: the per-answer limit leaves 4x room.
 */
export const ANSWER_LIMITS = {
  /** Characters in one answer value. */
  answerChars: 16_384,
  /** Characters in one prompt key (the prompt text, or a TextOrCall option). */
  promptChars: 1_024,
  /** Prompt keys in one answer set. */
  prompts: 32,
  /** Values answering one prompt. */
  answersPerPrompt: 32,
  /** Characters of every key and value of the set together. */
  totalChars: 65_536,
} as const;

export const TEXT_OR_CALL_METHODS = ['Text', 'Call'] as const;
export const TRUSTED_DEVICE_ANSWER = 'VERIFIED';

/** The SecurID-style token prompt: the spec says its code is always 6 digits. */
export function isTokenCodePrompt(challenge: SecurityChallenge): boolean {
  return challenge.Type === 'QuestionAndAnswer' && !challenge.Iterables?.length && /\b(token|securid)\b/i.test(challenge.Prompt);
}

/** The key a challenge is answered under: its prompt, except TextOrCall, keyed by the chosen option. */
function keysFor(challenge: SecurityChallenge): string[] {
  return challenge.Type === 'TextOrCall' ? (challenge.Iterables ?? []) : [challenge.Prompt];
}

/** Problems of size only, independent of the challenges; messages name the limit. */
export function checkAnswerSize(responses: SecurityResponses): AnswerProblem[] {
  const problems: AnswerProblem[] = [];
  const entries = Object.entries(responses);
  if (entries.length > ANSWER_LIMITS.prompts) problems.push({ message: `answers ${entries.length} prompts; the limit is ${ANSWER_LIMITS.prompts} prompts` });
  let total = 0;
  for (const [prompt, answers] of entries) {
    total += prompt.length;
    if (prompt.length > ANSWER_LIMITS.promptChars) {
      problems.push({ prompt, message: `the prompt key is ${prompt.length} characters; the limit is ${ANSWER_LIMITS.promptChars}` });
    }
    if (answers.length > ANSWER_LIMITS.answersPerPrompt) {
      problems.push({ prompt, message: `has ${answers.length} answers; the limit is ${ANSWER_LIMITS.answersPerPrompt} answers a prompt` });
    }
    for (const answer of answers) {
      total += answer.length;
      if (answer.length > ANSWER_LIMITS.answerChars) {
        problems.push({ prompt, message: `an answer is ${answer.length} characters; the limit is ${ANSWER_LIMITS.answerChars} characters an answer` });
      }
    }
  }
  if (total > ANSWER_LIMITS.totalChars)
    problems.push({ message: `the answer set is ${total} characters; the limit is ${ANSWER_LIMITS.totalChars} characters in all` });
  return problems;
}

export function checkAnswer(challenges: readonly SecurityChallenge[], responses: SecurityResponses): AnswerProblem[] {
  // Oversized answers are refused on size alone: nothing else is worth checking in them.
  const tooLarge = checkAnswerSize(responses);
  if (tooLarge.length) return tooLarge;
  const problems: AnswerProblem[] = [];
  const keys = Object.keys(responses);
  if (keys.length === 0) return [{ message: 'no answer given: every prompt must be answered at once' }];

  const expected = new Set(challenges.flatMap(keysFor));
  for (const key of keys) {
    if (!expected.has(key)) problems.push({ prompt: key, message: `"${truncate(key)}" was not asked (keys must be the exact prompt text)` });
  }

  for (const challenge of challenges) {
    if (challenge.Type === 'TextOrCall') {
      problems.push(...checkTextOrCall(challenge, responses));
      continue;
    }
    const answers = responses[challenge.Prompt];
    if (answers === undefined) {
      problems.push({ prompt: challenge.Prompt, message: 'is not answered (all prompts must be answered in one call)' });
      continue;
    }
    problems.push(...checkOne(challenge, answers).map((message) => ({ prompt: challenge.Prompt, message })));
  }
  return problems;
}

/** A challenge of a type the spec does not name is answered as text, exactly one non-empty value. */
export function isFreeTextChallenge(challenge: SecurityChallenge): boolean {
  return !isKnownChallengeType(challenge.Type);
}

function checkOne(challenge: SecurityChallenge, answers: readonly string[]): string[] {
  const options = challenge.Iterables ?? [];
  const type = challenge.Type;
  if (!isKnownChallengeType(type)) {
    // Its rules are the institution's: one value, as the end user would type it (its Iterables, if
    // any, are shown to the operator but not enforced: what they mean is not known here).
    if (answers.length !== 1) return [`a ${truncate(type)} challenge needs exactly one answer`];
    return isBlank(answers[0]) ? ['the answer is empty'] : [];
  }
  switch (type) {
    case 'QuestionAndAnswer':
      if (options.length > 0) {
        // Our documented format for "choose a question, then answer it": [chosenQuestion, answer].
        if (answers.length !== 2) return ['needs two values: the chosen question and its answer'];
        if (!options.includes(answers[0] ?? '')) return ['the chosen question is not one of the offered questions'];
        return isBlank(answers[1]) ? ['the answer to the chosen question is empty'] : [];
      }
      if (answers.length !== 1) return ['needs exactly one answer'];
      if (isBlank(answers[0])) return ['the answer is empty'];
      if (isTokenCodePrompt(challenge) && !/^\d{6}$/.test(answers[0] ?? '')) return ['a token code is exactly 6 digits'];
      return [];
    case 'MultipleChoice':
      if (answers.length !== 1) return [`needs exactly one of the ${options.length} options`];
      return options.includes(answers[0] ?? '') ? [] : ['the answer is not one of the offered options'];
    case 'MultipleChoiceMultipleAnswers': {
      if (answers.length === 0) return ['needs one or more of the offered options'];
      if (new Set(answers).size !== answers.length) return ['lists an option more than once'];
      const unknown = answers.filter((answer) => !options.includes(answer));
      return unknown.length ? [`${unknown.length} answer(s) are not among the offered options`] : [];
    }
    case 'ImageSelection':
      if (answers.length !== 1) return ['needs exactly one selected image'];
      return options.includes(answers[0] ?? '') ? [] : ['the selected image is not one of the offered images'];
    case 'WaitUntilEUAccept':
      return answers.length === 1 && answers[0] === TRUSTED_DEVICE_ANSWER
        ? []
        : [`is answered with ["${TRUSTED_DEVICE_ANSWER}"] once the user accepted on the trusted device`];
    case 'TextOrCall':
      return []; // handled by checkTextOrCall: keyed by option, not by prompt
  }
}

function checkTextOrCall(challenge: SecurityChallenge, responses: SecurityResponses): AnswerProblem[] {
  const chosen = (challenge.Iterables ?? []).filter((option) => option in responses);
  if (chosen.length !== 1) {
    return [{ prompt: challenge.Prompt, message: chosen.length === 0 ? 'choose one of the offered phone options' : 'choose only one phone option' }];
  }
  const option = chosen[0] as string;
  const method = responses[option];
  if (method?.length !== 1 || !TEXT_OR_CALL_METHODS.includes(method[0] as 'Text')) {
    return [{ prompt: option, message: 'is answered with ["Text"] or ["Call"]' }];
  }
  return [];
}

/** One line an operator can act on: `"What city…": needs exactly one answer; …`. */
export function describeProblems(problems: readonly AnswerProblem[]): string {
  return problems.map((problem) => (problem.prompt === undefined ? problem.message : `"${truncate(problem.prompt)}": ${problem.message}`)).join('; ');
}

function isBlank(value: string | undefined): boolean {
  return value === undefined || value.trim() === '';
}

/** Image prompts are ~4,000 characters of base64; keep messages readable. */
function truncate(text: string): string {
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}
