/** How a child process ended, for the scripts that start and stop servers and workers. */
import type { ChildProcess } from 'node:child_process';

export function hasExited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

/** Resolves with how the child ended (at once if it already has). */
export function exitOf(child: ChildProcess): Promise<string> {
  if (hasExited(child)) return Promise.resolve(child.signalCode ?? `code ${child.exitCode}`);
  return new Promise((resolve) => {
    child.once('exit', (code, signal) => resolve(signal ?? `code ${code}`));
    child.once('error', (error) => resolve(`spawn error: ${error.message}`));
  });
}
