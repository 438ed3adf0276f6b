/** The `deployment` group: the worker deployment's builds, and routing new connections between them. */
import type { CommandGroup } from '../../command.js';
import { ramp } from './ramp.js';
import { retire } from './retire.js';
import { setCurrent } from './set-current.js';
import { show } from './show.js';

export const deployment: CommandGroup = {
  summary: "the workers' builds: show, set-current, ramp, retire",
  subcommands: { show, 'set-current': setCurrent, ramp, retire },
};
