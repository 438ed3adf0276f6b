/** `book resize`: pins a running refresh's window at a size, or gives it back to the controller. */
import { WINDOW_LIMITS } from '../../../contract/window/window-definitions.js';
import { parseFlags, UsageError } from '../../args.js';
import type { Command } from '../../command.js';
import { EXIT_OK } from '../../report.js';
import { refreshIdOf, wholeNumber } from './args.js';
import { describeWindow } from './format.js';

export const resize: Command = {
  access: { permission: 'administer' },
  audit: { action: 'book.change' },
  summary: "pin a book refresh's window, or unpin it",
  usage: (program) => `Usage: ${program} book resize <refreshId> (--size <n> | --unpin)

Pins the window of a running refresh: it keeps this many connections in flight until unpinned,
whatever it observes (e.g. to ease off a struggling service). --unpin gives it back to the controller,
which grows it while connections stay fast and shrinks it when they slow down or the tenant is throttled.
  --size <n>            connections in flight (${WINDOW_LIMITS.min} to ${WINDOW_LIMITS.max})
  --unpin               let the refresh size its window again`,

  async run(args, context) {
    const { values, positionals } = parseFlags({ args: [...args], options: { size: { type: 'string' }, unpin: { type: 'boolean' } }, allowPositionals: true });
    const refreshId = refreshIdOf(positionals);
    if ((values.size === undefined) === (values.unpin !== true)) throw new UsageError('give exactly one of --size and --unpin');
    const size = wholeNumber(values.size, '--size', WINDOW_LIMITS);
    const answered = await (await context.client()).books.resize(refreshId, size === undefined ? { unpin: true } : { size });
    context.io.out(`${size === undefined ? 'unpinned the window of' : `pinned the window at ${size} for`} ${refreshId}`);
    context.io.out(`window ${describeWindow(answered.window)}; ${answered.inFlight} in flight`);
    return EXIT_OK;
  },
};
