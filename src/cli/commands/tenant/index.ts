/** The `tenant` group: a lender as a whole. */
import type { CommandGroup } from '../../command.js';
import { forget } from './forget.js';

export const tenant: CommandGroup = {
  summary: 'a lender as a whole: forget',
  subcommands: { forget },
};
