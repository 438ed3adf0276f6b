/**
 * The process around a rehearsal (keys:check, security:check): its command line (a bad argument
 * exits 2 with the usage, --help prints it), SIGINT or SIGTERM killing every process the run started,
 * a run that throws releasing what it made and keeping its logs, and exit 0 only for a run that passed.
 */
import { killAllChildren } from '../chaos/processes.js';

export interface Rehearsal<Options, Resources extends { runDir?: string | undefined }> {
  /** The prefix of its lines ("security-check"). */
  readonly label: string;
  readonly usage: string;
  /** The options, or undefined for --help; throws `argumentError` for a bad argument. */
  parse(args: readonly string[]): Options | undefined;
  readonly argumentError: abstract new (...args: never[]) => Error;
  /** True when the run passed. */
  run(options: Options, resources: Resources): Promise<boolean>;
  release(resources: Resources): Promise<void>;
}

/** Runs `rehearsal` as this process's main and exits with its code. */
export function runRehearsal<Options, Resources extends { runDir?: string | undefined }>(rehearsal: Rehearsal<Options, Resources>, resources: Resources): void {
  const { label } = rehearsal;
  const main = async (): Promise<number> => {
    let options: Options | undefined;
    try {
      options = rehearsal.parse(process.argv.slice(2));
    } catch (error) {
      if (error instanceof rehearsal.argumentError) {
        process.stderr.write(`${label}: ${error.message}\n\n${rehearsal.usage}\n`);
        return 2;
      }
      throw error;
    }
    if (options === undefined) {
      process.stdout.write(`${rehearsal.usage}\n`);
      return 0;
    }
    const interrupted = (signal: NodeJS.Signals) => {
      process.stderr.write(`\n${label}: ${signal}: killing every process of the run${resources.runDir ? `; logs kept in ${resources.runDir}` : ''}\n`);
      killAllChildren();
      process.exit(130);
    };
    process.once('SIGINT', interrupted);
    process.once('SIGTERM', interrupted);
    try {
      return (await rehearsal.run(options, resources)) ? 0 : 1;
    } catch (error) {
      process.stderr.write(`${label}: the run could not complete: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      await rehearsal.release(resources);
      if (resources.runDir) process.stderr.write(`${label}: logs kept in ${resources.runDir}\n`);
      return 1;
    }
  };
  // Whatever happens, no server or worker outlives this process.
  process.on('exit', killAllChildren);
  main().then(
    (code) => process.exit(code),
    (error: unknown) => {
      process.stderr.write(`${label}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      process.exit(1);
    },
  );
}
