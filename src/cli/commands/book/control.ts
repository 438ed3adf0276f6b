/**
 * `book pause`, `book resume`, `book cancel`: steer a running refresh through its updates. Each
 * prints the progress the refresh answered with; a refresh that ended refuses (exit 1, its reason).
 */
import type { BookProgress } from '../../../contract/book/book-definitions.js';
import type { BooksClient } from '../../../client/books.js';
import { parseFlags } from '../../args.js';
import type { Command } from '../../command.js';
import { EXIT_OK } from '../../report.js';
import { refreshIdOf } from './args.js';
import { describeProgress } from './format.js';

interface Steer {
  readonly summary: string;
  readonly what: string;
  /** Resume takes no reason: the client's resume has none to pass. */
  readonly reason: boolean;
  readonly act: (books: BooksClient, refreshId: string, reason: string | undefined) => Promise<BookProgress>;
  readonly done: string;
}

function steer({ summary, what, reason, act, done }: Steer, name: string): Command {
  return {
    summary,
    access: { permission: 'administer' },
    audit: { action: 'book.change' },
    usage: (program) => `Usage: ${program} book ${name} <refreshId>${reason ? ' [--reason <text>]' : ''}

${what}${reason ? "\n  --reason <text>       why (kept in the refresh's history)" : ''}`,

    async run(args, context) {
      const { values, positionals } = parseFlags({ args: [...args], options: reason ? { reason: { type: 'string' } } : {}, allowPositionals: true });
      const refreshId = refreshIdOf(positionals);
      const answered = await act((await context.client()).books, refreshId, (values as { reason?: string }).reason);
      context.io.out(`${done} ${refreshId}`);
      for (const line of describeProgress(answered)) context.io.out(line);
      return EXIT_OK;
    },
  };
}

export const pause = steer(
  {
    summary: 'pause a book refresh (connections in flight finish)',
    what: 'Stops the refresh starting connections until resumed; those in flight finish. Paused time is counted in its report.',
    reason: true,
    act: (books, id, reason) => books.pause(id, reason),
    done: 'paused',
  },
  'pause',
);

export const resume = steer(
  {
    summary: 'resume a paused book refresh',
    what: 'Lets a paused refresh start connections again.',
    reason: false,
    act: (books, id) => books.resume(id),
    done: 'resumed',
  },
  'resume',
);

export const cancel = steer(
  {
    summary: 'cancel a book refresh (its report is still written)',
    what: 'Starts no more connections and cancels those in flight (reported as cancelled); the report is still written.',
    reason: true,
    act: (books, id, reason) => books.cancel(id, reason),
    done: 'cancelling',
  },
  'cancel',
);
