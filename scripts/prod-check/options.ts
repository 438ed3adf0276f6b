/**
 * `npm run prod:check`'s command line. Bad arguments are ChaosArgumentErrors (exit 2, with the usage).
 */
import { ChaosArgumentError } from '../chaos/options.js';
import { FLOWS } from '../chaos/flows.js';
import { TEMPORAL_SERVER_VERSION, TEMPORAL_UPGRADE_PATH } from '../lib/temporal-versions.js';
import { readCommandLine } from '../lib/cli-options.js';

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
  /** The server checks a JWT on every call (--authorization, which implies --tls): the fleet's short-lived tokens renewed through TEMPORAL_API_KEY_FILE, and tokens without the role refused. */
  readonly authorization: boolean;
  /** --authorization: how long each fleet token lives (a new one is written every third of it). */
  readonly tokenTtlS: number;
  /**
   * --upgrade-from R: the releases the server runs, oldest first, from R along TEMPORAL_UPGRADE_PATH
   * to the production release, upgraded in place (schema migrations included) while connections run,
   * in place of the plain restart. --redeploy: [production, production], the same steps with no
   * older release. Just [production] without either.
   */
  readonly serverReleases: readonly string[];
}

export const DEFAULT_CONNECTIONS = 2 * FLOWS.length;

export const USAGE = `usage: npm run prod:check -- [options]

The production stack on this machine: PostgreSQL (Debian) as persistence and visibility, the
Temporal server v${TEMPORAL_SERVER_VERSION} (not the dev server), the sandbox behind the counting proxy
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
  --authorization     (implies --tls) the server checks a JWT on every call (Temporal's authorizer and
                      claim mapper, keys from a JWKS the run serves): workers and the driver hold a
                      default:write token in TEMPORAL_API_KEY_FILE, renewed every third of its life
                      as a sidecar would; no token, a read-only one, another namespace's, an expired one,
                      another audience's and one signed by an unpublished key must be refused
  --token-ttl-s S     with --authorization, each token lives S seconds (default 45, from 6 to 3600)
  --upgrade-from R    start on release R of the upgrade path (${TEMPORAL_UPGRADE_PATH.join(', ')}) and,
                      in place of the restart, upgrade the server through each later release to
                      ${TEMPORAL_SERVER_VERSION} while connections run: SIGTERM, the next release's schema
                      migrations with its own sql tool, its binary started on the same databases
  --upgrade           the same from the first release of the path, ${TEMPORAL_UPGRADE_PATH[0]} (npm run prod:upgrade)
  --redeploy          an upgrade's steps with no older release: in place of the restart, SIGTERM, the
                      schema tool's update-schema, then a new ${TEMPORAL_SERVER_VERSION} server on the same
                      databases while connections run (npm test's proof; it needs no older build)
  --keep-logs         keep the run directory (PostgreSQL data, server, worker logs)
  --help              this text

Needs: apt-get install -y postgresql; bash scripts/provision-temporal.sh server (npm run prod:check
runs the latter itself when the binaries are missing); --tls needs openssl.`;

export function parseProdCheckArgs(argv: readonly string[], randomSeed: () => number): ProdCheckOptions | undefined {
  const { flags, values } = readCommandLine(
    argv,
    {
      values: ['--connections', '--workers', '--reply-delay-ms', '--seed', '--deadline-ms', '--upgrade-from', '--token-ttl-s'],
      flags: ['--keep-logs', '--no-chaos', '--tls', '--authorization', '--upgrade', '--redeploy', '--help'],
    },
    (name, problem) => new ChaosArgumentError(name, problem),
  );
  if (flags.has('--help')) return undefined;
  if (values.has('--upgrade-from') && flags.has('--upgrade'))
    throw new ChaosArgumentError('--upgrade', 'starts from the first release of the path: give it or --upgrade-from, not both');
  const upgradeFrom = flags.has('--upgrade') ? TEMPORAL_UPGRADE_PATH[0] : values.get('--upgrade-from');
  if (upgradeFrom !== undefined && flags.has('--no-chaos'))
    throw new ChaosArgumentError('--upgrade-from', 'upgrades in place of the restart, so it cannot go with --no-chaos');
  if (flags.has('--redeploy') && upgradeFrom !== undefined)
    throw new ChaosArgumentError('--redeploy', 'replaces the server with its own release: give it or an upgrade, not both');
  if (flags.has('--redeploy') && flags.has('--no-chaos'))
    throw new ChaosArgumentError('--redeploy', 'redeploys in place of the restart, so it cannot go with --no-chaos');
  if (values.has('--token-ttl-s') && !flags.has('--authorization'))
    throw new ChaosArgumentError('--token-ttl-s', 'is the life of the tokens --authorization hands out: give --authorization too');
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
    // A token must not cross the network in clear: --authorization brings TLS with it.
    tls: flags.has('--tls') || flags.has('--authorization'),
    authorization: flags.has('--authorization'),
    tokenTtlS: integer('--token-ttl-s', 45, 6, 3_600),
    serverReleases: flags.has('--redeploy') ? [TEMPORAL_SERVER_VERSION, TEMPORAL_SERVER_VERSION] : serverReleases(upgradeFrom),
  };
}

function serverReleases(from: string | undefined): readonly string[] {
  if (from === undefined) return [TEMPORAL_SERVER_VERSION];
  const start = TEMPORAL_UPGRADE_PATH.indexOf(from);
  const end = TEMPORAL_UPGRADE_PATH.indexOf(TEMPORAL_SERVER_VERSION);
  if (start < 0 || end < 0 || start >= end) {
    throw new ChaosArgumentError(
      '--upgrade-from',
      `must be a release of the upgrade path before ${TEMPORAL_SERVER_VERSION}: ${TEMPORAL_UPGRADE_PATH.slice(0, Math.max(0, end)).join(', ')} (got ${JSON.stringify(from)})`,
    );
  }
  return TEMPORAL_UPGRADE_PATH.slice(start, end + 1);
}
