/**
 * The storm with Temporal on cores of its own (issue 64, item 2): in production the Temporal server
 * and its database run on their own hosts, not on the workers' cores. Here the server and PostgreSQL
 * are confined to the first core and everything else (this driver, the sandbox, the workers and
 * their replacements) to the rest, with taskset (sched_setaffinity): the driver is pinned before it
 * starts anything, so each child inherits its cores, and the server's and PostgreSQL's processes are
 * moved once they run (every thread: `taskset -a`), their later threads and backends inheriting
 * theirs. The idle and alone baselines run in the same process, so they are measured the same way.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { descendantsOf } from './cpu.js';

export class CpuSplitError extends Error {
  override readonly name = 'CpuSplitError';
}

export interface CpuSplit {
  /** The server's and PostgreSQL's cores, as taskset takes them (`0`). */
  readonly temporal: string;
  /** Everyone else's (`1`, or `1-3`). */
  readonly rest: string;
}

/** The split on this machine: the first core for Temporal, the others for the rest; none on one core. */
export function cpuSplitOf(cores: number = availableParallelism()): CpuSplit | undefined {
  if (cores < 2) return undefined;
  return { temporal: '0', rest: cores === 2 ? '1' : `1-${cores - 1}` };
}

/** How many cores a taskset list names (`0`, `1-3`, `0,2-3`). */
export function coreCount(list: string): number {
  return list.split(',').reduce((count, range) => {
    const [first, last = first] = range.split('-').map(Number);
    return count + last! - first! + 1;
  }, 0);
}

export function describeSplit(split: CpuSplit | undefined): string {
  return split ? `Temporal server and PostgreSQL on core ${split.temporal}; workers, sandbox and driver on core ${split.rest} (taskset)` : 'no CPU split';
}

/** Pins every thread of `pid` to `cores`. */
function pin(pid: number, cores: string): void {
  const result = spawnSync('taskset', ['-a', '-cp', cores, String(pid)], { encoding: 'utf8' });
  if (result.error) throw new CpuSplitError(`taskset is not available to pin processes to cores (${result.error.message}); run with --cpu-split off`);
  if (result.status !== 0) throw new CpuSplitError(`taskset could not pin pid ${pid} to core ${cores}: ${result.stderr.trim()}`);
}

/** Pins `pid` and every process below it. */
function pinTree(pid: number, cores: string): void {
  for (const member of [pid, ...descendantsOf(pid)]) pin(member, cores);
}

/** The driver, before it starts anything: its children inherit these cores. */
export function pinDriver(split: CpuSplit): void {
  pin(process.pid, split.rest);
}

/** The Temporal server's process, once it runs. */
export function pinServer(split: CpuSplit, serverPid: number): void {
  pin(serverPid, split.temporal);
}

/** PostgreSQL's postmaster (from postmaster.pid) and its backends, once it runs: later backends fork from it. */
export function pinPostgres(split: CpuSplit, dataDir: string): void {
  const postmaster = Number(readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  if (!(postmaster > 0)) throw new CpuSplitError(`${join(dataDir, 'postmaster.pid')} names no postmaster`);
  pinTree(postmaster, split.temporal);
}

/** The cores a process may run on (Linux's Cpus_allowed_list), for the bench to show what it measured. */
export function allowedCores(pid: number): string {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return /^Cpus_allowed_list:\s*(\S+)$/m.exec(status)?.[1] ?? '?';
}
