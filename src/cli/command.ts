/**
 * What a CLI command is written against: the process's input and output (`CliIo`, so tests run
 * commands in-process), what the dispatcher hands each command (`CommandContext`), and the entries
 * of the command table: a command, or a group of subcommands (`refresh schedule ...`).
 */
import type { ClientConfig } from '../settings/client.js';
import type { ConnectionsClient } from '../client/connections.js';
import type { AuditAction } from '../audit/audit-entry.js';
import type { CommandAccess } from './command-access.js';

/** What a command that acts records in the audit trail (cli-audit.ts): its action; its tenant is the one its access names (command-access.ts). */
export interface CommandAudit {
  readonly action: AuditAction;
}

export interface CliIo {
  out(line: string): void;
  err(line: string): void;
  readStdin(): Promise<string>;
  /** The variables the settings are read from (src/settings/client.ts); unset: the process's own. */
  env?: NodeJS.ProcessEnv;
  /** Opens the pipeline client (the CLI closes it when done). */
  connect(config: ClientConfig): Promise<ConnectionsClient>;
  now(): number;
  /** Between polls of `watch`. */
  sleep(ms: number): Promise<void>;
  /** Program name in help texts. */
  program?: string;
}

export interface CommandContext {
  readonly io: CliIo;
  /** The program as help texts and printed commands name it. */
  readonly program: string;
  /** Tenant of new connections when no --customer is given (AGGREGATOR_CUSTOMER_ID). */
  readonly defaultCustomerId: string;
  /** The pipeline client, opened on first use and closed when the command ends. */
  readonly client: () => Promise<ConnectionsClient>;
  /** The client config the CLI runs with (its key provider, for commands that act on keys). */
  readonly config: () => ClientConfig;
}

export interface Command {
  /** One line for the list of commands. */
  readonly summary: string;
  /** The text of `<command> --help`. */
  usage(program: string): string;
  /** What it does and on which tenant, checked against the signed-in operator's roles with CLI_ROLE_MAP (command-access.ts). */
  readonly access: CommandAccess;
  /** A command that acts: recorded in the audit trail before it runs (cli-audit.ts); none for a read. */
  readonly audit?: CommandAudit;
  /** Runs with the arguments after the command's name; returns the exit code. */
  run(args: readonly string[], context: CommandContext): Promise<number>;
}

export interface CommandGroup {
  readonly summary: string;
  readonly subcommands: CommandTable;
}

export type CommandTable = Readonly<Record<string, Command | CommandGroup>>;

export function isGroup(entry: Command | CommandGroup): entry is CommandGroup {
  return 'subcommands' in entry;
}
