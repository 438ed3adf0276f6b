/**
 * One CLI invocation: finds the command in the table (through any groups), prints help where asked,
 * runs the command with its context and turns what it throws into words and an exit code (0 ok,
 * 1 connection failed, answer rejected, schedule refused or forget failed, 2 usage error). Returns the code, so tests run it in-process.
 */
import { isGroup } from './command.js';
import type { CliIo, Command, CommandGroup, CommandTable } from './command.js';
import { COMMANDS } from './command-table.js';
import { openContext } from './context.js';
import { groupHelp, programHelp } from './help.js';
import { AuditUnavailableError } from '../audit/audit-store.js';
import { beginCommandAudit, cliIdentity, recordCommandRefusal } from './cli-audit.js';
import { checkCommand, cliPrincipal, CliSignInRequiredError, commandTenant, CommandForbiddenError } from './command-access.js';
import { loadCliSignInConfig } from '../settings/cli-sign-in.js';
import { loadClientConfig } from '../settings/client.js';
import { EXIT_FAILED, EXIT_OK, EXIT_USAGE, reportError } from './report.js';

/** `commands` is the table to dispatch on: the CLI's own unless a test brings another. */
export async function runCli(argv: readonly string[], io: CliIo, commands: CommandTable = COMMANDS): Promise<number> {
  const program = io.program ?? 'connections';
  if (argv[0] === 'help') {
    io.out(helpTopic(resolve(commands, argv.slice(1)), program));
    return EXIT_OK;
  }
  const found = resolve(commands, argv);
  if (found.kind === 'level') {
    const { level, next } = found;
    if (next === undefined || next === '--help' || next === '-h') {
      io.out(levelHelp(level, program));
      return next === undefined ? EXIT_USAGE : EXIT_OK;
    }
    io.err(
      `unknown command "${[...level.path, next].join(' ')}"; commands: ${Object.keys(level.table).join(', ')} (see ${[program, ...level.path].join(' ')} --help)`,
    );
    return EXIT_USAGE;
  }
  const name = found.path.join(' ');
  if (found.args.includes('--help') || found.args.includes('-h')) {
    io.out(found.command.usage(program));
    return EXIT_OK;
  }
  let audited: Awaited<ReturnType<typeof beginCommandAudit>> | undefined;
  try {
    audited = await admit(found.command, name, found.args, io.env);
  } catch (error) {
    if (!(error instanceof AuditUnavailableError)) return reportError(error, name, io, program);
    io.err(`${program} ${name}: refused: ${error.message}; nothing was done, as nothing can be recorded`);
    return EXIT_FAILED;
  }
  const { context, close } = openContext(io, program);
  let code: number = EXIT_FAILED;
  try {
    code = await found.command.run(found.args, context);
    return code;
  } catch (error) {
    code = reportError(error, name, io, program);
    return code;
  } finally {
    await close();
    if (audited) {
      await audited.handle.end(code === EXIT_OK ? 'ok' : code === EXIT_USAGE ? 'refused' : 'failed', `exit ${code}`);
      await audited.trail.close();
    }
  }
}

/**
 * Before a command runs: with CLI_ROLE_MAP, the signed-in operator's roles must allow it on its
 * tenant (a refusal is recorded, then thrown); a command that acts has its attempt recorded. Reads
 * without a role map ask nobody anything.
 */
async function admit(
  command: Command,
  name: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv | undefined,
): Promise<Awaited<ReturnType<typeof beginCommandAudit>> | undefined> {
  const { permission } = command.access;
  const { roleMap } = permission === 'none' ? { roleMap: undefined } : loadCliSignInConfig(env);
  if (roleMap === undefined && command.audit === undefined) return undefined;
  const identity = await cliIdentity(env);
  const record = {
    actor: identity.actor,
    action: command.audit?.action ?? 'read',
    command: name,
    args,
    tenant: commandTenant(command.access, args, () => loadClientConfig(env).customerId),
  } as const;
  if (roleMap !== undefined && permission !== 'none') {
    if (identity.groups === undefined) throw new CliSignInRequiredError(`nobody is signed in here (${identity.actor.name} is this host's user)`);
    try {
      checkCommand(cliPrincipal(identity.actor, identity.groups, roleMap), permission, record.tenant);
    } catch (error) {
      if (error instanceof CommandForbiddenError) await recordCommandRefusal(record, env);
      throw error;
    }
  }
  return command.audit === undefined ? undefined : beginCommandAudit(record, env);
}

/** A place in the table: the program's top level, or a group (`path` its name as typed). */
interface Level {
  readonly path: readonly string[];
  readonly table: CommandTable;
  readonly group?: CommandGroup;
}

type Found =
  | { readonly kind: 'command'; readonly path: readonly string[]; readonly command: Command; readonly args: readonly string[] }
  /** The words stopped at a level: nothing more (`next` undefined), a flag, or a name it lacks. */
  | { readonly kind: 'level'; readonly level: Level; readonly next: string | undefined };

function resolve(table: CommandTable, argv: readonly string[], level: Level = { path: [], table }): Found {
  const [name, ...rest] = argv;
  // hasOwn: a name such as "constructor" is no command.
  const entry = name !== undefined && Object.hasOwn(table, name) ? table[name] : undefined;
  if (entry === undefined) return { kind: 'level', level, next: name };
  const path = [...level.path, name ?? ''];
  if (isGroup(entry)) return resolve(entry.subcommands, rest, { path, table: entry.subcommands, group: entry });
  return { kind: 'command', path, command: entry, args: rest };
}

/** `help [<command>...]`: the command's usage, or the help of the level the words reach. */
function helpTopic(found: Found, program: string): string {
  return found.kind === 'command' ? found.command.usage(program) : levelHelp(found.level, program);
}

function levelHelp(level: Level, program: string): string {
  return level.group ? groupHelp(level.path, level.group, program) : programHelp(level.table, program);
}
