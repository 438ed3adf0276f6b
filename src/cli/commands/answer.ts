/**
 * `answer`: answers a connection's current challenge set, by the numbers "show" prints or as raw
 * --prompt/--value pairs. The answer is checked against the challenges before it is sent.
 */
import type { SecurityResponses } from '../../aggregator/schemas.js';
import { checkAnswer, describeProblems } from '../../workflows/connection/challenges.js';
import type { AnswerOutcome } from '../../contract/connection/connection-definitions.js';
import { AnswerRejectedError } from '../../client/errors.js';
import { parseAnswerTokens, presentChallengeSet, printable } from '../terminal-view.js';
import { parseFlags, UsageError } from '../args.js';
import type { CliIo, Command } from '../command.js';
import { EXIT_FAILED, EXIT_OK } from '../report.js';

export const answer: Command = {
  access: { permission: 'answer' },
  audit: { action: 'answer' },
  summary: "answer a connection's current challenge set",
  usage: (program) => `Usage: ${program} answer <workflowId> [--set <challengeSetId>] [--dry-run] <answer>...
       ${program} answer <workflowId> [--set <challengeSetId>] --prompt <text> --value <answer> [--value <answer>]...

Answers the current challenge set: one <answer> per challenge, in the order "show" numbers them.
  QuestionAndAnswer                  the text                         "Montreal"
  QuestionAndAnswer (choose question) question number:answer          2:Rex
  MultipleChoice                     option number or exact text      3
  MultipleChoiceMultipleAnswers      option numbers, comma-separated  1,4
  TextOrCall                         phone number[:text|:call]        1:call  (text if omitted)
  WaitUntilEUAccept                  verified                         verified
  ImageSelection                     image number                     7
Or give raw SecurityResponses: each --prompt (exact prompt text; for TextOrCall the phone option)
followed by its --value(s). Put "--" before answers that begin with "-".

The answer is checked before it is sent (and again by the workflow); a refused answer names the
problem and exits 1 without reaching the service. Exit 1 also when the service rejects it.
  --set <id>    the challenge set you are answering (from "show"): refused if it changed since
  --dry-run     check the answer and print the SecurityResponses it becomes, without sending`,

  async run(args, { io, program, client }) {
    const { values, positionals, tokens } = parseFlags({
      args: [...args],
      options: {
        set: { type: 'string' },
        prompt: { type: 'string', multiple: true },
        value: { type: 'string', multiple: true },
        'dry-run': { type: 'boolean' },
      },
      allowPositionals: true,
      tokens: true,
    });
    const [workflowId, ...answerTokens] = positionals;
    if (workflowId === undefined) throw new UsageError('missing <workflowId>');
    const raw = (values.prompt?.length ?? 0) > 0 || (values.value?.length ?? 0) > 0;
    if (raw && answerTokens.length > 0) throw new UsageError('give either positional answers or --prompt/--value pairs, not both');
    if (!raw && answerTokens.length === 0) throw new UsageError('missing answers: one per challenge (see "show"), or --prompt/--value pairs');
    const responses = raw ? responsesFromPairs(tokens) : undefined;

    const connections = await client();
    const state = await connections.getState(workflowId);
    const set = state.challengeSet;
    if (state.status !== 'AwaitingAnswer' || set === undefined) {
      throw new AnswerRejectedError(workflowId, 'client', `the connection is not awaiting an answer (status ${state.status})`, values.set);
    }
    if (values.set !== undefined && values.set !== set.id) {
      throw new AnswerRejectedError(
        workflowId,
        'client',
        `challenge set ${values.set} is no longer current (now ${set.id}); run "show" and answer the new challenges`,
        values.set,
      );
    }
    let chosen: SecurityResponses;
    if (responses) chosen = responses;
    else {
      const parsed = parseAnswerTokens(set.challenges, answerTokens);
      if (!parsed.ok) throw new AnswerRejectedError(workflowId, 'client', parsed.problems.join('; '), set.id);
      chosen = parsed.responses;
    }
    if (values['dry-run']) {
      io.out(`would answer challenge set ${set.id} with:`);
      io.out(
        JSON.stringify(
          chosen,
          (_key, value: unknown) => (typeof value === 'string' && value.length > 80 ? `${value.slice(0, 40)}...(${value.length} chars)` : value),
          2,
        ),
      );
    }
    const problems = checkAnswer(set.challenges, chosen);
    if (problems.length) throw new AnswerRejectedError(workflowId, 'client', describeProblems(problems), set.id);
    if (values['dry-run']) {
      io.out('the answer fits the challenges (not sent: --dry-run)');
      return EXIT_OK;
    }
    // Checked above against the state just read: the client need not query and check it again.
    const outcome = await connections.answer(workflowId, { challengeSetId: set.id, responses: chosen }, { checkLocally: false });
    return printOutcome(io, program, workflowId, outcome);
  },
};

/** `--prompt A --value 1 --value 2 --prompt B --value 3` → { A: ['1','2'], B: ['3'] } (order of the command line). */
export function responsesFromPairs(tokens: ReadonlyArray<{ kind: string; name?: string; value?: string | undefined }>): SecurityResponses {
  const responses: SecurityResponses = {};
  let current: string | undefined;
  for (const token of tokens) {
    if (token.kind !== 'option') continue;
    if (token.name === 'prompt') {
      if (token.value === undefined || token.value === '') throw new UsageError('--prompt needs the exact prompt text');
      if (Object.hasOwn(responses, token.value)) throw new UsageError(`--prompt "${token.value}" is given twice`);
      current = token.value;
      responses[current] = [];
    } else if (token.name === 'value') {
      if (current === undefined) throw new UsageError('--value must follow the --prompt it answers');
      responses[current]?.push(token.value ?? '');
    }
  }
  for (const [prompt, answers] of Object.entries(responses)) {
    if (answers.length === 0) throw new UsageError(`--prompt "${prompt}" has no --value`);
  }
  return responses;
}

function printOutcome(io: CliIo, program: string, workflowId: string, outcome: AnswerOutcome): number {
  switch (outcome.outcome) {
    case 'accepted':
      io.out(`answer accepted; the connection is now ${outcome.status}`);
      if (outcome.nextChallengeSet) {
        io.out('');
        io.out('The service asks more:');
        for (const line of presentChallengeSet(outcome.nextChallengeSet, {
          now: io.now(),
          answerCommand: `${program} answer ${workflowId} --set ${outcome.nextChallengeSet.id}`,
        }))
          io.out(line);
        if (outcome.nextChallengeSet.challenges.some((c) => c.Type === 'ImageSelection')) io.out(`(run "show ${workflowId}" to save the images)`);
      }
      return EXIT_OK;
    case 'rejected':
      io.err(`the service rejected the answer${outcome.serviceCode ? ` [${outcome.serviceCode}]` : ''}: ${printable(outcome.message)}`);
      if (outcome.nextChallengeSet) io.err(`the same challenges are presented again as set ${outcome.nextChallengeSet.id}; run "show ${workflowId}"`);
      return EXIT_FAILED;
    case 'restarted':
      // The answer may or may not have reached the service: it was not sent again.
      io.err(`the service's verdict on the answer is unknown (${printable(outcome.reason)}); a new session was opened`);
      if (outcome.nextChallengeSet)
        io.err(`its challenges are presented as set ${outcome.nextChallengeSet.id}: ask the end user again and run "show ${workflowId}"`);
      else io.err(`it opened without challenges; the connection is now ${outcome.status}`);
      return outcome.nextChallengeSet ? EXIT_FAILED : EXIT_OK;
    case 'ended':
      if (outcome.status === 'Completed') {
        io.out('the connection completed');
        return EXIT_OK;
      }
      io.err(`the connection ended: ${outcome.status}${outcome.failure ? ` (${outcome.failure.type}: ${printable(outcome.failure.message)})` : ''}`);
      return EXIT_FAILED;
  }
}
