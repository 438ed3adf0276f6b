/**
 * The product's cached connection against the SDK floor, in one run (bench/floor-ratio.ts): each
 * side's workflow tasks and activities, then the ratio line bench:burst prints too.
 *
 *   npx tsx bench/floor-ratio-run.ts [--runs 30] [--key-provider vault-transit] [--cpu-prof DIR]
 *
 * --key-provider vault-transit adds the product on a local OpenBao's transit to the rotation, and a
 * line with its ratio beside the static one and its KMS calls per 1,000 payloads.
 * --cpu-prof DIR has both workers write V8 CPU profiles in a new directory under DIR and prints where each one's CPU went
 * in the measured runs, by area and the product's top functions (bench/cpu-profile.ts); the profiles
 * stay in DIR for Chrome DevTools or speedscope.
 */
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { cpuProfileLines } from './cpu-profile.js';
import { floorRatioLine, measureFloorRatio, transitLine, type SideFigures } from './floor-ratio.js';

const USAGE = 'usage: floor-ratio-run.ts [--runs 30] (1..1000) [--key-provider static|vault-transit] [--cpu-prof DIR]';
const { values } = parseArgs({ options: { runs: { type: 'string', default: '30' }, 'key-provider': { type: 'string', default: 'static' }, 'cpu-prof': { type: 'string' } } });
const runs = Number(values.runs);
const keyProvider = values['key-provider'];
if (!Number.isInteger(runs) || runs < 1 || runs > 1000 || (keyProvider !== 'static' && keyProvider !== 'vault-transit')) {
  process.stderr.write(`${USAGE}; got --runs ${values.runs} --key-provider ${keyProvider}\n`);
  process.exit(2);
}
const ratio = await measureFloorRatio(runs, keyProvider, values['cpu-prof'] ? resolve(values['cpu-prof']) : undefined);
const describe = (name: string, side: SideFigures) =>
  `${name}: ${side.events} events; on the worker: ${[...side.steps].map(([step, ms]) => `${step} ${ms.toFixed(1)} ms`).join(', ')}\n`;
process.stdout.write(describe('product', ratio.product));
process.stdout.write(describe('floor  ', ratio.floor));
if (ratio.transit) process.stdout.write(describe('transit', ratio.transit.product));
process.stdout.write(`${floorRatioLine(ratio)}\n`);
if (ratio.transit) process.stdout.write(`${transitLine(ratio)}\n`);
if (ratio.profiles) process.stdout.write(`${cpuProfileLines(ratio.profiles.product, ratio.profiles.floor, runs).join('\n')}\nprofiles: ${ratio.profiles.dir}\n`);
process.exit(0);
