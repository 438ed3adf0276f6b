/** `refresh delete`: removes a login's schedule (runs already started finish; the login stays saved). */
import type { Command } from '../../command.js';
import { EXIT_OK } from '../../report.js';
import { LOGIN_HELP, parseLoginArgs } from '../../login-args.js';

export const deleteSchedule: Command = {
  access: { permission: 'administer', tenant: 'default-customer' },
  audit: { action: 'schedule.change' },
  summary: "delete a login's refresh schedule",
  usage: (program) => `Usage: ${program} refresh delete <loginId> [--customer <id>]

Deletes the login's refresh schedule; runs already started finish and the login stays saved
("forget" deletes the login itself). Deleting a schedule that is not there is not an error.
${LOGIN_HELP}`,

  async run(args, context) {
    const { ref } = parseLoginArgs(args, context);
    const outcome = await (await context.client()).schedules.delete(ref);
    context.io.out(outcome === 'deleted' ? `deleted the refresh schedule of login ${ref.loginId}` : `login ${ref.loginId} had no refresh schedule`);
    return EXIT_OK;
  },
};
