/**
 * What the test helpers that run a server binary for one test file (MinIO, OpenBao) share: the tail
 * of its output kept for an error, whether it exited while starting, and its stop (its own process
 * only: SIGTERM, then SIGKILL after a grace).
 */
import type { ChildProcess } from 'node:child_process';

const STOP_GRACE_MS = 5_000;
const OUTPUT_KEPT_CHARS = 4_000;

/** A server that did not start; its output's tail is in the message. */
export class ServerStartError extends Error {
  override name = 'ServerStartError';
  constructor(
    readonly server: string,
    message: string,
    readonly output: string,
  ) {
    super(`${message}${output ? `\n--- ${server} output ---\n${output}` : ''}`);
  }
}

/** The last few thousand characters the child wrote, kept as it writes. */
export function keptOutput(child: ChildProcess): { readonly text: string } {
  const output = { text: '' };
  const keep = (chunk: Buffer): void => {
    output.text = (output.text + chunk.toString()).slice(-OUTPUT_KEPT_CHARS);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  return output;
}

/** Set once the child exits or cannot be spawned: why. */
export function exitWatch(child: ChildProcess): { readonly reason: string | undefined } {
  const watch: { reason: string | undefined } = { reason: child.exitCode !== null ? `exit code ${child.exitCode}` : undefined };
  child.once('exit', (code, signal) => {
    watch.reason = signal ?? `exit code ${code}`;
  });
  child.once('error', (error) => {
    watch.reason = error.message;
  });
  return watch;
}

/** Ends this child only (by its ChildProcess, so by its pid) and waits until it is gone. */
export async function stopServerProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
  await exited;
  clearTimeout(timer);
}
