/**
 * The same benchmarks on two Node.js runtimes in one run, one after the other on this machine:
 * bench/sdk-floor.ts (Temporal's floor) and bench/connection-timeline.ts (the product's cached
 * connection), first on the runtime the project left (Node 20, end of life since 2026-04-30), then
 * on the one .nvmrc pins. Each runtime comes from the npm registry into the cache
 * (scripts/provision-node.sh) and runs the benchmark and every process it starts; the product
 * refuses an unsupported Node, so the old one runs with ALLOW_UNSUPPORTED_NODE=true.
 *
 *   npm run bench:runtimes -- [--old 20.20.2] [--runs 30]
 */
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { nodeRuntimeProblem } from '../src/settings/node-runtime.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const pinned = readFileSync(join(root, '.nvmrc'), 'utf8').trim().replace(/^v/, '');

const { values } = parseArgs({ options: { old: { type: 'string', default: '20.20.2' }, runs: { type: 'string', default: '30' } } });
const runs = Number(values.runs);
if (!/^\d+\.\d+\.\d+$/.test(values.old) || !Number.isInteger(runs) || runs < 1 || runs > 1000) {
  process.stderr.write(
    `usage: bench/runtimes.ts [--old 20.20.2] [--runs 30] (an exact Node.js release; 1..1000 runs); got --old ${values.old} --runs ${values.runs}\n`,
  );
  process.exit(2);
}

/** The figures each benchmark's `summary:` line carries, by name. */
const FIGURES: Record<string, { script: string; read: Record<string, RegExp> }> = {
  floor: {
    script: 'bench/sdk-floor.ts',
    read: { 'floor cached connection ms': /cached connection ([\d.]+) ms/, 'floor empty workflow ms': /empty workflow ([\d.]+)/ },
  },
  timeline: {
    script: 'bench/connection-timeline.ts',
    read: { 'product start→result ms': /median ([\d.]+) ms/, 'product worker CPU ms': /worker CPU ([\d.]+) ms/ },
  },
};

function nodeBin(version: string): string {
  const result = spawnSync('bash', [join(root, 'scripts/provision-node.sh'), version], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  if (result.status !== 0) throw new Error(`Node.js ${version} could not be provisioned (exit ${result.status})`);
  return result.stdout.trim();
}

/** Runs one benchmark on the node in `bin`, its output passed through, and returns its summary line. */
function runOn(bin: string, version: string, script: string): Promise<string> {
  const env = {
    ...process.env,
    PATH: `${bin}${delimiter}${process.env.PATH ?? ''}`,
    ...(nodeRuntimeProblem(version) ? { ALLOW_UNSUPPORTED_NODE: 'true' } : {}),
  };
  const child = spawn(join(bin, 'node'), ['--import', 'tsx', join(root, script), '--runs', String(runs)], {
    cwd: root,
    env,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let summary = '';
  child.stdout.on('data', (chunk: Buffer) => {
    const text = chunk.toString();
    process.stdout.write(text.replace(/^(?=.)/gm, `[node ${version}] `));
    summary = text.split('\n').find((line) => line.startsWith('summary:')) ?? summary;
  });
  return new Promise((resolve, reject) => {
    child.once('exit', (code, signal) =>
      code === 0 && summary
        ? resolve(summary)
        : reject(new Error(`${script} on Node.js ${version} exited with ${code ?? signal}${summary ? '' : ' without a summary line'}`)),
    );
  });
}

const table = new Map<string, Map<string, number>>();
for (const version of [values.old, pinned]) {
  const bin = nodeBin(version);
  for (const { script, read } of Object.values(FIGURES)) {
    const summary = await runOn(bin, version, script);
    for (const [name, pattern] of Object.entries(read)) {
      const figure = Number(pattern.exec(summary)?.[1]);
      if (!Number.isFinite(figure)) throw new Error(`${script}'s summary has no ${name}: ${summary}`);
      table.set(name, (table.get(name) ?? new Map<string, number>()).set(version, figure));
    }
  }
}

process.stdout.write(`\n${'figure (median)'.padEnd(30)}${`node ${values.old}`.padStart(14)}${`node ${pinned}`.padStart(14)}   ratio\n`);
for (const [name, byVersion] of table) {
  const [before, after] = [byVersion.get(values.old)!, byVersion.get(pinned)!];
  process.stdout.write(`${name.padEnd(30)}${before.toFixed(1).padStart(14)}${after.toFixed(1).padStart(14)}   ${(after / before).toFixed(2)}x\n`);
}
const line = [...table]
  .map(([name, byVersion]) => `${name.replace(/ ms$/, '')} ${byVersion.get(values.old)!.toFixed(1)} → ${byVersion.get(pinned)!.toFixed(1)} ms`)
  .join(', ');
process.stdout.write(`summary: node ${values.old} → ${pinned}, ${runs} runs each: ${line}\n`);
