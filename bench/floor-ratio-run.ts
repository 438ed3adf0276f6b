/**
 * The product's cached connection against the SDK floor, in one run (bench/floor-ratio.ts): each
 * side's workflow tasks and activities, then the ratio line bench:burst prints too, and the calls side's.
 *
 *   npx tsx bench/floor-ratio-run.ts [--runs 30] [--key-provider vault-transit] [--cpu-prof DIR] [--no-calls] [--worker-runtime compiled|tsx] [--payload-encryption off]
 *
 * A third side runs in the rotation unless --no-calls: the floor's shape with the service's two calls
 * made for real, the plainest way; its two lines say what the calls cost the floor by themselves and
 * what the product adds beyond them. --worker-runtime says how the product's worker runs (the floors'
 * are always compiled).
 * --payload-encryption off runs the product's worker and client with PAYLOAD_ENCRYPTION=off (the
 * floors never encrypt): beside a default run, what sealing the product's payloads costs it.
 * --key-provider vault-transit adds the product on a local OpenBao's transit to the rotation, and a
 * line with its ratio beside the static one and its KMS calls per 1,000 payloads.
 * --cpu-prof DIR has the product's and the floors' workers write V8 CPU profiles in a new directory under DIR and prints where each one's CPU went
 * in the measured runs, by area and the product's top functions (bench/cpu-profile.ts), against the
 * floor and, with the calls side, against the floor with calls; the profiles stay in DIR for Chrome
 * DevTools or speedscope.
 */
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { cpuProfileLines } from './cpu-profile.js';
import { workerRuntime } from './bench-processes.js';
import { callsLines, floorRatioLine, measureFloorRatio, transitLine, type SideFigures } from './floor-ratio.js';

const USAGE =
  'usage: floor-ratio-run.ts [--runs 30] (1..1000) [--key-provider static|vault-transit] [--cpu-prof DIR] [--no-calls] [--worker-runtime compiled|tsx] (default: BENCH_WORKER_RUNTIME, compiled) [--payload-encryption auto|off] (off: not with vault-transit)';
const OPTIONS = {
  runs: { type: 'string', default: '30' },
  'key-provider': { type: 'string', default: 'static' },
  'cpu-prof': { type: 'string' },
  'no-calls': { type: 'boolean', default: false },
  'worker-runtime': { type: 'string' },
  'payload-encryption': { type: 'string', default: 'auto' },
} as const;
function parsedArguments() {
  try {
    return parseArgs({ options: OPTIONS }).values;
  } catch (error) {
    // An unknown option or a missing value: said with the usage, not as a stack trace.
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n${USAGE}\n`);
    process.exit(2);
  }
}
const values = parsedArguments();
const runs = Number(values.runs);
const keyProvider = values['key-provider'];
const runtime = values['worker-runtime'] ?? workerRuntime();
const payloadEncryption = values['payload-encryption'];
if (
  !Number.isInteger(runs) ||
  runs < 1 ||
  runs > 1000 ||
  (keyProvider !== 'static' && keyProvider !== 'vault-transit') ||
  (runtime !== 'compiled' && runtime !== 'tsx') ||
  (payloadEncryption !== 'auto' && payloadEncryption !== 'off') ||
  (payloadEncryption === 'off' && keyProvider === 'vault-transit')
) {
  process.stderr.write(
    `${USAGE}; got --runs ${values.runs} --key-provider ${keyProvider} --worker-runtime ${runtime} --payload-encryption ${payloadEncryption}\n`,
  );
  process.exit(2);
}
const ratio = await measureFloorRatio(runs, {
  keyProvider,
  cpuProfileDir: values['cpu-prof'] ? resolve(values['cpu-prof']) : undefined,
  serviceCalls: !values['no-calls'],
  workerRuntime: runtime,
  payloadEncryption,
});
if (payloadEncryption === 'off')
  process.stdout.write("payload encryption: off (PAYLOAD_ENCRYPTION=off on the product's worker and client; the floors never encrypt)\n");
const describe = (name: string, side: SideFigures) =>
  `${name}: ${side.events} events; on the worker: ${[...side.steps].map(([step, ms]) => `${step} ${ms.toFixed(1)} ms`).join(', ')}\n`;
process.stdout.write(describe('product', ratio.product));
process.stdout.write(describe('floor  ', ratio.floor));
if (ratio.transit) process.stdout.write(describe('transit', ratio.transit.product));
if (ratio.calls) process.stdout.write(describe('calls  ', ratio.calls.floorWithCalls));
process.stdout.write(`${floorRatioLine(ratio)}\n`);
if (ratio.transit) process.stdout.write(`${transitLine(ratio)}\n`);
for (const line of callsLines(ratio)) process.stdout.write(`${line}\n`);
if (ratio.profiles) {
  const { product, floor, calls, dir } = ratio.profiles;
  process.stdout.write(`${cpuProfileLines(product, floor, runs).join('\n')}\n`);
  if (calls) process.stdout.write(`${cpuProfileLines(product, calls, runs, { floorName: 'floor with calls' }).join('\n')}\n`);
  process.stdout.write(`profiles: ${dir}\n`);
}
process.exit(0);
