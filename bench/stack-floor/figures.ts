/**
 * The arithmetic and the lines of `npm run bench:stack-floor`: the whole stack's CPU a run of the
 * product's cached connection beside the same of Temporal's floor for its shape (and of that shape
 * making the service's calls), each batch's
 * stack CPU less the stack's idle over the same time, by part (workers, server, PostgreSQL, sandbox).
 * Pure: checked without a server (test/bench/stack-floor.test.ts).
 */
import { median } from '../bench-processes.js';
import type { CpuPart } from '../burst/cpu.js';

export const CPU_PARTS: readonly CpuPart[] = ['workers', 'server', 'postgres', 'sandbox'];

export type PartsMs = Readonly<Record<CpuPart, number>>;

/** One batch of one side: the stack's CPU by part over it, how long it took, the idle read just before. */
export interface BatchSample {
  readonly runs: number;
  readonly seconds: number;
  readonly cpuMs: PartsMs;
  /** The stack's CPU a second with nothing running, by part, read just before the batch. */
  readonly idleMsPerSecond: PartsMs;
}

/** CPU a run of one batch beyond the stack's idle, by part; a part whose idle read above its use counts 0, not less. */
export function perRun({ runs, seconds, cpuMs, idleMsPerSecond }: BatchSample): PartsMs {
  const part = (name: CpuPart) => Math.max(0, cpuMs[name] - idleMsPerSecond[name] * seconds) / runs;
  return { workers: part('workers'), server: part('server'), postgres: part('postgres'), sandbox: part('sandbox') };
}

export function totalOf(parts: PartsMs): number {
  return CPU_PARTS.reduce((sum, name) => sum + parts[name], 0);
}

/** One side's figures over its batches: the median total a run, and each part's median (the benches' median: the upper middle of an even count; the parts' medians need not add up to the total's). */
export interface SideFigures {
  readonly totalMs: number;
  readonly parts: PartsMs;
  readonly batches: number;
}

export function sideFigures(samples: readonly BatchSample[]): SideFigures {
  const runs = samples.map(perRun);
  const part = (name: CpuPart) => median(runs.map((run) => run[name]));
  return {
    totalMs: median(runs.map(totalOf)),
    parts: { workers: part('workers'), server: part('server'), postgres: part('postgres'), sandbox: part('sandbox') },
    batches: samples.length,
  };
}

/** The floor a line compares the product with: the no-op floor (the closing line), or the floor that makes the service's calls. */
export type FloorKind = 'floor' | 'floor with calls';

/**
 * The closing line, e.g.
 *   stack floor: product 151.2 ms, floor 98.4 ms of stack CPU a run (1.54x); workers 60.1 / 40.2, server 50.3 / 35.0, postgres 30.2 / 23.1, sandbox 10.5 / 0.0; medians of 6 batches of 20 a side, alternating
 * and, against the floor with the service's calls, the same line beginning
 *   stack floor with the service's calls: product 151.2 ms, floor with calls 110.3 ms of stack CPU a run (1.37x); ...
 */
export function stackFloorLine(product: SideFigures, floor: SideFigures, perBatch: number, kind: FloorKind = 'floor'): string {
  const parts = CPU_PARTS.map((name) => `${name} ${product.parts[name].toFixed(1)} / ${floor.parts[name].toFixed(1)}`).join(', ');
  const title = kind === 'floor' ? 'stack floor' : "stack floor with the service's calls";
  return (
    `${title}: product ${product.totalMs.toFixed(1)} ms, ${kind} ${floor.totalMs.toFixed(1)} ms of stack CPU a run (${(product.totalMs / floor.totalMs).toFixed(2)}x); ` +
    `${parts}; medians of ${product.batches} batches of ${perBatch} a side, alternating`
  );
}

const LINE =
  /^(?:stack floor|stack floor with the service's calls): product (\d+\.\d) ms, (floor|floor with calls) (\d+\.\d) ms of stack CPU a run \((\d+\.\d\d)x\); workers [\d.]+ \/ [\d.]+, server [\d.]+ \/ [\d.]+, postgres [\d.]+ \/ [\d.]+, sandbox [\d.]+ \/ [\d.]+; medians of (\d+) batches of (\d+) a side, alternating$/;

/** A line of stackFloorLine's read back (the test's check that a run printed it whole); undefined when it is not one. */
export function parseStackFloorLine(
  line: string,
): { kind: FloorKind; productMs: number; floorMs: number; ratio: number; batches: number; perBatch: number } | undefined {
  const match = LINE.exec(line);
  if (!match) return undefined;
  const kind = match[2] as FloorKind;
  // The title must name the floor the line compares with.
  if (line.startsWith('stack floor:') !== (kind === 'floor')) return undefined;
  const [productMs, floorMs, ratio, batches, perBatch] = [match[1], ...match.slice(3)].map(Number) as [number, number, number, number, number];
  return { kind, productMs, floorMs, ratio, batches, perBatch };
}
