/**
 * The command table: every command of the CLI by name, in the order help lists them. A group
 * (`{ summary, subcommands }`) puts commands under one name, typed as `<group> <command>`.
 */
import type { CommandTable } from './command.js';
import { activity } from './commands/activity.js';
import { audit } from './commands/audit.js';
import { login, logout, whoami } from './commands/login.js';
import { answer } from './commands/answer.js';
import { book } from './commands/book/index.js';
import { budget } from './commands/budget/index.js';
import { deployment } from './commands/deployment/index.js';
import { forget } from './commands/forget.js';
import { list } from './commands/list.js';
import { pipelineKey } from './commands/pipeline-key/index.js';
import { refresh } from './commands/refresh/index.js';
import { show } from './commands/show.js';
import { start } from './commands/start.js';
import { tenant } from './commands/tenant/index.js';
import { watch } from './commands/watch.js';

export const COMMANDS: CommandTable = {
  list,
  show,
  answer,
  watch,
  activity,
  audit,
  login,
  whoami,
  logout,
  start,
  refresh,
  book,
  forget,
  tenant,
  deployment,
  budget,
  'pipeline-key': pipelineKey,
};
