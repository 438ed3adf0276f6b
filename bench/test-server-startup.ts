/**
 * What starting the tests' own servers costs (OpenBao, moto, MinIO), to judge whether one per run
 * shared by the files would pay: each is started and stopped `--runs` times in this process; the
 * figures are the median wall time to ready and the CPU of one start and stop, the server's (its
 * process, waited for once stopped: /proc/self/stat's cutime and cstime) and this process's (the
 * client calls that make it ready), against the suite's CPU (`ℹ cpu` of a full run).
 *
 *   npm run bench:test-servers -- [--runs 5]
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { startMinio } from '../test/helpers/minio.js';
import { startMoto } from '../test/helpers/moto.js';
import { startOpenBao } from '../test/helpers/openbao.js';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '5' } } });
const runs = Number(values.runs);
if (!Number.isInteger(runs) || runs < 1 || runs > 100) {
  process.stderr.write(`usage: bench/test-server-startup.ts [--runs 5] (1..100); got --runs ${values.runs}\n`);
  process.exit(2);
}

const TICKS_PER_SECOND = 100;

/** This process's CPU and its waited-for children's, in seconds (/proc/self/stat fields 14-17). */
function cpuSeconds(): { self: number; children: number } {
  const fields = readFileSync('/proc/self/stat', 'utf8')
    .replace(/^.*\) /, '')
    .split(' ')
    .map(Number);
  // After the command's closing parenthesis, field 3 is the state: utime is the 12th value on.
  const [utime, stime, cutime, cstime] = fields.slice(11, 15) as [number, number, number, number];
  return { self: (utime + stime) / TICKS_PER_SECOND, children: (cutime + cstime) / TICKS_PER_SECOND };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

const SERVERS: Record<string, () => Promise<{ stop(): Promise<void> }>> = {
  openbao: () => startOpenBao(),
  moto: () => startMoto(),
  minio: () => startMinio(),
};

for (const [name, start] of Object.entries(SERVERS)) {
  const ready: number[] = [];
  const serverCpu: number[] = [];
  const clientCpu: number[] = [];
  for (let run = 0; run < runs; run += 1) {
    const before = cpuSeconds();
    const startedAt = performance.now();
    const server = await start();
    ready.push((performance.now() - startedAt) / 1000);
    await server.stop();
    const after = cpuSeconds();
    serverCpu.push(after.children - before.children);
    clientCpu.push(after.self - before.self);
  }
  console.log(
    `test-server ${name}: ready in ${median(ready).toFixed(2)} s, server cpu ${median(serverCpu).toFixed(2)} s, client cpu ${median(clientCpu).toFixed(2)} s (median of ${runs})`,
  );
}
