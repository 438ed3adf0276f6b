/** `book remove`: takes a login out of its book (its connections and saved data stay). */
import { onePositional, parseFlags } from '../../args.js';
import type { Command } from '../../command.js';
import { EXIT_OK } from '../../report.js';

export const remove: Command = {
  access: { permission: 'administer', tenant: 'default-customer' },
  audit: { action: 'book.change' },
  summary: 'take a login out of its book',
  usage: (program) => `Usage: ${program} book remove <loginId> [--customer <id>] [--reason <text>]

Takes the login out of its tenant's book: later refreshes leave it out (one already reading its page
reports it as forgotten). Its connections and saved data stay; "forget" deletes those. Removing a
login that is in no book is not an error.
  --customer <id>       tenant of the login (default AGGREGATOR_CUSTOMER_ID)
  --reason <text>       why (kept by the entry's workflow)`,

  async run(args, context) {
    const { values, positionals } = parseFlags({
      args: [...args],
      options: { customer: { type: 'string' }, reason: { type: 'string' } },
      allowPositionals: true,
    });
    const loginId = onePositional(positionals, '<loginId>');
    const ref = { customerId: values.customer ?? context.defaultCustomerId, loginId };
    const outcome = await (await context.client()).books.remove(ref, values.reason);
    context.io.out(
      outcome === 'removed' ? `removed login ${loginId} from the book of ${ref.customerId}` : `login ${loginId} was in no book of ${ref.customerId}`,
    );
    return EXIT_OK;
  },
};
