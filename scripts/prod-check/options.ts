/**
 * `npm run prod:check`'s command line. Bad arguments are ChaosArgumentErrors (exit 2, with the usage).
 */
import { ChaosArgumentError } from '../chaos/options.js';
import { FLOWS } from '../chaos/flows.js';

export interface ProdCheckOptions {
  readonly connections: number;
  readonly workers: number;
  readonly replyDelayMs: number;
  readonly seed: number;
  /** undefined: the chaos default for this size. */
  readonly deadlineMs: number | undefined;
  readonly keepLogs: boolean;
  /** Skip the SIGKILL, the SIGTERM drain and the server restart (a plain load run). */
  readonly noChaos: boolean;
  /** The frontend over mutual TLS with a throwaway CA; workers and clients connect with certificates. */
  readonly tls: boolean;
}

export const DEFAULT_CONNECTIONS = 2 * FLOWS.length;

export const USAGE = `usage: npm run prod:check -- [options]

The production stack on this machine: PostgreSQL (Debian) as persistence and visibility, the
Temporal server v${process.env.TEMPORAL_SERVER_VERSION || '1.29.1'} (not the dev server), the sandbox behind the counting proxy
and worker processes on one task queue. Drives every flow, SIGKILLs one worker, SIGTERMs another
(it must drain and exit 0), restarts the Temporal server once, and checks every connection's end
and data. Last line: prod-check: <same counters as chaos>.

  --connections N     connections to drive, cycling through the ${FLOWS.length} flows (default ${DEFAULT_CONNECTIONS})
  --workers W         worker processes (default 3, at least 2)
  --reply-delay-ms D  hold every Authorize reply D ms after the sandbox answered (default 1000)
  --seed S            seed of the flow order and of the victims (default: random, printed)
  --deadline-ms T     a connection not ended T ms after the first start is stuck (default as chaos)
  --no-chaos          no kill, no SIGTERM, no restart: the stack under load only
  --tls               the frontend over mutual TLS: a throwaway CA, server and client certificates
                      made with openssl; workers and the driver connect with TEMPORAL_TLS_CA_PATH,
                      TEMPORAL_TLS_SERVER_NAME and TEMPORAL_TLS_CERT_PATH/KEY_PATH; clients without a
                      certificate, with another CA or another server name, and plain TCP, must be refused
  --keep-logs         keep the run directory (PostgreSQL data, server, worker logs)
  --help              this text

Needs: apt-get install -y postgresql; bash scripts/provision-temporal.sh server (npm run prod:check
runs the latter itself when the binaries are missing); --tls needs openssl.`;

export function parseProdCheckArgs(argv: readonly string[], randomSeed: () => number): ProdCheckOptions | undefined {
  const values = new Map<string, string>();
  const flags = new Set<string>();
  const valued = ['--connections', '--workers', '--reply-delay-ms', '--seed', '--deadline-ms'];
  const flagged = ['--keep-logs', '--no-chaos', '--tls', '--help'];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    const eq = arg.indexOf('=');
    const name = eq > 0 ? arg.slice(0, eq) : arg;
    if (flagged.includes(name)) {
      if (eq > 0) throw new ChaosArgumentError(name, 'takes no value');
      flags.add(name);
      continue;
    }
    if (!valued.includes(name)) throw new ChaosArgumentError(arg, arg.startsWith('-') ? 'unknown option' : 'unexpected argument (options start with --)');
    if (values.has(name)) throw new ChaosArgumentError(name, 'given twice');
    const value = eq > 0 ? arg.slice(eq + 1) : argv[++i];
    if (value === undefined || value === '' || value.startsWith('--')) throw new ChaosArgumentError(name, 'needs a value');
    values.set(name, value);
  }
  if (flags.has('--help')) return undefined;
  const integer = (name: string, fallback: number, min: number, max: number): number => {
    const text = values.get(name);
    if (text === undefined) return fallback;
    if (!/^\d+$/.test(text)) throw new ChaosArgumentError(name, `must be a whole number from ${min} to ${max} (got ${JSON.stringify(text)})`);
    const value = Number(text);
    if (value < min || value > max) throw new ChaosArgumentError(name, `must be from ${min} to ${max} (got ${value})`);
    return value;
  };
  return {
    connections: integer('--connections', DEFAULT_CONNECTIONS, 1, 5_000),
    workers: integer('--workers', 3, 2, 32),
    replyDelayMs: integer('--reply-delay-ms', 1_000, 0, 60_000),
    seed: integer('--seed', randomSeed(), 0, 2 ** 32 - 1),
    deadlineMs: values.has('--deadline-ms') ? integer('--deadline-ms', 0, 10_000, 24 * 3_600_000) : undefined,
    keepLogs: flags.has('--keep-logs'),
    noChaos: flags.has('--no-chaos'),
    tls: flags.has('--tls'),
  };
}
