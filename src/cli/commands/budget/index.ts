/** The `budget` group: the fleet's request budget toward the service, and throttled tenants. */
import type { CommandGroup } from '../../command.js';
import { set } from './set.js';
import { show } from './show.js';

export const budget: CommandGroup = {
  summary: "the fleet's request budget toward the service: show, set",
  subcommands: { show, set },
};
