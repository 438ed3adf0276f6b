/**
 * Where the time of one cached accounts connection goes, read from its history: for each event, the
 * median time since the event before it over sequential runs (dispatch = *_SCHEDULED → *_STARTED,
 * the worker's work = *_STARTED → *_COMPLETED), the client's start→result time, and the worker
 * process's CPU per connection. The worker runs as production runs it (its own process, prebuilt
 * bundle, payloads encrypted); one connection at a time, so figures are latencies, not throughput.
 *
 *   npx tsx bench/connection-timeline.ts [--runs 40]
 *   WORKER_*, NODE_OPTIONS and BENCH_WORKER_NODE_ARGS reach the worker; BENCH_SERVER_DYNAMIC_CONFIG replaces
 *   the server's dynamic config (BENCH_SERVER_DYNAMIC_CONFIG= runs without eager activities); see bench-processes.ts.
 */
import { Client, Connection } from '@temporalio/client';
import proto from '@temporalio/proto';
import { dataConverterFor } from '../src/codec/data-converter.js';
import { loadClientConfig } from '../src/settings/client.js';
import {
  cpuMs,
  median,
  runsArgument,
  prepareBenchWorker,
  runtimeOverride,
  startBenchServer,
  startSandboxProcess,
  stopAllProcesses,
  workerNodeArgs,
  workerTuning,
} from './bench-processes.js';
import { createSandboxLogin, eventTimeMs } from './sandbox-fixtures.js';

const { EventType } = proto.temporal.api.enums.v1;
const WARM_UP_RUNS = 3;

const runs = runsArgument('connection-timeline.ts', 40);

const benchWorker = await prepareBenchWorker();
const env = await startBenchServer();
try {
  const sandboxUrl = await startSandboxProcess();
  const taskQueue = `timeline-${Date.now()}`;
  const worker = await benchWorker.start({
    TEMPORAL_ADDRESS: env.address,
    TEMPORAL_TASK_QUEUE: taskQueue,
    AGGREGATOR_BASE_URL: sandboxUrl,
    WORKER_METRICS_PORT: '0',
    LOG_LEVEL: 'INFO',
    ...workerTuning(),
  });
  // The product's defaults, as the worker has them: payloads encrypted with the local key.
  const client = new Client({
    connection: await Connection.connect({ address: env.address }),
    dataConverter: dataConverterFor(loadClientConfig({ TEMPORAL_ADDRESS: env.address, ...runtimeOverride() })),
  });
  const customerId = `timeline-${Date.now()}`;
  const loginId = await createSandboxLogin(sandboxUrl, customerId, 'pending_polls_0');

  const sinceEventBefore = new Map<string, number[]>();
  const totals: number[] = [];
  let cpuBefore = 0;
  for (let run = -WARM_UP_RUNS; run < runs; run += 1) {
    if (run === 0) cpuBefore = cpuMs(worker.pid ?? 0);
    const started = performance.now();
    const handle = await client.workflow.start('connectionWorkflow', {
      taskQueue,
      workflowId: `timeline-${Date.now()}-${run}`,
      args: [{ customerId, session: { kind: 'cached', loginId }, products: { accountsDetail: {} }, timing: { pollIntervalMs: 10_000 } }],
    });
    await handle.result();
    if (run < 0) continue;
    totals.push(performance.now() - started);
    const events = (await handle.fetchHistory()).events ?? [];
    events.forEach((event, index) => {
      if (index === 0) return;
      const name = `${String(index + 1).padStart(2)} ${(EventType[event.eventType ?? 0] ?? 'UNKNOWN').replace('EVENT_TYPE_', '')}`;
      const times = sinceEventBefore.get(name) ?? [];
      times.push(eventTimeMs(event.eventTime) - eventTimeMs(events[index - 1]?.eventTime));
      sinceEventBefore.set(name, times);
    });
  }
  const workerCpu = (cpuMs(worker.pid ?? 0) - cpuBefore) / runs;
  process.stdout.write(
    `cached accounts connection, ${runs} runs one at a time, ${benchWorker.runtime} worker, tuning ${JSON.stringify(workerTuning())} ${workerNodeArgs().join(' ')}\n`,
  );
  for (const [name, times] of sinceEventBefore) process.stdout.write(`  ${name.padEnd(44)} +${median(times).toFixed(1)} ms\n`);
  const history = [...sinceEventBefore.values()].reduce((sum, times) => sum + median(times), 0);
  process.stdout.write(
    `summary: start→result median ${median(totals).toFixed(1)} ms (history first→last event ${history.toFixed(1)} ms), worker CPU ${workerCpu.toFixed(1)} ms per connection\n`,
  );
  await client.connection.close();
} finally {
  await stopAllProcesses();
  await env.teardown();
  await benchWorker.remove();
}
process.exit(0);
