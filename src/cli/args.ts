/**
 * Argument parsing every command shares: flags through node:util's parseArgs, whose own refusals
 * (an unknown option, a missing value) become usage errors naming the flag; positionals; the
 * password of a live connection, which never comes from a flag.
 */
import { parseArgs } from 'node:util';
import type { ParseArgsConfig } from 'node:util';
import { connectionPasswordFromEnv } from '../settings/client.js';
import type { CliIo } from './command.js';

/** A command line that cannot be run as given: exit 2, the message and a pointer to the help. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** parseArgs, with its refusals (`Unknown option '--bogus'`, a flag without its value) as UsageErrors. */
export function parseFlags<T extends ParseArgsConfig>(config: T): ReturnType<typeof parseArgs<T>> {
  try {
    return parseArgs(config);
  } catch (error) {
    if (error instanceof TypeError && 'code' in error && typeof error.code === 'string' && error.code.startsWith('ERR_PARSE_ARGS')) {
      throw new UsageError(error.message, { cause: error });
    }
    throw error;
  }
}

export function noPositionals(positionals: readonly string[]): void {
  if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0] ?? ''}"`);
}

/** The one positional a command takes (`<workflowId>`); `what` names it when missing. */
export function onePositional(positionals: readonly string[], what: string): string {
  const [value, ...extra] = positionals;
  if (value === undefined) throw new UsageError(`missing ${what}`);
  noPositionals(extra);
  return value;
}

/** From stdin (its one trailing newline dropped) with --password-stdin, else from CONNECTION_PASSWORD. */
export async function readPassword(io: CliIo, fromStdin: boolean): Promise<string> {
  const password = fromStdin ? (await io.readStdin()).replace(/\r?\n$/, '') : connectionPasswordFromEnv(io.env);
  if (!password) throw new UsageError('no password: pipe it with --password-stdin or set CONNECTION_PASSWORD');
  return password;
}
