/** `book migrate`: moves a tenant's per-login refresh schedules into one of its books. */
import { BookRef } from '../../../client/book-input.js';
import { printable } from '../../terminal-view.js';
import { noPositionals, parseFlags } from '../../args.js';
import type { Command } from '../../command.js';
import { EXIT_OK } from '../../report.js';
import { BOOK_HELP, BOOK_OPTIONS, bookName, bookOf, checked } from './args.js';

export const migrate: Command = {
  access: { permission: 'administer', tenant: 'default-customer' },
  audit: { action: 'book.change' },
  summary: "move a tenant's per-login refresh schedules into a book",
  usage: (program) => `Usage: ${program} book migrate [--customer <id>] [--cadence <name>] [--keep-schedules]

Enrols each login that has a refresh schedule ("refresh list") in the book with its schedule's
session and products, then deletes its schedule. Logins that need their end user keep their schedule
and are listed. Running it again enrols again (the same settings) and deletes what is left.
${BOOK_HELP}
  --keep-schedules      keep the per-login schedules (both then refresh the login)`,

  async run(args, context) {
    const { io, client } = context;
    const { values, positionals } = parseFlags({
      args: [...args],
      options: { ...BOOK_OPTIONS, 'keep-schedules': { type: 'boolean' } },
      allowPositionals: true,
    });
    noPositionals(positionals);
    const book = bookOf(values, context);
    checked(BookRef, book);
    const connections = await client();
    const outcome = await connections.books.migrateSchedules({ ...book, keepSchedules: values['keep-schedules'] === true }, connections.schedules);
    io.out(
      `enrolled ${outcome.enrolled.length} login${outcome.enrolled.length === 1 ? '' : 's'} in ${bookName(book)}; ${outcome.schedulesDeleted} per-login schedule${outcome.schedulesDeleted === 1 ? '' : 's'} deleted`,
    );
    for (const loginId of outcome.enrolled) io.out(`  enrolled  ${loginId}`);
    for (const skipped of outcome.skipped) io.out(`  skipped   ${skipped.scheduleId}: ${printable(skipped.reason)}`);
    return EXIT_OK;
  },
};
