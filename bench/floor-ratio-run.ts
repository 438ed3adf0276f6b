/**
 * The product's cached connection against the SDK floor, in one run (bench/floor-ratio.ts): each
 * side's workflow tasks and activities, then the ratio line bench:burst prints too.
 *
 *   npx tsx bench/floor-ratio-run.ts [--runs 30]
 */
import { runsArgument } from './bench-processes.js';
import { floorRatioLine, measureFloorRatio, type SideFigures } from './floor-ratio.js';

const runs = runsArgument('floor-ratio-run.ts', 30);
const ratio = await measureFloorRatio(runs);
const describe = (name: string, side: SideFigures) =>
  `${name}: ${side.events} events; on the worker: ${[...side.steps].map(([step, ms]) => `${step} ${ms.toFixed(1)} ms`).join(', ')}\n`;
process.stdout.write(describe('product', ratio.product));
process.stdout.write(describe('floor  ', ratio.floor));
process.stdout.write(`${floorRatioLine(ratio)}\n`);
process.exit(0);
