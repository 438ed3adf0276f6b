/** `refresh latest`: the login's most recent connection (scheduled run or not) and how it ended. */
import { printable } from '../../terminal-view.js';
import type { Command } from '../../command.js';
import { EXIT_OK } from '../../report.js';
import { describeOutcome } from './format.js';
import { LOGIN_HELP, parseLoginArgs } from '../../login-args.js';

export const latest: Command = {
  access: { permission: 'read', tenant: 'default-customer' },
  summary: "a login's latest refresh and how it ended",
  usage: (program) => `Usage: ${program} refresh latest <loginId> [--customer <id>] [--json]

Shows the login's most recent connection (a scheduled run or any other, found by LoginId in
visibility, which may lag a second behind): what started it, and its outcome or failure type.
${LOGIN_HELP}
  --json                print JSON (with the result when it completed)`,

  async run(args, context) {
    const { io, client } = context;
    const { ref, json } = parseLoginArgs(args, context, { json: true });
    const { loginId } = ref;
    const found = await (await client()).schedules.latestRefresh(ref);
    if (json) {
      io.out(JSON.stringify(found ?? null, null, 2));
      return EXIT_OK;
    }
    if (!found) {
      io.out(`login ${loginId} has no connection on record`);
      return EXIT_OK;
    }
    io.out(`${found.workflowId} (${found.trigger === 'schedule' ? 'scheduled run' : 'started by the pipeline'}), started ${found.startedAt}`);
    io.out(`outcome: ${describeOutcome(found)}`);
    if (found.outcome.kind === 'failed') io.out(`reason: ${printable(found.outcome.reason)}`);
    return EXIT_OK;
  },
};
