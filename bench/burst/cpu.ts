/**
 * CPU time of the stack's processes (Linux /proc): the worker processes, the Temporal server and the
 * sandbox (this process's descendants, told apart by their command line) and PostgreSQL (its
 * postmaster, from postmaster.pid, and the postmaster's children). A process that exited between
 * two samples takes its CPU with it (a worker replaced after a crash, a closed PostgreSQL backend).
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { cpuMs } from '../bench-processes.js';

export type CpuPart = 'workers' | 'server' | 'postgres' | 'sandbox';
/** Per process of the stack: its part and its CPU time so far (ms). */
export type CpuSample = ReadonlyMap<number, { readonly part: CpuPart; readonly ms: number }>;

/** The processes `pid` started (every thread's children). */
export function childrenOf(pid: number): number[] {
  try {
    return readdirSync(`/proc/${pid}/task`).flatMap((task) =>
      readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').split(' ').filter(Boolean).map(Number),
    );
  } catch {
    return [];
  }
}

/** Every process below `pid`, nearest first. */
export function descendantsOf(pid: number): number[] {
  const out: number[] = [];
  const queue = childrenOf(pid);
  while (queue.length > 0) {
    const next = queue.shift() as number;
    out.push(next);
    queue.push(...childrenOf(next));
  }
  return out;
}

function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
  } catch {
    return '';
  }
}

function partOf(command: string): CpuPart | undefined {
  // The product's workers, and the SDK floor's (bench:stack-floor runs one beside the product's).
  if (command.includes('src/worker.ts') || command.includes('dist/src/worker.js') || command.includes('sdk-floor/worker.js')) return 'workers';
  if (command.includes('temporal-server')) return 'server';
  if (command.includes('sandbox/main.ts')) return 'sandbox';
  return undefined;
}

/** CPU (ms) so far of every process of the stack. */
export function sampleCpu(postgresDataDir: string | undefined): CpuSample {
  const sample = new Map<number, { part: CpuPart; ms: number }>();
  const add = (part: CpuPart, pid: number) => {
    const ms = cpuMs(pid);
    if (Number.isFinite(ms)) sample.set(pid, { part, ms });
  };
  for (const pid of descendantsOf(process.pid)) {
    const part = partOf(commandLine(pid));
    if (part) add(part, pid);
  }
  if (postgresDataDir) {
    try {
      const postmaster = Number(readFileSync(join(postgresDataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
      if (postmaster > 0) for (const pid of [postmaster, ...descendantsOf(postmaster)]) add('postgres', pid);
    } catch {
      // Not running (or not readable): no PostgreSQL figure.
    }
  }
  return sample;
}

/**
 * CPU used between two samples, by part: per process the difference (a process born after the
 * first sample counts from 0; one gone by the second counts nothing).
 */
export function cpuBetween(before: CpuSample, after: CpuSample): Record<CpuPart, number> {
  const used: Record<CpuPart, number> = { workers: 0, server: 0, postgres: 0, sandbox: 0 };
  for (const [pid, { part, ms }] of after) used[part] += Math.max(0, ms - (before.get(pid)?.ms ?? 0));
  return used;
}

export function cpuTotal(used: Readonly<Record<CpuPart, number>>): number {
  return used.workers + used.server + used.postgres + used.sandbox;
}

/** The whole machine's CPU time so far (ms), busy and in all, from /proc/stat: what else ran counts too. */
export interface MachineCpu {
  readonly busyMs: number;
  readonly totalMs: number;
  /** The same, per core (cpu0, cpu1, ...): with the storm's CPU split, Temporal's core apart from the rest's. */
  readonly cores: readonly { readonly busyMs: number; readonly totalMs: number }[];
}

/** Clock ticks per second of /proc/stat's counters (USER_HZ, 100 on Linux). */
const TICKS_PER_SECOND = 100;

function countersOf(line: string): { busyMs: number; totalMs: number } {
  const fields = line.trim().split(/\s+/).slice(1).map(Number);
  // user nice system idle iowait irq softirq steal (guest time is already in user).
  const [user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0] = fields;
  const busy = user + nice + system + irq + softirq + steal;
  const toMs = (ticks: number) => (ticks * 1000) / TICKS_PER_SECOND;
  return { busyMs: toMs(busy), totalMs: toMs(busy + idle + iowait) };
}

export function sampleMachineCpu(): MachineCpu {
  const lines = readFileSync('/proc/stat', 'utf8').split('\n');
  return { ...countersOf(lines[0] ?? ''), cores: lines.filter((line) => /^cpu\d+\s/.test(line)).map(countersOf) };
}

/** Each core's busy share between two samples, 0..1, by core number. */
export function coreBusyShares(before: MachineCpu, after: MachineCpu): number[] {
  return after.cores.map((core, index) => busyShare(before.cores[index] ?? { busyMs: 0, totalMs: 0 }, core));
}

/** The share of the machine's CPU (or of one core's) that was busy between two samples, 0..1. */
export function busyShare(before: Pick<MachineCpu, 'busyMs' | 'totalMs'>, after: Pick<MachineCpu, 'busyMs' | 'totalMs'>): number {
  const total = after.totalMs - before.totalMs;
  return total > 0 ? (after.busyMs - before.busyMs) / total : NaN;
}

/** How a wait for a quiet stack ended: the stack's CPU a second in its last sample, and how long it took. */
export interface QuietStack {
  readonly settled: boolean;
  readonly waitedMs: number;
  readonly msPerSecond: number;
}

/**
 * Waits until the stack's own CPU stays under `quietMsPerSecond` for two samples in a row (at most
 * `maxMs`): work that an earlier phase left queued (2,600 enrolments' first workflow tasks, their
 * visibility rows) must not be measured as the next phase's idle.
 */
export async function waitForQuietStack(
  postgresDataDir: string | undefined,
  { quietMsPerSecond, sampleMs, maxMs }: { readonly quietMsPerSecond: number; readonly sampleMs: number; readonly maxMs: number },
): Promise<QuietStack> {
  const from = Date.now();
  let quietSamples = 0;
  let msPerSecond = Number.POSITIVE_INFINITY;
  let before = sampleCpu(postgresDataDir);
  while (Date.now() - from < maxMs) {
    await new Promise((resolve) => setTimeout(resolve, sampleMs));
    const after = sampleCpu(postgresDataDir);
    msPerSecond = (cpuTotal(cpuBetween(before, after)) * 1000) / sampleMs;
    before = after;
    quietSamples = msPerSecond < quietMsPerSecond ? quietSamples + 1 : 0;
    if (quietSamples >= 2) return { settled: true, waitedMs: Date.now() - from, msPerSecond };
  }
  return { settled: false, waitedMs: Date.now() - from, msPerSecond };
}
