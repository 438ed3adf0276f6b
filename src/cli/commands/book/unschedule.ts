/** `book unschedule`: deletes a book's Schedule (a refresh running now goes on; the logins stay enrolled). */
import { BookRef } from '../../../client/book-input.js';
import { noPositionals, parseFlags } from '../../args.js';
import type { Command } from '../../command.js';
import { EXIT_OK } from '../../report.js';
import { BOOK_HELP, BOOK_OPTIONS, bookName, bookOf, checked } from './args.js';

export const unschedule: Command = {
  access: { permission: 'administer', tenant: 'default-customer' },
  audit: { action: 'book.change' },
  summary: "delete a book's refresh schedule",
  usage: (program) => `Usage: ${program} book unschedule [--customer <id>] [--cadence <name>]

Deletes the book's Schedule: a refresh running now goes on, and the logins stay enrolled ("book run"
still refreshes them). Deleting a schedule that is not there is not an error.
${BOOK_HELP}`,

  async run(args, context) {
    const { values, positionals } = parseFlags({ args: [...args], options: { ...BOOK_OPTIONS }, allowPositionals: true });
    noPositionals(positionals);
    const book = bookOf(values, context);
    checked(BookRef, book);
    const outcome = await (await context.client()).books.unschedule(book);
    const name = bookName(book);
    context.io.out(outcome === 'deleted' ? `deleted the schedule of ${name}` : `${name} had no schedule`);
    return EXIT_OK;
  },
};
