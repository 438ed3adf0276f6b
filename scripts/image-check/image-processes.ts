/**
 * Processes started from the runtime stage's directory as the image would start them: its own files,
 * a bare environment (PATH plus what is given), and a non-root user. Under root they run as nobody
 * (uid 65534) through util-linux's setpriv, which execs the command, so a signal sent to the child
 * reaches node itself, as it reaches the CMD in a container.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { chownSync, createWriteStream, mkdirSync, readFileSync } from 'node:fs';
import { setTimeout as delay } from 'node:timers/promises';
import { onPath } from '../lib/temporal-binaries.js';

export class ImageProcessError extends Error {
  override readonly name = 'ImageProcessError';
}

export const NOBODY_UID = 65534;

/** The command prefix that drops root, and who the processes then run as. */
export function unprivileged(): { prefix: string[]; who: string } {
  const uid = process.getuid?.();
  if (uid !== 0) return { prefix: [], who: `uid ${uid ?? '?'} (this user, not root)` };
  const setpriv = onPath('setpriv');
  if (!setpriv) throw new ImageProcessError("running as root and setpriv (util-linux) is not on PATH: cannot run the image's processes as a non-root user");
  return { prefix: [setpriv, `--reuid=${NOBODY_UID}`, `--regid=${NOBODY_UID}`, '--clear-groups', '--'], who: `uid ${NOBODY_UID} (nobody, through setpriv)` };
}

/** `dir`, made and handed to the user the image's processes run as (unprivileged), who may then write in it. */
export function writableByImage(dir: string): string {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (process.getuid?.() === 0) chownSync(dir, NOBODY_UID, NOBODY_UID);
  return dir;
}

export interface ImageProcessOptions {
  readonly cwd: string;
  readonly env: Record<string, string>;
  readonly prefix: readonly string[];
  readonly logPath: string;
  readonly input?: string;
}

export interface Exit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

const running = new Set<ChildProcess>();

/** Last resort when a check fails half-way: nothing it started outlives it. */
export function killAll(): void {
  for (const child of running) child.kill('SIGKILL');
}

export class ImageProcess {
  readonly child: ChildProcess;
  readonly exited: Promise<Exit>;
  private text = '';
  private exit: Exit | undefined;

  constructor(
    readonly name: string,
    readonly argv: readonly string[],
    options: ImageProcessOptions,
  ) {
    const [command, ...args] = [...options.prefix, ...argv];
    this.child = spawn(command!, args, { cwd: options.cwd, env: { PATH: process.env.PATH ?? '', ...options.env }, stdio: ['pipe', 'pipe', 'pipe'] });
    running.add(this.child);
    const log = createWriteStream(options.logPath);
    const collect = (chunk: Buffer) => {
      this.text += chunk.toString();
      log.write(chunk);
    };
    this.child.stdout?.on('data', collect);
    this.child.stderr?.on('data', collect);
    this.child.stdin?.end(options.input ?? '');
    this.exited = new Promise((resolve) => {
      this.child.once('error', (error) => {
        this.text += `\n(spawn failed: ${error.message})`;
        this.exit = { code: null, signal: null };
        resolve(this.exit);
      });
      this.child.once('close', (code, signal) => {
        running.delete(this.child);
        log.end();
        this.exit = { code, signal };
        resolve(this.exit);
      });
    });
  }

  output(): string {
    return this.text;
  }

  hasExited(): boolean {
    return this.exit !== undefined;
  }

  /** The real user id the process runs as (Linux /proc), to prove the privilege drop. */
  uid(): number | undefined {
    try {
      const line = /^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${this.child.pid}/status`, 'utf8'));
      return line ? Number(line[1]) : undefined;
    } catch {
      return undefined;
    }
  }

  /** Resolves once the output contains `text`; rejects if the process exits first or the time runs out. */
  async waitForOutput(text: string, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!this.text.includes(text)) {
      if (this.exit) throw new ImageProcessError(`${this.name} exited (${this.exit.signal ?? this.exit.code}) before printing "${text}":\n${this.tail()}`);
      if (Date.now() > deadline) throw new ImageProcessError(`${this.name} did not print "${text}" within ${timeoutMs} ms:\n${this.tail()}`);
      await delay(50);
    }
  }

  /** SIGTERM (or `signal`), then SIGKILL after `graceMs`; how it ended. */
  async stop(graceMs: number, signal: NodeJS.Signals = 'SIGTERM'): Promise<Exit & { forced: boolean }> {
    if (this.exit) return { ...this.exit, forced: false };
    this.child.kill(signal);
    let forced = false;
    const timer = setTimeout(() => {
      forced = true;
      this.child.kill('SIGKILL');
    }, graceMs);
    const exit = await this.exited;
    clearTimeout(timer);
    return { ...exit, forced };
  }

  tail(lines = 30): string {
    return this.text.trimEnd().split('\n').slice(-lines).join('\n');
  }
}

/** Runs a command to its end (a health check, a CLI call): exit code and output. */
export async function runToEnd(
  name: string,
  argv: readonly string[],
  options: ImageProcessOptions & { timeoutMs: number },
): Promise<{ code: number | null; output: string }> {
  const process_ = new ImageProcess(name, argv, options);
  const timer = setTimeout(() => process_.child.kill('SIGKILL'), options.timeoutMs);
  const { code, signal } = await process_.exited;
  clearTimeout(timer);
  return { code: signal ? null : code, output: process_.output() };
}
