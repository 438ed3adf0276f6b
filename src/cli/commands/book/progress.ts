/** `book progress`: where a refresh is (done, in flight, the window and why, outcomes, estimated end). */
import { parseFlags } from '../../args.js';
import type { Command } from '../../command.js';
import { EXIT_OK } from '../../report.js';
import { refreshIdOf } from './args.js';
import { describeProgress } from './format.js';

export const progress: Command = {
  access: { permission: 'read' },
  summary: "a book refresh's progress: done, in flight, window, outcomes",
  usage: (program) => `Usage: ${program} book progress <refreshId> [--json]

Asks the refresh where it is: logins done of the book's total, connections in flight, the window's
size and the reason for its last change, outcomes so far (refreshed, needs end user, failed by type,
forgotten, malformed), time paused and time spent draining pages, and an estimated end. Works while
it runs and after it ended.
  --json                print JSON`,

  async run(args, context) {
    const { io, client } = context;
    const { values, positionals } = parseFlags({ args: [...args], options: { json: { type: 'boolean' } }, allowPositionals: true });
    const refreshId = refreshIdOf(positionals);
    const found = await (await client()).books.progress(refreshId);
    if (values.json) io.out(JSON.stringify(found, null, 2));
    else for (const line of describeProgress(found)) io.out(line);
    return EXIT_OK;
  },
};
