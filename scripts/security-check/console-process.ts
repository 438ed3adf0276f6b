/**
 * The operator console as its own process, as a deployment runs it (`src/console/server.ts`),
 * its tokens given in its environment: the attacks on its codec endpoint go through it, and the
 * run's argv and logs are then searched for those tokens (a process started with a token in its
 * command line, or a console that logs one, would be found).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../lib/temporal-binaries.js';
import { track } from '../chaos/processes.js';

const CONSOLE_ENTRY = 'src/console/server.ts';
const READY_WAIT_MS = 60_000;

export class ConsoleProcessError extends Error {
  override name = 'ConsoleProcessError';
}

export interface ConsoleProcess {
  readonly url: string;
  readonly child: ChildProcess;
  /** Where it keeps its audit trail (`<runDir>/<name>-audit.jsonl` unless its env named one). */
  readonly auditStore: string;
  stop(): Promise<void>;
}

/** Starts the console with `env` (its tokens included), its output in `<runDir>/<name>.log`; resolves once it listens. */
export async function startConsoleProcess(runDir: string, env: Readonly<Record<string, string>>, name = 'console'): Promise<ConsoleProcess> {
  const logFile = createWriteStream(join(runDir, `${name}.log`));
  const auditStore = env.AUDIT_STORE ?? `file:${join(runDir, `${name}-audit.jsonl`)}`;
  const child = track(
    spawn(process.execPath, ['--import', 'tsx', CONSOLE_ENTRY], {
      cwd: PROJECT_ROOT,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, CONSOLE_HOST: '127.0.0.1', CONSOLE_PORT: '0', ...env, AUDIT_STORE: auditStore },
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  let output = '';
  const listening = new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new ConsoleProcessError(`the console did not listen within ${READY_WAIT_MS / 1000} s:\n${output.slice(-2000)}`)),
      READY_WAIT_MS,
    );
    const read = (chunk: Buffer) => {
      logFile.write(chunk);
      output += chunk.toString('utf8');
      const url = /operator console on (http:\/\/\S+?)\/ /.exec(output)?.[1];
      if (url !== undefined) {
        clearTimeout(timer);
        resolve(url);
      }
    };
    child.stdout?.on('data', read);
    child.stderr?.on('data', read);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new ConsoleProcessError(`the console exited (${code ?? signal}) before it listened:\n${output.slice(-2000)}`));
    });
  });
  const url = await listening;
  return {
    url,
    child,
    auditStore,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = once(child, 'exit');
        child.kill('SIGTERM');
        await exited;
      }
      logFile.end();
      await once(logFile, 'close').catch(() => undefined);
    },
  };
}
