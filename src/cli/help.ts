/** The help texts made from the command table: the program's, and a group's. A command's own is its `usage`. */
import type { CommandGroup, CommandTable } from './command.js';

const ENV_HELP = `Environment:
  TEMPORAL_ADDRESS        Temporal frontend (default localhost:7233)
  TEMPORAL_NAMESPACE      namespace (default "default")
  TEMPORAL_TASK_QUEUE     task queue of the connection worker (default aggregation-connections)
  TEMPORAL_CONFIG_FILE    Temporal's client config (default ~/.config/temporalio/temporal.toml) and
  TEMPORAL_PROFILE        its profile (default "default"): what the variables above leave unset
  AGGREGATOR_CUSTOMER_ID  tenant of new connections and of list (default demo-lender)
  PAYLOAD_ENCRYPTION_KEY  the worker's payload encryption key, when it has one (base64 of 32 bytes;
                          with PAYLOAD_ENCRYPTION_KEY_ID and PAYLOAD_DECRYPTION_KEYS as the worker's)`;

export function programHelp(commands: CommandTable, program: string): string {
  return `Usage: ${program} <command> [options]

Operate aggregation connections (Temporal workflows) from a terminal.

Commands:
${commandList(commands)}

Run "${program} <command> --help" for a command's options.
Exit codes: 0 ok, 1 connection failed, answer rejected, schedule refused or forget failed, 2 usage error.

${ENV_HELP}`;
}

/** `path`: the group's name as typed, e.g. ["refresh"]. */
export function groupHelp(path: readonly string[], group: CommandGroup, program: string): string {
  const typed = [program, ...path].join(' ');
  return `Usage: ${typed} <command> [options]

${group.summary}

Commands:
${commandList(group.subcommands)}

Run "${typed} <command> --help" for a command's options.`;
}

function commandList(commands: CommandTable): string {
  const width = Math.max(...Object.keys(commands).map((name) => name.length)) + 3;
  return Object.entries(commands)
    .map(([name, entry]) => `  ${name.padEnd(width)}${entry.summary}`)
    .join('\n');
}
