/** `refresh list`: a tenant's refresh schedules, each with its next run and how its latest run ended. */
import { noPositionals, parseFlags } from '../../args.js';
import type { Command } from '../../command.js';
import { EXIT_OK, formatTable } from '../../report.js';
import { describeCadence, describeOutcome } from './format.js';

export const list: Command = {
  access: { permission: 'read', tenant: 'default-customer' },
  summary: "a tenant's refresh schedules, next runs and latest outcomes",
  usage: (program) => `Usage: ${program} refresh list [--customer <id>] [--json]

Lists the tenant's refresh schedules: login, cadence, paused or not, next run, and how the login's
latest connection (scheduled or not) ended.
  --customer <id>       tenant (default AGGREGATOR_CUSTOMER_ID)
  --json                print JSON (each schedule with its "latest") instead of a table`,

  async run(args, context) {
    const { io, client } = context;
    const { values, positionals } = parseFlags({
      args: [...args],
      options: { customer: { type: 'string' }, json: { type: 'boolean' } },
      allowPositionals: true,
    });
    noPositionals(positionals);
    const customerId = values.customer ?? context.defaultCustomerId;
    const { schedules } = await client();
    const listed = await schedules.list({ customerId });
    // One visibility query (and result read) per schedule: fine for an operator's listing.
    const rows = await Promise.all(listed.map(async (schedule) => ({ ...schedule, latest: await schedules.latestRefresh(schedule) })));
    if (values.json) {
      io.out(JSON.stringify(rows, null, 2));
      return EXIT_OK;
    }
    if (rows.length === 0) {
      io.out(`no refresh schedules for ${customerId}`);
      return EXIT_OK;
    }
    const table = rows.map((row) => [
      row.loginId,
      `${row.session} ${describeCadence(row.cadence)}`,
      row.paused ? 'yes' : 'no',
      row.paused ? '-' : (row.nextRunsAt[0] ?? '-'),
      row.latest ? `${describeOutcome(row.latest)} (${row.latest.startedAt})` : '-',
    ]);
    for (const line of formatTable(['LOGIN', 'CADENCE', 'PAUSED', 'NEXT RUN', 'LAST RUN'], table)) io.out(line);
    return EXIT_OK;
  },
};
