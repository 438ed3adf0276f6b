/** The `refresh` group: scheduled refresh of saved logins (one Temporal Schedule per login). */
import type { CommandGroup } from '../../command.js';
import { deleteSchedule } from './delete.js';
import { latest } from './latest.js';
import { list } from './list.js';
import { pause } from './pause.js';
import { resume } from './resume.js';
import { schedule } from './schedule.js';
import { trigger } from './trigger.js';

export const refresh: CommandGroup = {
  summary: 'scheduled refresh of saved logins: schedule, list, pause, resume, trigger, delete, latest',
  subcommands: { schedule, list, pause, resume, trigger, delete: deleteSchedule, latest },
};
