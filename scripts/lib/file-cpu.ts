/**
 * How much CPU one test file used, its servers and workers included, for `npm test`'s closing
 * `cpu:` lines: the suite is bound by its CPU work on 2 cores, so the files that burn most are where
 * it gets faster. Each file runs in a control group of its own (cgroup v1's cpuacct, which counts
 * every descendant, even one that left the file's process group); where the runner cannot make one
 * (not root, no cpuacct hierarchy) there are no figures and nothing else changes.
 */
import { existsSync, mkdirSync, readFileSync, rmdirSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';

const CPUACCT = '/sys/fs/cgroup/cpuacct';

export interface FileCpuGroup {
  /** The file's command, made to join the group before it runs: [command, ...args]. */
  wrap(command: string, args: readonly string[]): [string, string[]];
  /** CPU seconds used so far by everything that joined the group. */
  seconds(): number | undefined;
  /** SIGKILLs whatever is still in the group (a process that escaped the file's process group), then removes it. */
  remove(): Promise<void>;
}

/** A group for one file of this run, or undefined where the machine gives none. */
export function fileCpuGroup(run: string, index: number): FileCpuGroup | undefined {
  if (!existsSync(join(CPUACCT, 'cgroup.procs'))) return undefined;
  const dir = join(CPUACCT, `npm-test-${run}-${index}`);
  try {
    mkdirSync(dir);
  } catch {
    return undefined; // not root, or a read-only hierarchy
  }
  const read = (name: string) => readFileSync(join(dir, name), 'utf8');
  return {
    // sh writes its own pid into the group, then becomes the command: nothing runs outside it.
    wrap: (command, args) => ['sh', ['-c', 'echo $$ > "$0" && exec "$@"', join(dir, 'cgroup.procs'), command, ...args]],
    seconds: () => {
      try {
        return Number(read('cpuacct.usage')) / 1e9;
      } catch {
        return undefined;
      }
    },
    remove: async () => {
      for (let attempt = 0; attempt < 20; attempt++) {
        try {
          const left = read('cgroup.procs').split('\n').filter(Boolean).map(Number);
          for (const pid of left) {
            try {
              process.kill(pid, 'SIGKILL');
            } catch {
              // already gone
            }
          }
          rmdirSync(dir);
          return;
        } catch {
          // processes still exiting: the group cannot be removed until they are reaped
          await delay(50);
        }
      }
    },
  };
}
