/** The `pipeline-key` group: the pipeline entry's tenant credentials (src/pipeline-entry/). */
import type { CommandGroup } from '../../command.js';
import { create } from './create.js';

export const pipelineKey: CommandGroup = {
  summary: "a tenant's key for the pipeline entry: create",
  subcommands: { create },
};
