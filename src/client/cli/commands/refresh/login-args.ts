/**
 * What the refresh subcommands acting on one login's schedule share: `<loginId> [--customer <id>]`
 * (the tenant defaults as for `start`), plus `--note` where the command takes one.
 */
import type { LoginRef } from '../../../refresh-schedule-input.js';
import { onePositional, parseFlags } from '../../args.js';
import type { CommandContext } from '../../command.js';

export interface LoginArgs {
  readonly ref: LoginRef;
  readonly note: string | undefined;
}

export function parseLoginArgs(args: readonly string[], context: CommandContext, options: { readonly note?: boolean } = {}): LoginArgs {
  const { values, positionals } = parseFlags({
    args: [...args],
    options: { customer: { type: 'string' }, ...(options.note ? { note: { type: 'string' } } : {}) },
    allowPositionals: true,
  });
  const loginId = onePositional(positionals, '<loginId>');
  const note = (values as { note?: string }).note;
  return { ref: { customerId: values.customer ?? context.defaultCustomerId, loginId }, note };
}

/** `<loginId> [--customer <id>]` in usage texts. */
export const LOGIN_HELP = `  --customer <id>       tenant of the login (default AGGREGATOR_CUSTOMER_ID)`;
