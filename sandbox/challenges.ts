/**
 * The challenge state machine's building blocks: what a challenge asks (as the wire shows it), what
 * answers it, and the check of a SecurityResponses object against one step. Pure functions, so the
 * scenario catalogue can print the exact correct answer for every step.
 */
import type { SecurityResponses } from '../src/aggregator/schemas.js';

/**
 * Challenge types outside the six the spec names, as real institutions add them. The sandbox's own
 * literals (the wire type is any string): a union of literals keeps ChallengeSpec narrowable by Type.
 */
export const UNLISTED_CHALLENGE_TYPES = ['SmsCode', 'PlainQuestion'] as const;
export type UnlistedChallengeType = (typeof UNLISTED_CHALLENGE_TYPES)[number];

/** A challenge as the 203 carries it; the type is any string, as the service's is (a type alias, so it fits the schema's open record). */
export type WireChallenge = { Type: string; Prompt: string; Iterables?: string[] };

/** One challenge with its rule for a correct answer. */
export type ChallengeSpec =
  /** Free-text question; the answer is compared trimmed and case-insensitively (keys never are). */
  | { readonly Type: 'QuestionAndAnswer'; readonly Prompt: string; readonly answer: string }
  /** Pick a new question from Iterables and answer it: value `[chosenQuestion, answer]` (our documented format). */
  | { readonly Type: 'QuestionAndAnswer'; readonly Prompt: string; readonly Iterables: readonly string[]; readonly chooseQuestion: true }
  /** Value `[image]`: exactly the base64 text of the correct image. */
  | { readonly Type: 'ImageSelection'; readonly Prompt: string; readonly Iterables: readonly string[]; readonly answer: string }
  /** Exactly one listed option, which must be the correct one. */
  | { readonly Type: 'MultipleChoice'; readonly Prompt: string; readonly Iterables: readonly string[]; readonly answer: string }
  /** One or more listed options; the set must equal the correct set (order free). */
  | { readonly Type: 'MultipleChoiceMultipleAnswers'; readonly Prompt: string; readonly Iterables: readonly string[]; readonly answers: readonly string[] }
  /** Keyed by one Iterables item (not by the prompt); value `['Text']` or `['Call']`. */
  | { readonly Type: 'TextOrCall'; readonly Prompt: string; readonly Iterables: readonly string[] }
  /** Value `['VERIFIED']`, sent once the user accepted on the trusted device. */
  | { readonly Type: 'WaitUntilEUAccept'; readonly Prompt: string }
  /** A type the spec does not name: answered by its prompt with free text, compared as QuestionAndAnswer is. */
  | { readonly Type: UnlistedChallengeType; readonly Prompt: string; readonly answer: string };

/** One round trip: the challenges returned together in one HTTP 203. */
export type ChallengeStep = readonly ChallengeSpec[];

/** What the wire shows of a challenge (answers stripped). */
export function publicChallenge(spec: ChallengeSpec): WireChallenge {
  return 'Iterables' in spec ? { Type: spec.Type, Prompt: spec.Prompt, Iterables: [...spec.Iterables] } : { Type: spec.Type, Prompt: spec.Prompt };
}

/** The exact SecurityResponses that answer a step correctly (documented in the scenario list). */
export function correctResponses(step: ChallengeStep): SecurityResponses {
  const out: SecurityResponses = {};
  for (const spec of step) {
    switch (spec.Type) {
      case 'QuestionAndAnswer':
        out[spec.Prompt] = 'chooseQuestion' in spec ? [spec.Iterables[0] ?? '', 'sandbox'] : [spec.answer];
        break;
      case 'ImageSelection':
      case 'MultipleChoice':
      case 'SmsCode':
      case 'PlainQuestion':
        out[spec.Prompt] = [spec.answer];
        break;
      case 'MultipleChoiceMultipleAnswers':
        out[spec.Prompt] = [...spec.answers];
        break;
      case 'TextOrCall':
        out[spec.Iterables[0] ?? spec.Prompt] = ['Text'];
        break;
      case 'WaitUntilEUAccept':
        out[spec.Prompt] = ['VERIFIED'];
        break;
    }
  }
  return out;
}

export type AnswerVerdict =
  | { readonly ok: true }
  | { readonly ok: false; readonly code: 'UNKNOWN_CHALLENGE_KEY' | 'SECURITYRESPONSES_INCOMPLETE' | 'INVALID_SECURITY_RESPONSE'; readonly message: string };

/** The keys that answer a challenge: its prompt, or for TextOrCall any of its Iterables. */
function keysOf(spec: ChallengeSpec): readonly string[] {
  return spec.Type === 'TextOrCall' ? spec.Iterables : [spec.Prompt];
}

/**
 * Checks responses against a step. Order of verdicts: a key that was not asked, then a challenge
 * left unanswered, then a wrong answer. Keys are compared exactly as sent (never case-folded).
 */
export function checkResponses(step: ChallengeStep, responses: SecurityResponses): AnswerVerdict {
  const asked = new Set(step.flatMap(keysOf));
  for (const key of Object.keys(responses)) {
    if (!asked.has(key)) return { ok: false, code: 'UNKNOWN_CHALLENGE_KEY', message: `The key "${key}" does not match any pending challenge prompt` };
  }
  for (const spec of step) {
    const answered = keysOf(spec).filter((key) => Object.hasOwn(responses, key));
    if (answered.length === 0) return { ok: false, code: 'SECURITYRESPONSES_INCOMPLETE', message: `No answer for the challenge "${spec.Prompt}"` };
    if (answered.length > 1) return { ok: false, code: 'INVALID_SECURITY_RESPONSE', message: `Choose only one option for "${spec.Prompt}"` };
    const key = answered[0] ?? '';
    if (!isCorrect(spec, key, responses[key] ?? [])) {
      return { ok: false, code: 'INVALID_SECURITY_RESPONSE', message: `The answer to "${spec.Prompt}" is not correct` };
    }
  }
  return { ok: true };
}

const normalise = (text: string) => text.trim().toLowerCase();

function isCorrect(spec: ChallengeSpec, _key: string, values: readonly string[]): boolean {
  switch (spec.Type) {
    case 'QuestionAndAnswer':
      if ('chooseQuestion' in spec) {
        return values.length === 2 && spec.Iterables.includes(values[0] ?? '') && (values[1] ?? '').trim().length > 0;
      }
      return values.length === 1 && normalise(values[0] ?? '') === normalise(spec.answer);
    case 'SmsCode':
    case 'PlainQuestion':
      return values.length === 1 && normalise(values[0] ?? '') === normalise(spec.answer);
    case 'ImageSelection':
    case 'MultipleChoice':
      return values.length === 1 && values[0] === spec.answer;
    case 'MultipleChoiceMultipleAnswers':
      return values.length === spec.answers.length && new Set(values).size === values.length && values.every((value) => spec.answers.includes(value));
    case 'TextOrCall':
      return values.length === 1 && (values[0] === 'Text' || values[0] === 'Call');
    case 'WaitUntilEUAccept':
      return values.length === 1 && values[0] === 'VERIFIED';
  }
}
