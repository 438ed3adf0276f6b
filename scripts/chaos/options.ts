/**
 * The chaos run's command line: every option, its default and its bounds. A bad argument is a
 * ChaosArgumentError naming the argument; the entry prints it with the usage and exits 2.
 */
import { FLOWS } from './flows.js';
import { readCommandLine, type CommandLine } from '../lib/cli-options.js';

export type KillTarget = 'window' | 'random';
export type ServerStopSignal = 'SIGTERM' | 'SIGKILL';

export interface ChaosOptions {
  /** Connections driven in the run (the flow catalogue is cycled through). */
  readonly connections: number;
  /** Every Authorize reply is held this long by the proxy after the sandbox answered. */
  readonly replyDelayMs: number;
  /** Mean time between worker SIGKILLs (each wait is drawn from 0.5x to 1.5x); 0: no kills. */
  readonly killEveryMs: number;
  /** Whom a kill hits: a worker holding an Authorize reply in the delay window when there is one, or anyone. */
  readonly killTarget: KillTarget;
  /** Worker processes kept running (a killed one is replaced at once). */
  readonly workers: number;
  /** Seeds the flow order, kill times and victims; printed so a run can be repeated. */
  readonly seed: number;
  /** When the dev server is restarted, in ms after the first connection starts; 0: never. */
  readonly serverRestartAtMs: number;
  /** How the dev server is stopped for its restart. */
  readonly serverStopSignal: ServerStopSignal;
  /** Connections not ended this long after the first one started count as stuck; undefined: see defaultDeadlineMs. */
  readonly deadlineMs: number | undefined;
  /** Keep the run directory (dev server database, every process's log, the histories and the payload key). */
  readonly keepLogs: boolean;
  /** Every running connection's state is also queried this often (consoles and dashboards watching); 0: not. */
  readonly queryEveryMs: number;
}

export class ChaosArgumentError extends Error {
  override readonly name = 'ChaosArgumentError';
  constructor(
    /** The argument as typed, e.g. "--connections". */
    readonly argument: string,
    readonly problem: string,
  ) {
    super(`${argument}: ${problem}`);
  }
}

export const USAGE = `usage: npm run chaos -- [options]

  --connections N           connections to drive, cycling through the flows (default ${FLOWS.length}: each flow once)
  --reply-delay-ms D        hold every Authorize reply D ms after the sandbox answered (default 1000)
  --kill-every-ms K         SIGKILL a worker every K ms on average while connections start and for
                            two intervals more, 0 = never (default 8000)
  --kill-target T           window: at its time, a kill waits for a worker whose Authorize answer reply
                            the proxy holds and kills that one (any worker if none comes before the
                            kill window closes); random: any worker at once (default window)
  --workers W               worker processes (default 2)
  --seed S                  seed of the flow order and of the kills (default: random, printed)
  --server-restart-at-ms T  restart the dev server T ms after the first start, 0 = never (default 8000)
  --server-stop SIGNAL      SIGTERM or SIGKILL for that restart (default SIGTERM)
  --deadline-ms T           a connection not ended T ms after the first start is stuck (default: the kill
                            window + 120 s, as a worker killed mid-activity leaves the activity to its
                            timeout before another worker retries it, + 200 ms per connection + 10 x D)
  --query-every-ms Q        also query the state of every running connection every Q ms, as operators'
                            consoles and dashboards watching everything would (one query in flight
                            per connection: a tick that finds the last one still out is skipped and
                            counted); failures counted by gRPC code with the driver's; 0 = off (default 0)
  --keep-logs               keep the run directory (server database, worker and server logs, the
                            run's histories and its payload key, mode 0600); a failed run keeps it anyway
  --help                    this text`;

const MAX_REPLY_DELAY_MS = 60_000;
/** Below this a state watcher would be a busy loop of queries rather than a console refreshing. */
export const MIN_QUERY_EVERY_MS = 10;

type Raw = CommandLine;

const VALUE_OPTIONS = [
  '--connections',
  '--reply-delay-ms',
  '--kill-every-ms',
  '--kill-target',
  '--workers',
  '--seed',
  '--server-restart-at-ms',
  '--server-stop',
  '--deadline-ms',
  '--query-every-ms',
] as const;
const FLAG_OPTIONS = ['--keep-logs', '--help'] as const;

function split(argv: readonly string[]): Raw {
  return readCommandLine(argv, { flags: FLAG_OPTIONS, values: VALUE_OPTIONS }, (name, problem) => new ChaosArgumentError(name, problem));
}

function integer(raw: Raw, name: string, fallback: number, min: number, max: number, unit = ''): number {
  const text = raw.values.get(name);
  if (text === undefined) return fallback;
  if (!/^\d+$/.test(text)) throw new ChaosArgumentError(name, `must be a whole number from ${min} to ${max}${unit} (got ${JSON.stringify(text)})`);
  const value = Number(text);
  if (value < min || value > max) throw new ChaosArgumentError(name, `must be from ${min} to ${max}${unit} (got ${value})`);
  return value;
}

function choice<T extends string>(raw: Raw, name: string, fallback: T, allowed: readonly T[]): T {
  const text = raw.values.get(name);
  if (text === undefined) return fallback;
  if (!(allowed as readonly string[]).includes(text)) throw new ChaosArgumentError(name, `must be one of ${allowed.join(', ')} (got ${JSON.stringify(text)})`);
  return text as T;
}

/**
 * A worker killed during an activity leaves it to its timeout (heartbeat or start-to-close, up to
 * 90 s) before another worker retries it: the deadline allows that after the last kill, plus the
 * slowest flow (five Authorize attempts with backoff, ~25 s), held replies and many starts.
 */
export function defaultDeadlineMs(killWindowMs: number, connections: number, replyDelayMs: number): number {
  return killWindowMs + 120_000 + connections * 200 + replyDelayMs * 10;
}

/** Parses the arguments after `chaos.ts`; undefined means --help was asked for. */
export function parseChaosArgs(argv: readonly string[], randomSeed: () => number): ChaosOptions | undefined {
  const raw = split(argv);
  if (raw.flags.has('--help')) return undefined;
  const connections = integer(raw, '--connections', FLOWS.length, 1, 5_000);
  const replyDelayMs = integer(raw, '--reply-delay-ms', 1_000, 0, MAX_REPLY_DELAY_MS, ' ms (the worker gives up on a reply after 90 s)');
  const killEveryMs = integer(raw, '--kill-every-ms', 8_000, 0, 3_600_000, ' ms');
  if (killEveryMs > 0 && killEveryMs < 1_000)
    throw new ChaosArgumentError(
      '--kill-every-ms',
      `must be 0 (no kills) or at least 1000 ms, so a replacement worker can start between kills (got ${killEveryMs})`,
    );
  const queryEveryMs = integer(raw, '--query-every-ms', 0, 0, 3_600_000, ' ms');
  if (queryEveryMs > 0 && queryEveryMs < MIN_QUERY_EVERY_MS) {
    throw new ChaosArgumentError('--query-every-ms', `must be 0 (no state watchers) or at least ${MIN_QUERY_EVERY_MS} ms (got ${queryEveryMs})`);
  }
  return {
    connections,
    replyDelayMs,
    killEveryMs,
    killTarget: choice<KillTarget>(raw, '--kill-target', 'window', ['window', 'random']),
    workers: integer(raw, '--workers', 2, 1, 32),
    seed: integer(raw, '--seed', randomSeed(), 0, 2 ** 32 - 1),
    serverRestartAtMs: integer(raw, '--server-restart-at-ms', 8_000, 0, 3_600_000, ' ms'),
    serverStopSignal: choice<ServerStopSignal>(raw, '--server-stop', 'SIGTERM', ['SIGTERM', 'SIGKILL']),
    deadlineMs: raw.values.has('--deadline-ms') ? integer(raw, '--deadline-ms', 0, 10_000, 24 * 3_600_000, ' ms') : undefined,
    keepLogs: raw.flags.has('--keep-logs'),
    queryEveryMs,
  };
}
