/** `refresh pause`: stops a login's scheduled runs until `refresh resume` (a run already going finishes). */
import type { Command } from '../../command.js';
import { EXIT_OK } from '../../report.js';
import { LOGIN_HELP, parseLoginArgs } from '../../login-args.js';

export const pause: Command = {
  access: { permission: 'administer', tenant: 'default-customer' },
  audit: { action: 'schedule.change' },
  summary: "pause a login's refresh schedule",
  usage: (program) => `Usage: ${program} refresh pause <loginId> [--customer <id>] [--note <text>]

Stops the login's scheduled runs until resumed (a run already going finishes).
${LOGIN_HELP}
  --note <text>         why (shown in the Web UI)`,

  async run(args, context) {
    const { ref, note } = parseLoginArgs(args, context, { note: true });
    await (await context.client()).schedules.pause(ref, note);
    context.io.out(`paused the refresh schedule of login ${ref.loginId}`);
    return EXIT_OK;
  },
};
