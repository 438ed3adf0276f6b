/**
 * The floor Temporal sets on this machine for the product's latency and CPU targets: the same
 * shapes of workflow (bench/sdk-floor/workflows.ts) with no-op activities, the SDK's defaults and no
 * codec, on the same dev server (the product's dynamic config: eager activities), the worker in its
 * own process, compiled and run by node as the product's image runs its worker. Prints:
 * - a cached connection's shape (a local activity, two activities through the task queue, never
 *   eager, as the product calls the service under its budget, a local activity), start→result,
 *   median with p25/p75 over sequential runs (compare with bench/connection-timeline.ts); beside it a
 *   workflow that returns at once (what any workflow costs here) and the same connection with every
 *   call a local activity (one workflow task: the fastest shape it could take);
 * - an answer's shape (an update whose handler runs one activity), update→outcome (compare with the
 *   answer round trip of bench/worker-polling.ts);
 * - the worker CPU of one poll made the product's default way (a durable timer, then an activity)
 *   and of one heartbeating activity's loop with a no-op poll, 500 connections pending at once:
 *   (CPU of 500 polling 6 times − CPU of 500 that do not poll) / 3,000 polls (compare with the
 *   marginal CPU per poll of bench/worker-polling.ts).
 *
 *   npx tsx bench/sdk-floor.ts [--runs 50]
 */
import { Client, Connection } from '@temporalio/client';
import { compiledFloorWorker, FLOOR_WORKFLOWS_PATH } from './sdk-floor/compiled-worker.js';
import { cpuMs, median, percentile, runsArgument, startBenchServer, startProcess, stopAllProcesses } from './bench-processes.js';
/** bench/sdk-floor/workflows.ts's update, by name: the client process does not load workflow code. */
const answerUpdate = 'answer';

const WARM_UP_RUNS = 5;
const POLL_CONNECTIONS = 500;
const POLLS = 6;
const POLL_INTERVAL_MS = 5_000;
const runs = runsArgument('sdk-floor.ts', 50);

const spread = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return `median ${percentile(sorted, 50).toFixed(1)} ms (p25 ${percentile(sorted, 25).toFixed(1)} / p75 ${percentile(sorted, 75).toFixed(1)})`;
};

const env = await startBenchServer();
try {
  const taskQueue = `sdk-floor-${Date.now()}`;
  const worker = await startProcess(
    'sdk-floor worker',
    compiledFloorWorker(),
    { TEMPORAL_ADDRESS: env.address, TEMPORAL_TASK_QUEUE: taskQueue, SDK_FLOOR_WORKFLOWS_PATH: FLOOR_WORKFLOWS_PATH },
    '"worker started"',
    [],
    'node',
  );
  const client = new Client({ connection: await Connection.connect({ address: env.address }) });

  /** Times of `runs` sequential runs of `once`, after warm-up runs, and the worker's CPU a run. */
  async function timedRuns(once: (run: number) => Promise<unknown>): Promise<{ times: number[]; cpu: number }> {
    const times: number[] = [];
    let cpuBefore = 0;
    for (let run = -WARM_UP_RUNS; run < runs; run += 1) {
      if (run === 0) cpuBefore = cpuMs(worker.pid ?? 0);
      const started = performance.now();
      await once(run);
      if (run >= 0) times.push(performance.now() - started);
    }
    return { times, cpu: (cpuMs(worker.pid ?? 0) - cpuBefore) / runs };
  }
  const startToResult = (workflowType: string) =>
    timedRuns((run) => client.workflow.execute(workflowType, { taskQueue, workflowId: `floor-${workflowType}-${Date.now()}-${run}` }));
  const connection = await startToResult('cachedConnectionShape');
  const empty = await startToResult('emptyShape');
  const oneTask = await startToResult('oneTaskConnectionShape');

  const handle = await client.workflow.start('answerShape', { taskQueue, workflowId: `floor-answers-${Date.now()}` });
  const answers = await timedRuns((run) => handle.executeUpdate(answerUpdate, { args: [`answer ${run}`] }));
  await handle.terminate('bench done');

  /** Worker CPU for `POLL_CONNECTIONS` shapes of `workflowType` started together, each making `polls` polls. */
  async function pollingCpu(workflowType: string, polls: number): Promise<number> {
    const before = cpuMs(worker.pid ?? 0);
    const ids = Array.from({ length: POLL_CONNECTIONS }, (_, index) => `floor-${workflowType}-${polls}-${Date.now()}-${index}`);
    const handles = [];
    for (let i = 0; i < ids.length; i += 50) {
      handles.push(
        ...(await Promise.all(
          ids.slice(i, i + 50).map((workflowId) => client.workflow.start(workflowType, { taskQueue, workflowId, args: [polls, POLL_INTERVAL_MS] })),
        )),
      );
    }
    await Promise.all(handles.map((handle) => handle.result()));
    return cpuMs(worker.pid ?? 0) - before;
  }
  /** CPU a poll: the shapes with POLLS polls each, less the same shapes without a poll. */
  async function pollCpu(workflowType: string): Promise<{ perPoll: number; line: string }> {
    const without = await pollingCpu(workflowType, 0);
    const withPolls = await pollingCpu(workflowType, POLLS);
    const perPoll = (withPolls - without) / (POLL_CONNECTIONS * POLLS);
    return {
      perPoll,
      line: `worker CPU ${perPoll.toFixed(2)} ms a poll (${withPolls.toFixed(0)} ms with ${POLLS} polls each − ${without.toFixed(0)} ms without, over ${POLL_CONNECTIONS * POLLS} polls)`,
    };
  }
  const timerPoll = await pollCpu('timerPollShape');
  const heartbeatPoll = await pollCpu('heartbeatPollShape');

  const startToResultLine = (label: string, { times, cpu }: { times: number[]; cpu: number }) =>
    process.stdout.write(`${label}, start→result: ${spread(times)}, worker CPU ${cpu.toFixed(1)} ms a run (${runs} runs)\n`);
  startToResultLine('cached connection shape', connection);
  startToResultLine('empty workflow', empty);
  startToResultLine('cached connection shape in one workflow task (all local activities)', oneTask);
  process.stdout.write(`answer shape, update→outcome: ${spread(answers.times)}, worker CPU ${answers.cpu.toFixed(1)} ms an answer (${runs} runs)\n`);
  process.stdout.write(`timer poll shape, ${POLL_CONNECTIONS} pending at once: ${timerPoll.line}\n`);
  process.stdout.write(`heartbeat poll shape (no-op poll), ${POLL_CONNECTIONS} pending at once: ${heartbeatPoll.line}\n`);
  process.stdout.write(
    `summary: floor on this machine: cached connection ${median(connection.times).toFixed(1)} ms (empty workflow ${median(empty.times).toFixed(1)}, one task ${median(oneTask.times).toFixed(1)}), answer ${median(answers.times).toFixed(1)} ms, timer poll ${timerPoll.perPoll.toFixed(2)} ms and heartbeat poll ${heartbeatPoll.perPoll.toFixed(2)} ms of worker CPU\n`,
  );
  await client.connection.close();
} finally {
  await stopAllProcesses();
  await env.teardown();
}
process.exit(0);
