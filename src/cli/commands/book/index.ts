/** The `book` group: a tenant's book of saved logins, refreshed as one durable operation. */
import type { CommandGroup } from '../../command.js';
import { cancel, pause, resume } from './control.js';
import { enrol } from './enrol.js';
import { list } from './list.js';
import { migrate } from './migrate.js';
import { progress } from './progress.js';
import { refreshes } from './refreshes.js';
import { remove } from './remove.js';
import { report } from './report.js';
import { resize } from './resize.js';
import { run } from './run.js';
import { schedule } from './schedule.js';
import { unschedule } from './unschedule.js';

export const book: CommandGroup = {
  summary: "a tenant's book of saved logins refreshed as one: enrol, list, schedule, run, progress, report ...",
  subcommands: { enrol, remove, list, schedule, unschedule, run, refreshes, progress, pause, resume, cancel, resize, report, migrate },
};
