/**
 * WORKER_NICE: a worker of the unattended pool lowers its own CPU priority so that, on a host it
 * shares with the service pool, it takes the cores live work leaves. Linux keeps a nice value per
 * thread, and Node has started its V8 and libuv threads before any code runs: each is lowered, and
 * the threads started later (workflow threads, the SDK's core) inherit it from theirs.
 */
import { readdirSync } from 'node:fs';
import { setPriority } from 'node:os';

export class CpuPriorityError extends Error {
  override readonly name = 'CpuPriorityError';
  constructor(readonly nice: number, override readonly cause: unknown) {
    super(`WORKER_NICE=${nice}: cannot lower this worker's CPU priority: ${cause instanceof Error ? cause.message : String(cause)}`);
  }
}

/** Lowers every thread of this process to `nice` (0 leaves them as they are); returns the threads changed. */
export function lowerCpuPriority(nice: number): number {
  if (nice === 0) return 0;
  let threads: number[];
  try {
    threads = readdirSync('/proc/self/task').map(Number).filter(Number.isInteger);
  } catch {
    threads = [0]; // no /proc (not Linux): the process as the system counts it
  }
  let changed = 0;
  for (const thread of threads) {
    try {
      setPriority(thread, nice);
      changed += 1;
    } catch (error) {
      // A thread that ended since the listing is no one's concern.
      // os.setPriority throws a SystemError whose `info.code` is the errno's name.
      if ((error as { info?: { code?: string } }).info?.code !== 'ESRCH') throw new CpuPriorityError(nice, error);
    }
  }
  return changed;
}
