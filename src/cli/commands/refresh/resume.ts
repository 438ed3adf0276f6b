/** `refresh resume`: unpauses a login's schedule; runs follow its cadence again. */
import type { Command } from '../../command.js';
import { EXIT_OK } from '../../report.js';
import { LOGIN_HELP, parseLoginArgs } from '../../login-args.js';

export const resume: Command = {
  access: { permission: 'administer', tenant: 'default-customer' },
  audit: { action: 'schedule.change' },
  summary: "resume a login's paused refresh schedule",
  usage: (program) => `Usage: ${program} refresh resume <loginId> [--customer <id>] [--note <text>]

Unpauses the login's schedule: runs follow its cadence again.
${LOGIN_HELP}
  --note <text>         why (shown in the Web UI)`,

  async run(args, context) {
    const { ref, note } = parseLoginArgs(args, context, { note: true });
    await (await context.client()).schedules.unpause(ref, note);
    context.io.out(`resumed the refresh schedule of login ${ref.loginId}`);
    return EXIT_OK;
  },
};
