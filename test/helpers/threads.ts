/**
 * A process's threads as Linux lists them: each one's name and nice value (its comm, and field 19 of
 * /proc/<pid>/task/<tid>/stat), for tests of WORKER_NICE and WORKER_UNATTENDED_NICE.
 */
import { readdirSync, readFileSync } from 'node:fs';

export interface ThreadPriority {
  readonly name: string;
  readonly nice: number;
}

/** The threads of `pid` (`self`: this process). */
export function threadsOf(pid: number | 'self'): ThreadPriority[] {
  return readdirSync(`/proc/${pid}/task`).map((tid) => {
    const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    // The command name may hold spaces: fields are counted after its closing parenthesis.
    return { name: readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim(), nice: Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]) };
  });
}
