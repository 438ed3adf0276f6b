/** `book list`: one page of a tenant's book, newest enrolment first, and the token of the next. */
import { BookListInput, type BookListArgs } from '../../../client/book-input.js';
import { printable } from '../../terminal-view.js';
import { noPositionals, parseFlags } from '../../args.js';
import type { Command } from '../../command.js';
import { EXIT_OK, formatTable } from '../../report.js';
import { BOOK_OPTIONS, bookOf, checked, wholeNumber } from './args.js';

export const list: Command = {
  access: { permission: 'read', tenant: 'default-customer' },
  summary: "one page of a tenant's book: logins, settings, flags",
  usage: (program) => `Usage: ${program} book list [--customer <id>] [--cadence <name>] [--needs-end-user] [--page-size <n>] [--page-token <token>] [--json]

Lists the logins enrolled in the tenant's books (through visibility, which may lag a second behind),
newest enrolment first, a page at a time: login, cadence, session, products, when enrolled, and the
flag of a login left out because it needs its end user. The next page's token is printed last.
  --customer <id>       tenant (default AGGREGATOR_CUSTOMER_ID)
  --cadence <name>      only this book (default: every cadence)
  --needs-end-user      only the logins flagged as needing their end user
  --page-size <n>       entries a page (default 100, at most 1000)
  --page-token <token>  the page after the one that printed it
  --json                print the page as JSON`,

  async run(args, context) {
    const { io, client } = context;
    const { values, positionals } = parseFlags({
      args: [...args],
      options: {
        ...BOOK_OPTIONS,
        'needs-end-user': { type: 'boolean' },
        'page-size': { type: 'string' },
        'page-token': { type: 'string' },
        json: { type: 'boolean' },
      },
      allowPositionals: true,
    });
    noPositionals(positionals);
    const pageSize = wholeNumber(values['page-size'], '--page-size', { min: 1, max: 1000 });
    const request: BookListArgs = {
      ...bookOf(values, context),
      ...(values['needs-end-user'] ? { needsEndUser: true } : {}),
      ...(pageSize === undefined ? {} : { pageSize }),
      ...(values['page-token'] === undefined ? {} : { pageToken: values['page-token'] }),
    };
    checked(BookListInput, request);
    const page = await (await client()).books.list(request);
    if (values.json) {
      io.out(JSON.stringify(page, null, 2));
      return EXIT_OK;
    }
    if (page.entries.length === 0)
      io.out(
        `no logins${values['needs-end-user'] ? ' needing their end user' : ''} in ${request.cadence ? `the ${request.cadence} book` : 'the books'} of ${request.customerId}`,
      );
    else {
      const rows = page.entries.map((entry) => [
        entry.loginId,
        entry.cadence,
        entry.session,
        Object.keys(entry.products).join(','),
        entry.enrolledAt,
        entry.flag ? `needs end user: ${printable(entry.flag.reason)} (${entry.flag.flaggedAt})` : '-',
      ]);
      for (const line of formatTable(['LOGIN', 'CADENCE', 'SESSION', 'PRODUCTS', 'ENROLLED', 'FLAG'], rows)) io.out(line);
    }
    for (const row of page.unreadable ?? []) io.out(`unreadable entry ${printable(row.workflowId)}: ${printable(row.problem)}`);
    io.out(page.nextPageToken ? `next page: --page-token ${page.nextPageToken}` : 'last page');
    return EXIT_OK;
  },
};
