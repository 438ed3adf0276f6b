/**
 * The six challenge types the spec names, each with its own answer rule (workflows/challenges.ts).
 * Any other type the service sends is shown as it came and answered by its prompt with free text.
 * Import-free plain data, so the workflow bundle carries it without zod.
 */
export const KNOWN_CHALLENGE_TYPES = [
  'QuestionAndAnswer',
  'ImageSelection',
  'MultipleChoice',
  'MultipleChoiceMultipleAnswers',
  'TextOrCall',
  'WaitUntilEUAccept',
] as const;
export type KnownChallengeType = (typeof KNOWN_CHALLENGE_TYPES)[number];

export function isKnownChallengeType(type: string): type is KnownChallengeType {
  return (KNOWN_CHALLENGE_TYPES as readonly string[]).includes(type);
}
