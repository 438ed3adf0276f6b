/** `npm run security:check`'s command line. Bad arguments are SecurityCheckArgumentErrors (exit 2, with the usage). */
import { numberArgument } from '../lib/number-argument.js';

export interface SecurityCheckOptions {
  /** Each message attack (unsealed signal, update, start) is tried this many times, on connections of their own. */
  readonly rounds: number;
  readonly keepLogs: boolean;
}

export class SecurityCheckArgumentError extends Error {
  override readonly name = 'SecurityCheckArgumentError';
}

export const USAGE = `usage: npm run security:check -- [options]

The attacks of docs/threat-model.md rehearsed on the production-style stack of keys:check: a real
OpenBao (config file, integrated storage, a least-privilege token), the Temporal dev server, the
sandbox and a worker process with PAYLOAD_KEY_PROVIDER=vault-transit. Each attack is tried as an
attacker would (a Temporal client without the key, a worker given a KMS in clear, a search of argv,
logs and history for secrets) and counted as refused or as got through. Last line:
  security-check: <n> attacks tried, <n> refused as expected, <n> got through, tenants isolated <k>/<n>, forgotten tenant unreadable <yes|no>, others unaffected <yes|no>

  --rounds N     each message attack this many times (default 3)
  --keep-logs    keep the run directory (OpenBao's storage and audit log, every log)
  --help         this text
`;

/** The options, or undefined for --help. */
export function parseSecurityCheckArgs(args: readonly string[]): SecurityCheckOptions | undefined {
  let rounds = 3;
  let keepLogs = false;
  for (let index = 0; index < args.length; index += 1) {
    const arg = args[index];
    if (arg === '--help') return undefined;
    if (arg === '--keep-logs') keepLogs = true;
    else if (arg === '--rounds') {
      const value = numberArgument('--rounds', args[(index += 1)], 1, 50);
      if (typeof value === 'string') throw new SecurityCheckArgumentError(value);
      rounds = value;
    } else throw new SecurityCheckArgumentError(`unknown argument ${JSON.stringify(arg)}`);
  }
  return { rounds, keepLogs };
}
