/**
 * What the commands acting on one saved login share (`forget`, the refresh subcommands):
 * `<loginId> [--customer <id>]` (the tenant defaults as for `start`), plus `--note` or `--json`
 * where the command takes one.
 */
import type { LoginRef } from '../client/refresh-schedule-input.js';
import { onePositional, parseFlags } from './args.js';
import type { CommandContext } from './command.js';

export interface LoginArgs {
  readonly ref: LoginRef;
  readonly note: string | undefined;
  readonly json: boolean;
}

export function parseLoginArgs(
  args: readonly string[],
  context: CommandContext,
  options: { readonly note?: boolean; readonly json?: boolean } = {},
): LoginArgs {
  const { values, positionals } = parseFlags({
    args: [...args],
    options: {
      customer: { type: 'string' },
      ...(options.note ? { note: { type: 'string' } } : {}),
      ...(options.json ? { json: { type: 'boolean' } } : {}),
    },
    allowPositionals: true,
  });
  const loginId = onePositional(positionals, '<loginId>');
  const { note, json } = values as { note?: string; json?: boolean };
  return { ref: { customerId: values.customer ?? context.defaultCustomerId, loginId }, note, json: json === true };
}

/** `<loginId> [--customer <id>]` in usage texts. */
export const LOGIN_HELP = `  --customer <id>       tenant of the login (default AGGREGATOR_CUSTOMER_ID)`;
