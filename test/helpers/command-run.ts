/**
 * A command run to its end at the project's root, its stdout and stderr kept apart: for tests of
 * the project's check scripts (compose:check, image:check) and of the programs they drive.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface CommandRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `command` with `args` at the project's root (with `env`, or this process's) to its end, its output kept apart. */
export function runCommand(command: string, args: readonly string[], env?: NodeJS.ProcessEnv): Promise<CommandRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: ROOT, env });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}
