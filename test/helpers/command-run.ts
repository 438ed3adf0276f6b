/**
 * A command run to its end, its stdout and stderr kept apart: for tests of the project's check
 * scripts (compose:check, image:check), the Python package and the programs they drive.
 */
import { spawn } from 'node:child_process';
import { PROJECT_ROOT } from '../../scripts/lib/temporal-binaries.js';

export interface CommandRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `command` with `args` (at the project's root unless `cwd`; with `env`, or this process's) to its end. */
export function runCommand(
  command: string,
  args: readonly string[],
  options: { readonly cwd?: string; readonly env?: NodeJS.ProcessEnv } = {},
): Promise<CommandRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd ?? PROJECT_ROOT, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}
