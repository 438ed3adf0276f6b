/**
 * The product's cached connection against the SDK floor, in one run (bench/floor-ratio.ts): each
 * side's workflow tasks and activities, then the ratio line bench:burst prints too.
 *
 *   npx tsx bench/floor-ratio-run.ts [--runs 30] [--key-provider vault-transit]
 *
 * --key-provider vault-transit adds the product on a local OpenBao's transit to the rotation, and a
 * line with its ratio beside the static one and its KMS calls per 1,000 payloads.
 */
import { parseArgs } from 'node:util';
import { floorRatioLine, measureFloorRatio, transitLine, type SideFigures } from './floor-ratio.js';

const USAGE = 'usage: floor-ratio-run.ts [--runs 30] (1..1000) [--key-provider static|vault-transit]';
const { values } = parseArgs({ options: { runs: { type: 'string', default: '30' }, 'key-provider': { type: 'string', default: 'static' } } });
const runs = Number(values.runs);
const keyProvider = values['key-provider'];
if (!Number.isInteger(runs) || runs < 1 || runs > 1000 || (keyProvider !== 'static' && keyProvider !== 'vault-transit')) {
  process.stderr.write(`${USAGE}; got --runs ${values.runs} --key-provider ${keyProvider}\n`);
  process.exit(2);
}
const ratio = await measureFloorRatio(runs, keyProvider);
const describe = (name: string, side: SideFigures) =>
  `${name}: ${side.events} events; on the worker: ${[...side.steps].map(([step, ms]) => `${step} ${ms.toFixed(1)} ms`).join(', ')}\n`;
process.stdout.write(describe('product', ratio.product));
process.stdout.write(describe('floor  ', ratio.floor));
if (ratio.transit) process.stdout.write(describe('transit', ratio.transit.product));
process.stdout.write(`${floorRatioLine(ratio)}\n`);
if (ratio.transit) process.stdout.write(`${transitLine(ratio)}\n`);
process.exit(0);
