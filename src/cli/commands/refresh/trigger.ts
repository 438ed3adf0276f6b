/** `refresh trigger`: one run now, paused or not (skipped if a run is still going). */
import type { Command } from '../../command.js';
import { EXIT_OK } from '../../report.js';
import { LOGIN_HELP, parseLoginArgs } from '../../login-args.js';

export const trigger: Command = {
  access: { permission: 'administer', tenant: 'default-customer' },
  audit: { action: 'schedule.change' },
  summary: "run a login's scheduled refresh now",
  usage: (program) => `Usage: ${program} refresh trigger <loginId> [--customer <id>]

Starts one run of the login's schedule now, paused or not; skipped when a run is still going.
"refresh latest <loginId>" shows how it ended.
${LOGIN_HELP}`,

  async run(args, context) {
    const { ref } = parseLoginArgs(args, context);
    await (await context.client()).schedules.trigger(ref);
    context.io.out(`triggered a refresh of login ${ref.loginId}; "${context.program} refresh latest ${ref.loginId}" shows how it ends`);
    return EXIT_OK;
  },
};
