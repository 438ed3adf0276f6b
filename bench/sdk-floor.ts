/**
 * The floor Temporal sets on this machine for the product's two latency targets: the same shapes
 * of workflow (bench/sdk-floor/workflows.ts) with no-op activities, the SDK's defaults and no codec,
 * on the same dev server (the product's dynamic config: eager activities) with the worker in its
 * own process. Prints, as medians with p25/p75 over sequential runs:
 * - a cached connection's shape (2 local activities, 1 activity, 2 local activities), start→result;
 * - an answer's shape (an update whose handler runs one activity), update→outcome;
 * and the worker's CPU per run. Compare with bench/connection-timeline.ts (the product's cached
 * connection) and the answer round trip of bench/worker-polling.ts.
 *
 *   npx tsx bench/sdk-floor.ts [--runs 50]
 */
import { Client, Connection } from '@temporalio/client';
import { cpuMs, median, percentile, runsArgument, startBenchServer, startProcess, stopAllProcesses } from './bench-processes.js';
/** bench/sdk-floor/workflows.ts's update, by name: the client process does not load workflow code. */
const answerUpdate = 'answer';

const WARM_UP_RUNS = 5;
const runs = runsArgument('sdk-floor.ts', 50);

const spread = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return `median ${percentile(sorted, 50).toFixed(1)} ms (p25 ${percentile(sorted, 25).toFixed(1)} / p75 ${percentile(sorted, 75).toFixed(1)})`;
};

const env = await startBenchServer();
try {
  const taskQueue = `sdk-floor-${Date.now()}`;
  const worker = await startProcess('sdk-floor worker', 'bench/sdk-floor/worker.ts', { TEMPORAL_ADDRESS: env.address, TEMPORAL_TASK_QUEUE: taskQueue }, '"worker started"');
  const client = new Client({ connection: await Connection.connect({ address: env.address }) });

  const connectionTimes: number[] = [];
  let cpuBefore = 0;
  for (let run = -WARM_UP_RUNS; run < runs; run += 1) {
    if (run === 0) cpuBefore = cpuMs(worker.pid ?? 0);
    const started = performance.now();
    await client.workflow.execute('cachedConnectionShape', { taskQueue, workflowId: `floor-connection-${Date.now()}-${run}` });
    if (run >= 0) connectionTimes.push(performance.now() - started);
  }
  const connectionCpu = (cpuMs(worker.pid ?? 0) - cpuBefore) / runs;

  const handle = await client.workflow.start('answerShape', { taskQueue, workflowId: `floor-answers-${Date.now()}` });
  const answerTimes: number[] = [];
  cpuBefore = 0;
  for (let run = -WARM_UP_RUNS; run < runs; run += 1) {
    if (run === 0) cpuBefore = cpuMs(worker.pid ?? 0);
    const sent = performance.now();
    await handle.executeUpdate(answerUpdate, { args: [`answer ${run}`] });
    if (run >= 0) answerTimes.push(performance.now() - sent);
  }
  const answerCpu = (cpuMs(worker.pid ?? 0) - cpuBefore) / runs;
  await handle.terminate('bench done');

  process.stdout.write(`cached connection shape, start→result: ${spread(connectionTimes)}, worker CPU ${connectionCpu.toFixed(1)} ms a run (${runs} runs)\n`);
  process.stdout.write(`answer shape, update→outcome: ${spread(answerTimes)}, worker CPU ${answerCpu.toFixed(1)} ms an answer (${runs} runs)\n`);
  process.stdout.write(`summary: floor on this machine: cached connection ${median(connectionTimes).toFixed(1)} ms, answer ${median(answerTimes).toFixed(1)} ms\n`);
  await client.connection.close();
} finally {
  await stopAllProcesses();
  await env.teardown();
}
process.exit(0);
