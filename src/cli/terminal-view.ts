/**
 * How operators see a connection and how their typed answers become SecurityResponses. Pure
 * functions (no I/O, no clock unless given), shared by the CLI and unit-tested on their own.
 *
 * Answer grammar, one positional answer per challenge, in the order `show` numbers them:
 *
 * | Challenge                          | Answer                        | Example            |
 * |------------------------------------|-------------------------------|--------------------|
 * | QuestionAndAnswer                  | the text                      | "Montreal"         |
 * | QuestionAndAnswer with Iterables   | question number:answer        | 2:Rex              |
 * | MultipleChoice                     | option number (or exact text) | 3                  |
 * | MultipleChoiceMultipleAnswers      | option numbers, comma-separated | 1,4              |
 * | TextOrCall                         | phone number[:text or :call]  | 1:call (Text if omitted) |
 * | WaitUntilEUAccept                  | verified                      | verified           |
 * | ImageSelection                     | image number (1-16)           | 7                  |
 */
import type { SecurityChallenge, SecurityResponses } from '../aggregator/schemas.js';
import { isTokenCodePrompt, TRUSTED_DEVICE_ANSWER } from '../workflows/connection/challenges.js';
import type { ChallengeSet, ConnectionState } from '../contract/connection/connection-definitions.js';
import { formatElapsed } from '../presentation/durations.js';

// Durations are written in src/presentation/durations.ts, which the console's pages import too.
export { formatElapsed };

/** Removes terminal control sequences from service-provided text (a prompt must not move the cursor). */
export function printable(text: string): string {
  return (
    text
      // eslint-disable-next-line no-control-regex -- the escape sequences are what is removed
      .replace(/\u001b\[[0-9;?]*[ -/]*[@-~]/g, '')
      // eslint-disable-next-line no-control-regex -- and the control characters
      .replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, '?')
      .replace(/\n/g, ' ')
  );
}

/** How each challenge type is answered on the command line (shown under the challenge). */
function answerHint(challenge: SecurityChallenge): string {
  const count = challenge.Iterables?.length ?? 0;
  switch (challenge.Type) {
    case 'QuestionAndAnswer':
      if (count > 0) return `answer: the number of the question you choose, a colon, and its answer, e.g. 2:"my answer"`;
      if (isTokenCodePrompt(challenge)) return 'answer: the 6-digit code from the token, e.g. 123456';
      return 'answer: the text (quote it if it has spaces)';
    case 'MultipleChoice':
      return `answer: one option number (1-${count}) or the option's exact text`;
    case 'MultipleChoiceMultipleAnswers':
      return `answer: one or more option numbers separated by commas, e.g. 1,3`;
    case 'TextOrCall':
      return `answer: the number of the phone (1-${count}), then :text or :call (text if omitted), e.g. 1:call`;
    case 'WaitUntilEUAccept':
      return `answer: verified (once the customer approved on the trusted device)`;
    case 'ImageSelection':
      return `answer: the number of the customer's image (1-${count})`;
    default:
      // A type the spec does not name (the institution's own): answered by its prompt as text.
      return `answer: the text the customer gives for this ${printable(challenge.Type)} challenge (quote it if it has spaces)`;
  }
}

interface PresentOptions {
  /** For ImageSelection challenges: challenge index → file paths of its images (same order as Iterables). */
  readonly imagePaths?: ReadonlyMap<number, readonly string[]>;
  /** Reference time for "answer within …" (defaults to none). */
  readonly now?: number;
  /** The command an operator runs to answer, without the answers (e.g. `npm run cli -- answer <id> --set 3`). */
  readonly answerCommand?: string;
}

/** Lines that present one challenge set to an operator, numbered as `answer` expects them. */
export function presentChallengeSet(set: ChallengeSet, options: PresentOptions = {}): string[] {
  const lines: string[] = [];
  const within = options.now === undefined ? '' : ` (${formatElapsed(Date.parse(set.answerBy) - options.now)} left)`;
  const attempt = set.attempt > 1 ? `, attempt ${set.attempt}` : '';
  lines.push(
    `Challenge set ${set.id}${attempt}: ${set.challenges.length} challenge${set.challenges.length === 1 ? '' : 's'}, all answered together; answer by ${set.answerBy}${within}`,
  );
  set.challenges.forEach((challenge, index) => {
    lines.push('');
    lines.push(...presentChallenge(challenge, index, options.imagePaths?.get(index)));
  });
  if (options.answerCommand !== undefined) {
    lines.push('');
    const placeholders = set.challenges.map((_, index) => `<answer ${index + 1}>`).join(' ');
    lines.push(`To answer: ${options.answerCommand} ${placeholders}`);
  }
  return lines;
}

function presentChallenge(challenge: SecurityChallenge, index: number, imagePaths?: readonly string[]): string[] {
  const lines = [`[${index + 1}] ${printable(challenge.Type)}: ${printable(challenge.Prompt)}`];
  const options = challenge.Iterables ?? [];
  switch (challenge.Type) {
    case 'ImageSelection':
      if (imagePaths && imagePaths.length === options.length) imagePaths.forEach((path, i) => lines.push(`    ${pad(i + 1, options.length)}) ${path}`));
      else lines.push(`    ${options.length} images (run show with --images-dir to save them as PNG files)`);
      break;
    case 'WaitUntilEUAccept':
      lines.push('    note: ask the customer to approve this sign-in on their trusted device (bank app); answer only after they did.');
      break;
    case 'TextOrCall':
      options.forEach((option, i) => lines.push(`    ${pad(i + 1, options.length)}) ${printable(option)}`));
      lines.push('    a code is then sent by text message or voice call; a question asking for it follows.');
      break;
    default:
      options.forEach((option, i) => lines.push(`    ${pad(i + 1, options.length)}) ${printable(option)}`));
  }
  lines.push(`    ${answerHint(challenge)}`);
  return lines;
}

function pad(n: number, of: number): string {
  return String(n).padStart(String(of).length, ' ');
}

/** A compact view of the whole state: status, mode, login, polls, pending operation, last rejection, failure. */
export function presentState(workflowId: string, state: ConnectionState, now?: number): string[] {
  const lines: string[] = [];
  const elapsed = now === undefined ? '' : `, running ${formatElapsed(now - Date.parse(state.startedAt))}`;
  lines.push(`Connection ${printable(workflowId)}: ${state.status}${elapsed}`);
  const who = [`mode ${state.mode}`, `customer ${printable(state.customerId)}`];
  if (state.institution) who.push(`institution ${printable(state.institution)}`);
  if (state.loginId) who.push(`login ${printable(state.loginId)}`);
  lines.push(`  ${who.join(', ')}`);
  if (state.priority) {
    const weight = state.priority.fairnessWeight === undefined ? '' : `, tenant weight ${state.priority.fairnessWeight}`;
    lines.push(`  priority ${state.priority.key ?? 3} (1 is served first), fairness key ${printable(state.priority.fairnessKey ?? '(none)')}${weight}`);
  }
  lines.push(`  polls ${state.totalPolls}${state.retrieved.length ? `, retrieved ${state.retrieved.join(', ')}` : ''}`);
  if (state.pending) {
    const next = state.pending.nextPollAt ? `, next poll ${state.pending.nextPollAt}` : '';
    // Polls made by an activity are not seen one by one here (the Web UI's pending activity shows them).
    const polls =
      state.pending.strategy && state.pending.strategy !== 'timer' ? `polled by an activity (${state.pending.strategy})` : `poll ${state.pending.pollCount}`;
    lines.push(`  pending ${state.pending.operation} (${state.pending.code}), ${polls}, gives up at ${state.pending.deadline}${next}`);
  }
  if (state.lastRestart) {
    lines.push(`  new session opened (${state.sessionRestarts}x): ${printable(state.lastRestart.reason)}`);
  }
  if (state.lastRejection) {
    const code = state.lastRejection.serviceCode ? ` [${state.lastRejection.serviceCode}]` : '';
    lines.push(`  last answer rejected by the ${state.lastRejection.source}${code}: ${printable(state.lastRejection.message)}`);
  }
  if (state.failure) {
    const code = state.failure.serviceCode ? ` [${state.failure.serviceCode}]` : '';
    lines.push(`  failed: ${state.failure.type}${code}: ${printable(state.failure.message)}`);
  }
  return lines;
}

/** One line for `watch`: what changed is visible at a glance. */
export function progressLine(state: ConnectionState, now: number): string {
  const parts = [`${formatElapsed(now - Date.parse(state.startedAt)).padStart(7)}`, state.status.padEnd(14), `polls ${state.totalPolls}`];
  if (state.pending) parts.push(`pending ${state.pending.operation} (poll ${state.pending.pollCount})`);
  if (state.challengeSet && state.status === 'AwaitingAnswer')
    parts.push(`challenge set ${state.challengeSet.id}: ${state.challengeSet.challenges.map((c) => c.Type).join(', ')}`);
  if (state.retrieved.length) parts.push(`retrieved ${state.retrieved.join(', ')}`);
  if (state.failure) parts.push(`${state.failure.type}: ${printable(state.failure.message)}`);
  return parts.join('  ');
}

// ---------------------------------------------------------------------------------------------
// Answer parsing

type ParsedAnswer = { readonly ok: true; readonly responses: SecurityResponses } | { readonly ok: false; readonly problems: string[] };

/** Turns one positional answer per challenge (grammar at the top of this file) into SecurityResponses. */
export function parseAnswerTokens(challenges: readonly SecurityChallenge[], tokens: readonly string[]): ParsedAnswer {
  if (tokens.length !== challenges.length) {
    return {
      ok: false,
      problems: [`expected ${challenges.length} answer${challenges.length === 1 ? '' : 's'} (one per challenge, in order), got ${tokens.length}`],
    };
  }
  const responses: SecurityResponses = {};
  const problems: string[] = [];
  challenges.forEach((challenge, index) => {
    const token = tokens[index] ?? '';
    const result = parseOne(challenge, token);
    if (typeof result === 'string') problems.push(`answer ${index + 1} (${challenge.Type} "${shorten(printable(challenge.Prompt))}"): ${result}`);
    else responses[result.key] = result.values;
  });
  return problems.length ? { ok: false, problems } : { ok: true, responses };
}

function parseOne(challenge: SecurityChallenge, token: string): { key: string; values: string[] } | string {
  const options = challenge.Iterables ?? [];
  const key = challenge.Prompt;
  switch (challenge.Type) {
    case 'QuestionAndAnswer': {
      if (options.length === 0) return token.trim() === '' ? 'the answer is empty' : { key, values: [token] };
      const colon = token.indexOf(':');
      if (colon < 0) return `write the question number, a colon, and the answer, e.g. 1:"my answer"`;
      const question = pickOption(options, token.slice(0, colon));
      if (typeof question !== 'string') return question.problem;
      const answer = token.slice(colon + 1);
      return answer.trim() === '' ? 'the answer after the colon is empty' : { key, values: [question, answer] };
    }
    case 'MultipleChoice':
    case 'ImageSelection': {
      const option = pickOption(options, token, challenge.Type === 'MultipleChoice');
      return typeof option === 'string' ? { key, values: [option] } : option.problem;
    }
    case 'MultipleChoiceMultipleAnswers': {
      const exact = options.find((option) => option === token);
      if (exact !== undefined) return { key, values: [exact] };
      const parts = token
        .split(',')
        .map((part) => part.trim())
        .filter((part) => part !== '');
      if (parts.length === 0) return 'give one or more option numbers, e.g. 1,3';
      const values: string[] = [];
      for (const part of parts) {
        const option = pickOption(options, part, false);
        if (typeof option !== 'string') return option.problem;
        if (values.includes(option)) return `option ${part} is listed twice`;
        values.push(option);
      }
      return { key, values };
    }
    case 'TextOrCall': {
      const match = /^(.*?)(?::(text|call))?$/i.exec(token.trim());
      const method = match?.[2]?.toLowerCase() === 'call' ? 'Call' : 'Text';
      const option = pickOption(options, match?.[1] ?? '');
      return typeof option === 'string' ? { key: option, values: [method] } : option.problem;
    }
    case 'WaitUntilEUAccept':
      return token.trim().toUpperCase() === TRUSTED_DEVICE_ANSWER
        ? { key, values: [TRUSTED_DEVICE_ANSWER] }
        : `answer "verified" once the customer approved on the trusted device (got "${shorten(token)}")`;
    default:
      return token.trim() === '' ? 'the answer is empty' : { key, values: [token] };
  }
}

/** An option by 1-based number, or (when allowed) by its exact text, then by its unique case-insensitive text. */
function pickOption(options: readonly string[], token: string, byText = true): string | { problem: string } {
  const trimmed = token.trim();
  if (/^\d+$/.test(trimmed)) {
    const n = Number(trimmed);
    const option = options[n - 1];
    return option !== undefined && n >= 1 ? option : { problem: `${trimmed} is not an option number (1-${options.length})` };
  }
  if (byText) {
    if (options.includes(token)) return token;
    const folded = options.filter((option) => option.toLowerCase() === trimmed.toLowerCase());
    if (folded.length === 1 && folded[0] !== undefined) return folded[0];
  }
  return { problem: `"${shorten(token)}" is not ${byText ? 'an option number or the text of an option' : 'an option number'} (1-${options.length})` };
}

function shorten(text: string): string {
  return text.length > 50 ? `${text.slice(0, 47)}...` : text;
}
