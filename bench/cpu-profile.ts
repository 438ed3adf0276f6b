/**
 * Where a worker's CPU goes, read from the V8 profiles `node --cpu-prof --cpu-prof-dir=DIR` writes
 * when the process exits (one .cpuprofile per thread: the main thread, where activities, the codec
 * and the SDK's bridge run, and the workflow threads). Self time is summed per area (the product's
 * own directories, each package under node_modules, Node's internals, the workflow bundle, and V8's
 * garbage collector and "(program)", its native work: the Rust core's included) and per function, over
 * a window of the run, so a worker's start and stop are left out. V8 stamps its samples with the
 * monotonic clock `process.hrtime` reads (CLOCK_MONOTONIC on Linux, in µs), the same in every process,
 * so the window is taken in the benchmark's own process with `monotonicUs()`.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';

interface ProfileNode {
  readonly id: number;
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
}

interface CpuProfile {
  readonly nodes: readonly ProfileNode[];
  readonly startTime: number;
  readonly endTime: number;
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

/** A part of a run, in µs of the monotonic clock (`monotonicUs()`). */
export interface ProfileWindow {
  readonly fromUs: number;
  readonly toUs: number;
}

/** Now on the clock V8's profiles are stamped with, in µs. */
export function monotonicUs(): number {
  return Number(process.hrtime.bigint() / 1000n);
}

export interface CpuSummary {
  /** Sampled time that was not idle, in the window, over every thread, ms. */
  readonly busyMs: number;
  /** Self time per area, ms, largest first. */
  readonly areas: ReadonlyMap<string, number>;
  /** Self time per function (`name area:line`), ms, largest first. */
  readonly functions: ReadonlyMap<string, number>;
  readonly threads: number;
}

const IDLE = new Set(['(idle)', '(root)']);

/** The area a frame belongs to: a product directory, a package, Node, the workflow bundle or V8's own. */
export function areaOf(url: string, functionName: string): string {
  if (url === '') return functionName.startsWith('(') ? functionName : '(native)';
  if (url.startsWith('node:')) return 'node internals';
  const modules = url.lastIndexOf('/node_modules/');
  if (modules >= 0) {
    const parts = url.slice(modules + '/node_modules/'.length).split('/');
    return parts[0]?.startsWith('@') ? `${parts[0]}/${parts[1] ?? ''}` : (parts[0] ?? url);
  }
  if (/workflow-bundle|\/workflows?\.js$|webpack/.test(url)) return 'workflow bundle';
  const product = /\/(?:dist\/)?src\/([^/]+)\//.exec(url);
  if (product) return `product ${product[1]}`;
  if (/\/(?:dist\/)?src\/[^/]+$/.test(url)) return 'product';
  if (url.includes('/sdk-floor/')) return 'floor worker';
  return url.replace(/^file:\/\//, '');
}

function shortUrl(url: string): string {
  const modules = url.lastIndexOf('/node_modules/');
  if (modules >= 0) return url.slice(modules + '/node_modules/'.length);
  const src = url.search(/\/(dist\/)?src\//);
  return src >= 0 ? url.slice(src + 1) : url.replace(/^file:\/\/.*\//, '');
}

function addTo(map: Map<string, number>, key: string, ms: number): void {
  map.set(key, (map.get(key) ?? 0) + ms);
}

function sortedDown(map: Map<string, number>): Map<string, number> {
  return new Map([...map].sort((a, b) => b[1] - a[1]));
}

/** Sums the self time of every profile in `dir` over `window` (the whole profile without one). */
export async function summarizeCpuProfiles(dir: string, window?: ProfileWindow): Promise<CpuSummary> {
  const files = (await readdir(dir)).filter((name) => name.endsWith('.cpuprofile'));
  if (files.length === 0) throw new Error(`no .cpuprofile in ${dir}: was the process started with --cpu-prof and did it exit on its own?`);
  const areas = new Map<string, number>();
  const functions = new Map<string, number>();
  let busyMs = 0;
  for (const file of files) {
    const profile = JSON.parse(await readFile(join(dir, file), 'utf8')) as CpuProfile;
    const byId = new Map(profile.nodes.map((node) => [node.id, node]));
    const from = window?.fromUs ?? -Infinity;
    const to = window?.toUs ?? Infinity;
    let at = profile.startTime;
    profile.samples.forEach((id, index) => {
      const delta = profile.timeDeltas[index] ?? 0;
      at += delta;
      if (at < from || at > to) return;
      const node = byId.get(id);
      if (!node || IDLE.has(node.callFrame.functionName)) return;
      const ms = delta / 1000;
      const area = areaOf(node.callFrame.url, node.callFrame.functionName);
      busyMs += ms;
      addTo(areas, area, ms);
      const name = node.callFrame.functionName || '(anonymous)';
      addTo(functions, node.callFrame.url ? `${name} ${shortUrl(node.callFrame.url)}:${node.callFrame.lineNumber + 1}` : name, ms);
    });
  }
  return { busyMs, areas: sortedDown(areas), functions: sortedDown(functions), threads: files.length };
}

/** What the compared side is called in the lines, and how many of the product's functions are listed. */
export interface ProfileLinesOptions {
  readonly floorName?: string | undefined;
  readonly top?: number | undefined;
}

/** Lines for the benchmarks page: each side's areas per connection, the difference, and the functions where the product spends most beyond the floor (or `floorName`). */
export function cpuProfileLines(product: CpuSummary, floor: CpuSummary, runs: number, { floorName = 'floor', top = 15 }: ProfileLinesOptions = {}): string[] {
  const per = (ms: number) => (ms / runs).toFixed(2);
  const beyond = (mine: ReadonlyMap<string, number>, theirs: ReadonlyMap<string, number>) =>
    [...new Set([...mine.keys(), ...theirs.keys()])]
      .map((name) => ({ name, product: mine.get(name) ?? 0, floor: theirs.get(name) ?? 0 }))
      .sort((a, b) => b.product - b.floor - (a.product - a.floor));
  return [
    `profile (ms a connection, self time in the measured runs, ${product.threads} product and ${floor.threads} ${floorName} thread profiles): product ${per(product.busyMs)}, ${floorName} ${per(floor.busyMs)}, difference ${per(product.busyMs - floor.busyMs)}`,
    ...beyond(product.areas, floor.areas)
      .filter((row) => Math.abs(row.product - row.floor) / runs >= 0.05)
      .map((row) => `  ${row.name}: product ${per(row.product)}, ${floorName} ${per(row.floor)}, difference ${per(row.product - row.floor)}`),
    `the product's functions beyond the ${floorName} (self ms a connection: product, ${floorName}):`,
    ...beyond(product.functions, floor.functions)
      .filter((row) => row.product > row.floor)
      .slice(0, top)
      .map((row) => `  +${per(row.product - row.floor)} ${row.name} (${per(row.product)}, ${per(row.floor)})`),
  ];
}
