/** `book refreshes`: a tenant's book refreshes, newest first, with how each ended. */
import { BookListInput } from '../../../client/book-input.js';
import { noPositionals, parseFlags } from '../../args.js';
import type { Command } from '../../command.js';
import { EXIT_OK, formatTable } from '../../report.js';
import { BOOK_OPTIONS, bookOf, checked, wholeNumber } from './args.js';

export const refreshes: Command = {
  access: { permission: 'read', tenant: 'default-customer' },
  summary: "a tenant's book refreshes, newest first",
  usage: (program) => `Usage: ${program} book refreshes [--customer <id>] [--cadence <name>] [--limit <n>] [--json]

Lists the refreshes of the tenant's books (scheduled or run by hand), newest first: their id, which
book, running or how Temporal closed them, and when. "book progress <id>" and "book report <id>" say more.
  --customer <id>       tenant (default AGGREGATOR_CUSTOMER_ID)
  --cadence <name>      only this book (default: every cadence)
  --limit <n>           at most this many (default 20)
  --json                print JSON`,

  async run(args, context) {
    const { io, client } = context;
    const { values, positionals } = parseFlags({
      args: [...args],
      options: { ...BOOK_OPTIONS, limit: { type: 'string' }, json: { type: 'boolean' } },
      allowPositionals: true,
    });
    noPositionals(positionals);
    const book = checked(BookListInput, bookOf(values, context));
    const limit = wholeNumber(values.limit, '--limit', { min: 1, max: 1000 });
    const listed = await (await client()).books.refreshes({ ...book, ...(limit === undefined ? {} : { limit }) });
    if (values.json) {
      io.out(JSON.stringify(listed, null, 2));
      return EXIT_OK;
    }
    if (listed.length === 0) {
      io.out(`no book refreshes for ${book.customerId}${book.cadence ? ` (${book.cadence})` : ''}`);
      return EXIT_OK;
    }
    const rows = listed.map((refresh) => [refresh.refreshWorkflowId, refresh.cadence, refresh.executionStatus, refresh.startedAt, refresh.closedAt ?? '-']);
    for (const line of formatTable(['REFRESH', 'CADENCE', 'STATUS', 'STARTED', 'CLOSED'], rows)) io.out(line);
    return EXIT_OK;
  },
};
