/**
 * What Node's `vm` watchdog costs: the same tiny script run in a V8 context with and without a
 * `timeout` (the SDK passes one on every call into the workflow sandbox; Node then starts and joins
 * a watchdog thread per call). Prints wall and CPU time per call, twice each, alternating.
 *
 *   npx tsx bench/vm-watchdog-cost.ts [--calls 20000]
 */
import { parseArgs } from 'node:util';
import vm from 'node:vm';

const { values } = parseArgs({ options: { calls: { type: 'string', default: '20000' } } });
const calls = Number(values.calls);
if (!Number.isInteger(calls) || calls < 1) {
  process.stderr.write('usage: vm-watchdog-cost.ts --calls 20000 (a positive integer)\n');
  process.exit(2);
}

const context = vm.createContext({ counter: 0 });
const script = new vm.Script('counter += 1');
for (const options of [{}, { timeout: 60_000 }, {}, { timeout: 60_000 }]) {
  const cpuBefore = process.cpuUsage();
  const wallBefore = performance.now();
  for (let i = 0; i < calls; i += 1) script.runInContext(context, options);
  const cpu = process.cpuUsage(cpuBefore);
  const wallUs = ((performance.now() - wallBefore) * 1000) / calls;
  const label = 'timeout' in options ? 'with a timeout   ' : 'without a timeout';
  process.stdout.write(`${label}: ${wallUs.toFixed(1)} µs wall, ${((cpu.user + cpu.system) / calls).toFixed(1)} µs CPU per call\n`);
}
