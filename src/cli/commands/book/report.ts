/** `book report`: an ended refresh's summary, or one page of its per-login outcomes. */
import { parseFlags } from '../../args.js';
import type { Command } from '../../command.js';
import { EXIT_OK } from '../../report.js';
import { refreshIdOf, wholeNumber } from './args.js';
import { describeReport, outcomeTable } from './format.js';

export const report: Command = {
  access: { permission: 'read' },
  summary: "an ended book refresh's report, or one page of its outcomes",
  usage: (program) => `Usage: ${program} book report <refreshId> [--page <n>] [--json]

The night's summary of a refresh that ended: outcomes by kind, failures by type, the window and its
last changes, time paused and draining, how many pages. With --page, that page's per-login outcomes
as a table (login, outcome, failure type or problem, time, connection). A refresh still running has
no report yet (exit 1): "book progress" says how far it is.
  --page <n>            one page of per-login outcomes (from 1)
  --json                print JSON`,

  async run(args, context) {
    const { io, client } = context;
    const { values, positionals } = parseFlags({ args: [...args], options: { page: { type: 'string' }, json: { type: 'boolean' } }, allowPositionals: true });
    const refreshId = refreshIdOf(positionals);
    const page = wholeNumber(values.page, '--page', { min: 1, max: Number.MAX_SAFE_INTEGER });
    const { books } = await client();
    if (page !== undefined) {
      const found = await books.reportPage(refreshId, page);
      if (values.json) io.out(JSON.stringify(found, null, 2));
      else {
        io.out(`page ${found.page} of ${found.refreshWorkflowId}: ${found.outcomes.length} login${found.outcomes.length === 1 ? '' : 's'}`);
        for (const line of outcomeTable(found.outcomes)) io.out(line);
      }
      return EXIT_OK;
    }
    const found = await books.report(refreshId);
    if (values.json) io.out(JSON.stringify(found, null, 2));
    else for (const line of describeReport(found)) io.out(line);
    return EXIT_OK;
  },
};
