/**
 * `refresh schedule`: schedules (or replaces) the unattended refresh of a saved login. The request is
 * checked here first, so a bad cadence is a usage error naming the flag, not a Temporal call.
 */
import type { z } from 'zod';
import { RefreshNotUnattendedError } from '../../../client/errors.js';
import { printable } from '../../terminal-view.js';
import { RefreshScheduleInput, type RefreshScheduleArgs } from '../../../client/refresh-schedule-input.js';
import { onePositional, parseFlags, UsageError } from '../../args.js';
import type { Command } from '../../command.js';
import { PRODUCT_OPTIONS, PRODUCTS_HELP, productsFrom } from '../../products.js';
import { EXIT_FAILED, EXIT_OK } from '../../report.js';
import { describeCadence } from './format.js';

/** The flag (or argument) each field of the request comes from, for usage errors. */
const FLAG_OF: Readonly<Record<string, string>> = {
  loginId: '<loginId>',
  customerId: '--customer',
  session: '--session',
  note: '--note',
  'cadence.every': '--every',
  'cadence.at': '--daily',
  'cadence.timeZone': '--time-zone',
  'cadence.jitter': '--jitter',
};

export const schedule: Command = {
  access: { permission: 'administer', tenant: 'default-customer' },
  audit: { action: 'schedule.change' },
  summary: 'schedule (or replace) the unattended refresh of a saved login',
  usage: (program) => `Usage: ${program} refresh schedule <loginId> (--every <duration> | --daily <HH:MM> [--time-zone <tz>]) [--jitter <duration>]
          [--session cached|refresh] [products] [--customer <id>] [--paused] [--note <text>]

Schedules the login's refresh as a Temporal Schedule, or replaces its schedule (kept paused or not
unless --paused is given). A login known to need its end user (two-step, trusted device) is refused.
Cadence (exactly one):
  --every <duration>    every 90s, 15m, 6h, 1d ... (at least 1s)
  --daily <HH:MM>       every day at this local time (24-hour clock)
  --time-zone <tz>      IANA time zone of --daily (default UTC)
  --jitter <duration>   start each run up to this much later, at random (default 15m daily, 0s every)
Session:
  --session cached|refresh
                        each run reads the saved data (cached, default) or refreshes it live
Products (default: --accounts):
${PRODUCTS_HELP}
Other:
  --customer <id>       tenant of the login (default AGGREGATOR_CUSTOMER_ID)
  --paused              create it paused (it runs once resumed or triggered)
  --note <text>         why it exists (shown in the Web UI)`,

  async run(args, context) {
    const { io, client } = context;
    const { values, positionals } = parseFlags({
      args: [...args],
      options: {
        every: { type: 'string' },
        daily: { type: 'string' },
        'time-zone': { type: 'string' },
        jitter: { type: 'string' },
        session: { type: 'string' },
        customer: { type: 'string' },
        paused: { type: 'boolean' },
        note: { type: 'string' },
        ...PRODUCT_OPTIONS,
      },
      allowPositionals: true,
    });
    const loginId = onePositional(positionals, '<loginId>');
    if ((values.every === undefined) === (values.daily === undefined)) throw new UsageError('give exactly one of --every and --daily');
    if (values['time-zone'] !== undefined && values.daily === undefined) throw new UsageError('--time-zone applies to --daily');
    if (values.session !== undefined && values.session !== 'cached' && values.session !== 'refresh')
      throw new UsageError('--session must be cached or refresh');
    const jitter = values.jitter === undefined ? {} : { jitter: values.jitter };
    const request: RefreshScheduleArgs = {
      customerId: values.customer ?? context.defaultCustomerId,
      loginId,
      session: values.session === 'refresh' ? 'refresh' : 'cached',
      products: productsFrom(values, 'accounts'),
      cadence:
        values.daily !== undefined
          ? { kind: 'daily', at: values.daily, ...(values['time-zone'] === undefined ? {} : { timeZone: values['time-zone'] }), ...jitter }
          : { kind: 'interval', every: values.every ?? '', ...jitter },
      ...(values.paused ? { paused: true } : {}),
      ...(values.note === undefined ? {} : { note: values.note }),
    };
    const checked = RefreshScheduleInput.safeParse(request);
    if (!checked.success) throw new UsageError(flagProblems(checked.error));

    let scheduled;
    try {
      scheduled = await (await client()).schedules.schedule(request);
    } catch (error) {
      if (!(error instanceof RefreshNotUnattendedError)) throw error;
      io.err(`refused: ${printable(error.message)}`);
      io.err('a login that needs its end user cannot be refreshed unattended; connect it with "start" instead');
      return EXIT_FAILED;
    }
    io.out(
      `${scheduled.created ? 'scheduled' : 'rescheduled'} ${scheduled.scheduleId}: ${scheduled.session} refresh ${describeCadence(scheduled.cadence)}${scheduled.paused ? ' (paused)' : ''}`,
    );
    const next = scheduled.nextRunsAt[0];
    if (next !== undefined && !scheduled.paused) io.out(`next run ${next}`);
    // Written but not read back (a server that has just started): still a success, said as such.
    if (scheduled.readBackError !== undefined) io.out(`its next runs are not known yet (${printable(scheduled.readBackError)}); "refresh list" shows them`);
    return EXIT_OK;
  },
};

/** "--every: must be at least 1s; --time-zone: unknown time zone ..." */
function flagProblems(error: z.ZodError): string {
  return error.issues
    .map((issue) => {
      const path = issue.path.map(String).join('.');
      return `${FLAG_OF[path] ?? path}: ${issue.message}`;
    })
    .join('; ');
}
