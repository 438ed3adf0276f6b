/**
 * `book schedule`: creates or replaces the Schedule that refreshes one of a tenant's books, checked
 * here first so a bad cadence or window is a usage error naming the flag.
 */
import { BookScheduleInput, type BookScheduleArgs } from '../../../client/book-input.js';
import { BOOK_PAGE_SIZE_LIMITS } from '../../../contract/book/book-definitions.js';
import { noPositionals, parseFlags, UsageError } from '../../args.js';
import type { Command } from '../../command.js';
import { EXIT_OK } from '../../report.js';
import { describeCadence } from '../refresh/format.js';
import { BOOK_HELP, BOOK_OPTIONS, bookOf, checked, WINDOW_HELP, WINDOW_OPTIONS, wholeNumber, windowOf } from './args.js';

export const schedule: Command = {
  access: { permission: 'administer', tenant: 'default-customer' },
  audit: { action: 'book.change' },
  summary: 'schedule (or replace) the refresh of a book',
  usage: (program) => `Usage: ${program} book schedule (--daily <HH:MM> [--time-zone <tz>] | --every <duration>) [--jitter <duration>]
          [--customer <id>] [--cadence <name>] [--floor <n>] [--ceiling <n>] [--start <n>] [--page-size <n>] [--paused] [--note <text>]

Creates the book's Schedule (one per tenant and cadence), or replaces it (kept paused or not unless
--paused is given). Each run refreshes every login of the book as one refresh; a run due while the
last one still runs is skipped (its report counts it).
${BOOK_HELP}
When (exactly one):
  --daily <HH:MM>       every day at this local time (24-hour clock)
  --time-zone <tz>      IANA time zone of --daily (default UTC; --tz for short)
  --every <duration>    every 6h, 1d ... (at least 1s)
  --jitter <duration>   start each run up to this much later, at random (default 15m daily, 0s every)
Window (default: the worker's BOOK_WINDOW_* and BOOK_PAGE_SIZE):
${WINDOW_HELP}
Other:
  --paused              create it paused
  --note <text>         why it exists (shown in the Web UI)`,

  async run(args, context) {
    const { io, client } = context;
    const { values, positionals } = parseFlags({
      args: [...args],
      options: {
        ...BOOK_OPTIONS,
        ...WINDOW_OPTIONS,
        daily: { type: 'string' },
        every: { type: 'string' },
        'time-zone': { type: 'string' },
        tz: { type: 'string' },
        jitter: { type: 'string' },
        paused: { type: 'boolean' },
        note: { type: 'string' },
      },
      allowPositionals: true,
    });
    noPositionals(positionals);
    if ((values.every === undefined) === (values.daily === undefined)) throw new UsageError('give exactly one of --daily and --every');
    if (values.tz !== undefined && values['time-zone'] !== undefined) throw new UsageError('give --time-zone or --tz, not both');
    const timeZone = values['time-zone'] ?? values.tz;
    if (timeZone !== undefined && values.daily === undefined) throw new UsageError('--time-zone applies to --daily');
    const jitter = values.jitter === undefined ? {} : { jitter: values.jitter };
    const window = windowOf(values);
    const pageSize = wholeNumber(values['page-size'], '--page-size', BOOK_PAGE_SIZE_LIMITS);
    const request: BookScheduleArgs = {
      ...bookOf(values, context),
      when:
        values.daily !== undefined
          ? { kind: 'daily', at: values.daily, ...(timeZone === undefined ? {} : { timeZone }), ...jitter }
          : { kind: 'interval', every: values.every ?? '', ...jitter },
      ...(window ? { window } : {}),
      ...(pageSize === undefined ? {} : { pageSize }),
      ...(values.paused ? { paused: true } : {}),
      ...(values.note === undefined ? {} : { note: values.note }),
    };
    checked(BookScheduleInput, request);

    const scheduled = await (await client()).books.schedule(request);
    const bounds = scheduled.window ? Object.entries(scheduled.window).map(([key, value]) => `${key} ${value}`) : [];
    const sizes = [...bounds, ...(scheduled.pageSize === undefined ? [] : [`page size ${scheduled.pageSize}`])];
    io.out(
      `${scheduled.created ? 'scheduled' : 'rescheduled'} ${scheduled.scheduleId}: ${describeCadence(scheduled.when)}${sizes.length > 0 ? `, window ${sizes.join(', ')}` : ''}${pausedNote(scheduled.created, values.paused === true)}`,
    );
    return EXIT_OK;
  },
};

/** A replaced schedule keeps its paused state unless --paused was given: say so rather than guess it. */
function pausedNote(created: boolean, paused: boolean): string {
  if (paused) return ' (paused)';
  return created ? '' : ' (paused or not as before)';
}
