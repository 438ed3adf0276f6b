/**
 * WORKER_NICE: a worker of the unattended pool lowers its own CPU priority so that, on a host it
 * shares with the service pool, it takes the cores live work leaves. Linux keeps a nice value per
 * thread, and Node has started its V8 and libuv threads before any code runs: each is lowered, and
 * the threads started later (workflow threads, the SDK's core) inherit it from theirs.
 *
 * WORKER_UNATTENDED_NICE: a process that polls both pools' queues lowers only the unattended
 * pool's workflow threads (the Node worker threads its SDK worker starts): a book's workflow
 * tasks then take the CPU the live path leaves, in the same process.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';

export class CpuPriorityError extends Error {
  override readonly name = 'CpuPriorityError';
  constructor(
    readonly setting: string,
    readonly nice: number,
    override readonly cause: unknown,
  ) {
    super(`${setting}=${nice}: cannot lower this worker's CPU priority: ${cause instanceof Error ? cause.message : String(cause)}`);
  }
}

/** This process's threads by id; undefined without /proc (not Linux). */
function threadIds(): number[] | undefined {
  try {
    return readdirSync('/proc/self/task').map(Number).filter(Number.isInteger);
  } catch {
    return undefined;
  }
}

/** Lowers every thread of this process to `nice` (0 leaves them as they are); returns the threads changed. */
export function lowerCpuPriority(nice: number): number {
  if (nice === 0) return 0;
  // No /proc (not Linux): the process as the system counts it.
  return lowerThreads(threadIds() ?? [0], nice, 'WORKER_NICE');
}

/** What Node names a worker thread started without a name (the SDK's workflow threads). */
const NODE_WORKER_THREAD = 'WorkerThread';

/** This process's Node worker threads by id; empty without /proc (not Linux). */
function nodeWorkerThreads(): Set<number> {
  const threads = new Set<number>();
  for (const thread of threadIds() ?? []) {
    try {
      if (readFileSync(`/proc/self/task/${thread}/comm`, 'utf8').trim() === NODE_WORKER_THREAD) threads.add(thread);
    } catch {
      // a thread that ended since the listing
    }
  }
  return threads;
}

/**
 * Runs `start` (an SDK worker's creation: the SDK starts its workflow threads, and waits for them,
 * within it) and lowers the Node worker threads it started to `nice`; resolves to what it made, how
 * many threads it started and how many were lowered (none with nice 0, where threads are not listed:
 * not Linux, or where they already ran at `nice` or lower).
 */
export async function lowerThreadsStartedBy<T>(
  nice: number,
  start: () => Promise<T>,
): Promise<{ readonly value: T; readonly started: number; readonly lowered: number }> {
  if (nice === 0) return { value: await start(), started: 0, lowered: 0 };
  const before = nodeWorkerThreads();
  const value = await start();
  const started = [...nodeWorkerThreads()].filter((thread) => !before.has(thread));
  return { value, started: started.length, lowered: lowerThreads(started, nice, 'WORKER_UNATTENDED_NICE') };
}

/**
 * Only lowers: a thread already at `nice` or below it (the process started under an outer `nice`, or
 * WORKER_NICE above WORKER_UNATTENDED_NICE) is left as it is, where setting it would raise its priority:
 * refused without privileges, and not what either setting asks for.
 */
function lowerThreads(threads: readonly number[], nice: number, setting: string): number {
  let changed = 0;
  for (const thread of threads) {
    try {
      if (getPriority(thread) >= nice) continue;
      setPriority(thread, nice);
      changed += 1;
    } catch (error) {
      // A thread that ended since the listing is no one's concern.
      // os.setPriority throws a SystemError whose `info.code` is the errno's name.
      if ((error as { info?: { code?: string } }).info?.code !== 'ESRCH') throw new CpuPriorityError(setting, nice, error);
    }
  }
  return changed;
}
