/** `npm run keys:check`'s command line. Bad arguments are KeysCheckArgumentErrors (exit 2, with the usage). */
import { numberArgument } from '../lib/number-argument.js';
import { readCommandLine } from '../lib/cli-options.js';
import { KEYS_CHECK_FLOWS } from './flows.js';

export interface KeysCheckOptions {
  /** Connections driven (the flows of flows.ts cycled through). */
  readonly connections: number;
  readonly workers: number;
  /** PAYLOAD_DATA_KEY_LIFETIME_S of every process: a rotation reaches new payloads within it. */
  readonly dataKeyLifetimeS: number;
  /** How long OpenBao stays down for its restart. */
  readonly kmsDownMs: number;
  /** A connection not ended this long after the first start is lost. */
  readonly deadlineMs: number;
  readonly keepLogs: boolean;
}

export class KeysCheckArgumentError extends Error {
  override readonly name = 'KeysCheckArgumentError';
}

export const USAGE = `usage: npm run keys:check -- [options]

Key rotation rehearsed on the stack with the vault-transit key provider: a real OpenBao (config
file, integrated storage, one unseal key share, a file audit device), the Temporal dev server, the
sandbox and worker processes with PAYLOAD_KEY_PROVIDER=vault-transit. Connections are left awaiting
an operator's answer, polling pending data every 10 s, and (completed ones) in their retention
timers; then the transit key is rotated, a worker SIGKILLed, OpenBao restarted (and unsealed), and
only then are the challenges answered. Every history is decoded through the client's data
converter. Last line:
  keys-check: <n> connections, <n> completed as expected, <n> lost, <n> undecodable, <n> KMS calls, key versions <list>

  --connections N          connections, cycling through ${KEYS_CHECK_FLOWS.length} flows (default 24, at least ${KEYS_CHECK_FLOWS.length})
  --workers W              worker processes (default 2)
  --data-key-lifetime-s S  PAYLOAD_DATA_KEY_LIFETIME_S of every process (default 3)
  --kms-down-ms D          how long OpenBao stays down for its restart (default 6000)
  --deadline-ms T          a connection not ended T ms after the first start is lost (default 240000)
  --keep-logs              keep the run directory (OpenBao's storage and audit log, every log)
  --help                   this text

Exit 0 only with every connection completed as expected, 0 lost, 0 undecodable, and payloads of the
key versions before and after the rotation both in the histories; 2 for a bad argument; 1 otherwise.`;

function integer(name: string, text: string | undefined, min: number, max: number): number {
  const value = numberArgument(name, text, min, max);
  if (typeof value === 'string') throw new KeysCheckArgumentError(value);
  return value;
}

/** undefined: --help was asked for. */
export function parseKeysCheckArgs(argv: readonly string[]): KeysCheckOptions | undefined {
  const { flags, values } = readCommandLine(
    argv,
    { values: ['--connections', '--workers', '--data-key-lifetime-s', '--kms-down-ms', '--deadline-ms'], flags: ['--keep-logs', '--help'] },
    refuse,
  );
  if (flags.has('--help')) return undefined;
  const option = (name: string, fallback: number, min: number, max: number) => (values.has(name) ? integer(name, values.get(name), min, max) : fallback);
  return {
    connections: option('--connections', 24, KEYS_CHECK_FLOWS.length, 2_000),
    workers: option('--workers', 2, 1, 16),
    dataKeyLifetimeS: option('--data-key-lifetime-s', 3, 1, 600),
    kmsDownMs: option('--kms-down-ms', 6_000, 0, 600_000),
    deadlineMs: option('--deadline-ms', 240_000, 30_000, 24 * 3_600_000),
    keepLogs: flags.has('--keep-logs'),
  };
}

/** The shared reader's refusal in this check's words ("unknown argument ..." for what it does not know). */
function refuse(name: string, problem: string): KeysCheckArgumentError {
  const unknown = problem === 'unknown option' || problem.startsWith('unexpected argument');
  return new KeysCheckArgumentError(unknown ? `unknown argument ${JSON.stringify(name)}` : `${name} ${problem}`);
}
