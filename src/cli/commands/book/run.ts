/** `book run`: refreshes a book now, or names the refresh of it already running (one at a time). */
import { BOOK_PAGE_SIZE_LIMITS } from '../../../contract/book/book-definitions.js';
import { BookRef } from '../../../client/book-input.js';
import { noPositionals, parseFlags } from '../../args.js';
import type { Command } from '../../command.js';
import { EXIT_OK } from '../../report.js';
import { BOOK_HELP, BOOK_OPTIONS, bookName, bookOf, checked, WINDOW_HELP, WINDOW_OPTIONS, wholeNumber, windowOf } from './args.js';

export const run: Command = {
  access: { permission: 'administer', tenant: 'default-customer' },
  audit: { action: 'book.change' },
  summary: 'refresh a book now',
  usage: (program) => `Usage: ${program} book run [--customer <id>] [--cadence <name>] [--floor <n>] [--ceiling <n>] [--start <n>] [--page-size <n>]

Starts a refresh of the book now, with its Schedule's window and page size unless given. When a
refresh of the book is already running, that one is named instead and nothing starts.
${BOOK_HELP}
Window (default: the Schedule's, else the worker's BOOK_WINDOW_* and BOOK_PAGE_SIZE):
${WINDOW_HELP}`,

  async run(args, context) {
    const { io, program, client } = context;
    const { values, positionals } = parseFlags({ args: [...args], options: { ...BOOK_OPTIONS, ...WINDOW_OPTIONS }, allowPositionals: true });
    noPositionals(positionals);
    const book = bookOf(values, context);
    checked(BookRef, book);
    const window = windowOf(values);
    const pageSize = wholeNumber(values['page-size'], '--page-size', BOOK_PAGE_SIZE_LIMITS);
    const { refreshWorkflowId, started } = await (
      await client()
    ).books.run(book, { ...(window ? { window } : {}), ...(pageSize === undefined ? {} : { pageSize }) });
    io.out(started ? `started ${refreshWorkflowId}, a refresh of ${bookName(book)}` : `already running: ${refreshWorkflowId} (nothing started)`);
    io.out(`"${program} book progress ${refreshWorkflowId}" follows it`);
    return EXIT_OK;
  },
};
