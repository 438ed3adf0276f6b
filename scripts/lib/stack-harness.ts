/**
 * The entry of a harness that runs on the production stack as prod:check starts it (PostgreSQL, the
 * Temporal server binary, worker processes): its arguments (exit 2 with the usage), what it needs
 * (exit 3 saying what to install), SIGINT/SIGTERM (every child killed, PostgreSQL stopped, exit 130)
 * and its outcome (0 when it passed, 1 otherwise). deploy-check and bench:burst share it.
 */
import { randomInt } from 'node:crypto';
import { killAllChildren } from '../chaos/processes.js';
import { postgresBinDir, POSTGRES_INSTALL_HINT, type PostgresCluster } from '../prod-check/postgres.js';
import { findServerBinaries, PROVISION_HINT } from '../prod-check/temporal-server.js';

export class MissingPrerequisite extends Error {
  override readonly name = 'MissingPrerequisite';
}

/** PostgreSQL's server binaries and the production server release, or what to run to get them. */
export function requireProductionStack(): void {
  if (!postgresBinDir()) throw new MissingPrerequisite(POSTGRES_INSTALL_HINT);
  const { missing } = findServerBinaries();
  if (missing.length > 0) throw new MissingPrerequisite(`${missing.join('; ')}: ${PROVISION_HINT}`);
}

/** What the harness holds that an interruption must stop. */
export interface StackHoldings {
  runDir?: string | undefined;
  postgres?: PostgresCluster | undefined;
}

export interface StackHarness<Options, Held extends StackHoldings> {
  /** As its lines start: "deploy-check", "burst". */
  readonly name: string;
  readonly usage: string;
  /** The options, or undefined for --help; throws an `isArgumentError` error for a bad argument. */
  parse(argv: readonly string[], randomSeed: () => number): Options | undefined;
  isArgumentError(error: unknown): error is Error;
  readonly held: Held;
  /** The run; true when it passed. */
  run(options: Options, held: Held): Promise<boolean>;
  /** Stops what the run started (after a failure that left it running). */
  release(held: Held): Promise<void>;
}

function write(line: string, stream: NodeJS.WriteStream = process.stdout): void {
  stream.write(`${line}\n`);
}

async function exitCodeOf<Options, Held extends StackHoldings>(harness: StackHarness<Options, Held>): Promise<number> {
  let options: Options | undefined;
  try {
    options = harness.parse(process.argv.slice(2), () => randomInt(0, 2 ** 31));
  } catch (error) {
    if (!harness.isArgumentError(error)) throw error;
    write(`${harness.name}: ${error.message}\n\n${harness.usage}`, process.stderr);
    return 2;
  }
  if (options === undefined) {
    write(harness.usage);
    return 0;
  }
  try {
    requireProductionStack();
  } catch (error) {
    if (!(error instanceof MissingPrerequisite)) throw error;
    write(`${harness.name}: ${error.message}`, process.stderr);
    return 3;
  }
  const { held } = harness;
  const interrupted = (signal: NodeJS.Signals) => {
    write(`\n${harness.name}: ${signal}: killing every process of the run${held.runDir ? `; logs kept in ${held.runDir}` : ''}`, process.stderr);
    killAllChildren();
    held.postgres?.stopSync();
    process.exit(130);
  };
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);
  try {
    return (await harness.run(options, held)) ? 0 : 1;
  } catch (error) {
    write(`${harness.name}: the run could not complete: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`, process.stderr);
    await harness.release(held);
    if (held.runDir) write(`${harness.name}: logs kept in ${held.runDir}`, process.stderr);
    return 1;
  }
}

/** Runs the harness as the process's main and exits with its code; no child outlives it. */
export function runStackHarness<Options, Held extends StackHoldings>(harness: StackHarness<Options, Held>): void {
  process.on('exit', killAllChildren);
  exitCodeOf(harness).then(
    (code) => process.exit(code),
    (error: unknown) => {
      write(`${harness.name}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`, process.stderr);
      process.exit(1);
    },
  );
}
