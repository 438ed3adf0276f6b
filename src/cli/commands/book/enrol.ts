/**
 * `book enrol`: puts a saved login in its tenant's book (or changes its enrolment, which also
 * clears a flag). Checked here first, so a bad login or cadence is a usage error naming the flag.
 */
import { RefreshNotUnattendedError } from '../../../client/errors.js';
import { printable } from '../../terminal-view.js';
import { BookEnrolmentInput, type BookEnrolmentArgs } from '../../../client/book-input.js';
import { onePositional, parseFlags, UsageError } from '../../args.js';
import type { Command } from '../../command.js';
import { PRODUCT_OPTIONS, PRODUCTS_HELP, productsFrom } from '../../products.js';
import { EXIT_FAILED, EXIT_OK } from '../../report.js';
import { BOOK_HELP, BOOK_OPTIONS, checked } from './args.js';

export const enrol: Command = {
  access: { permission: 'administer', tenant: 'default-customer' },
  audit: { action: 'book.change' },
  summary: "enrol a saved login in its tenant's book",
  usage: (program) => `Usage: ${program} book enrol <loginId> [--customer <id>] [--cadence <name>] [--session cached|refresh] [products] [--even-if-flagged]

Enrols the saved login in the book (enrolling it again replaces its settings and clears a flag).
Each refresh of the book then connects it with these settings. A login a connection showed to need
its end user (two-step, trusted device) is refused unless --even-if-flagged.
${BOOK_HELP}
  --session cached|refresh
                        each refresh reads the saved data (cached, default) or refreshes it live
Products (default: --accounts):
${PRODUCTS_HELP}
Other:
  --even-if-flagged     enrol a login flagged as needing its end user (they signed in again since)`,

  async run(args, context) {
    const { io, client } = context;
    const { values, positionals } = parseFlags({
      args: [...args],
      options: { ...BOOK_OPTIONS, session: { type: 'string' }, 'even-if-flagged': { type: 'boolean' }, ...PRODUCT_OPTIONS },
      allowPositionals: true,
    });
    const loginId = onePositional(positionals, '<loginId>');
    if (values.session !== undefined && values.session !== 'cached' && values.session !== 'refresh')
      throw new UsageError('--session must be cached or refresh');
    const request: BookEnrolmentArgs = {
      customerId: values.customer ?? context.defaultCustomerId,
      loginId,
      ...(values.cadence === undefined ? {} : { cadence: values.cadence }),
      session: values.session === 'refresh' ? 'refresh' : 'cached',
      products: productsFrom(values, 'accounts'),
    };
    checked(BookEnrolmentInput, request);

    let entry;
    try {
      entry = await (await client()).books.enrol(request, { evenIfFlagged: values['even-if-flagged'] === true });
    } catch (error) {
      if (!(error instanceof RefreshNotUnattendedError)) throw error;
      io.err(`refused: ${printable(error.message)}`);
      io.err(`once its end user has signed in again, enrol it with --even-if-flagged`);
      return EXIT_FAILED;
    }
    const products = Object.keys(entry.products).join(', ');
    io.out(
      `enrolled login ${entry.loginId} in the ${entry.cadence} book of ${entry.customerId}: ${entry.session} refresh of ${products} (entry ${entry.workflowId})`,
    );
    return EXIT_OK;
  },
};
