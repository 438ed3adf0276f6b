/** `show`: one connection's state and, when it awaits an answer, its challenges numbered for answering. */
import { printable } from '../terminal-view.js';
import { presentState } from '../terminal-view.js';
import { onePositional, parseFlags } from '../args.js';
import { printChallengeSet } from '../challenge-output.js';
import type { Command } from '../command.js';
import { EXIT_OK } from '../report.js';

export const show: Command = {
  access: { permission: 'read' },
  summary: "one connection's state and its challenges, numbered for answering",
  usage: (program) => `Usage: ${program} show <workflowId> [--images-dir <dir>] [--json]

Shows the connection's status (and what a held call waits for: the fleet's request budget, or its tenant paused by the service) and, when it awaits an answer, each challenge numbered as "answer"
expects: options numbered for MultipleChoice, MultipleChoiceMultipleAnswers and questions to choose,
phone options for TextOrCall, a note for trusted-device approval, and for ImageSelection the 16
images saved as PNG files (numbered 01-16) whose paths are printed.
  --images-dir <dir>    where to save ImageSelection images (default: a new temporary directory)
  --json                print the raw state as JSON`,

  async run(args, { io, program, client }) {
    const { values, positionals } = parseFlags({
      args: [...args],
      options: { 'images-dir': { type: 'string' }, json: { type: 'boolean' } },
      allowPositionals: true,
    });
    const workflowId = onePositional(positionals, '<workflowId>');
    const state = await (await client()).getState(workflowId);
    if (values.json) {
      io.out(JSON.stringify(state, null, 2));
      return EXIT_OK;
    }
    for (const line of presentState(workflowId, state, io.now())) io.out(line);
    // A call held by the fleet's request budget or a paused tenant: a wait, never a failure.
    if (state.status === 'Authorizing' || state.status === 'Retrieving') {
      const wait = await (await client()).budgetWait(workflowId, state.customerId);
      if (wait) io.out(`  waiting since ${wait.since}: ${printable(wait.call)} ${printable(wait.reason)}`);
    }
    if (state.status === 'AwaitingAnswer' && state.challengeSet) {
      io.out('');
      await printChallengeSet(io, program, workflowId, state.challengeSet, values['images-dir']);
    }
    return EXIT_OK;
  },
};
