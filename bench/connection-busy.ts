/**
 * Where a cached connection's busy time goes (its time less its polls' waits: what a book's window
 * judges crowding on) as more are in flight: a dev server, one worker as the image runs it, the
 * sandbox; for each count in `--in-flight`, that many connections kept in flight for `--seconds`,
 * each pending for one poll `--poll-interval-ms` apart; then, over the last 40 of each, the medians
 * of their workflow tasks' wait for a worker (scheduled→started) and run (started→completed), their
 * activities' likewise, and their timers' lateness, each summed over the connection.
 *
 *   bash scripts/with-pinned-node.sh npx tsx bench/connection-busy.ts [--in-flight 4,20,4,20] [--seconds 40] [--poll-interval-ms 10000]
 *
 * The worker's settings come from the environment as in every bench (WORKER_*: e.g.
 * WORKER_MAX_CONCURRENT_WORKFLOW_TASKS=40 to compare with the product's 4 slots).
 */
import { Client, Connection } from '@temporalio/client';
import proto from '@temporalio/proto';
import { ConnectionsClient } from '../src/client/connections.js';
import { connectionKey } from '../src/client/business-key.js';
import { dataConverterFor } from '../src/codec/data-converter.js';
import { loadClientConfig } from '../src/settings/client.js';
import { numberArgument } from '../scripts/lib/number-argument.js';
import { median, prepareBenchWorker, runtimeOverride, startBenchServer, startSandboxProcess, stopAllProcesses, workerTuning } from './bench-processes.js';
import { createSandboxLogin, eventTimeMs } from './sandbox-fixtures.js';

const { EventType } = proto.temporal.api.enums.v1;
type HistoryEvent = proto.temporal.api.history.v1.IHistoryEvent;
const USAGE = 'usage: connection-busy.ts [--in-flight 4,20,4,20] (each 1..200) [--seconds 40] (5..600) [--poll-interval-ms 10000] (100..60000)';
/** The connections of each phase whose histories are read (its last ones: the phase at its level). */
const SAMPLE = 40;

class BusyArgumentError extends Error {
  override readonly name = 'BusyArgumentError';
}

function parseArgs(argv: readonly string[]): { inFlight: number[]; seconds: number; pollIntervalMs: number } {
  let inFlight = [4, 20, 4, 20];
  let seconds = 40;
  let pollIntervalMs = 10_000;
  for (let index = 0; index < argv.length; index += 1) {
    const flag = argv[index] as string;
    const text = argv[(index += 1)];
    const read = (min: number, max: number, value = text) => {
      const number = numberArgument(flag, value, min, max);
      if (typeof number === 'string') throw new BusyArgumentError(number);
      return number;
    };
    if (flag === '--in-flight') inFlight = (text ?? '').split(',').map((part) => read(1, 200, part));
    else if (flag === '--seconds') seconds = read(5, 600);
    else if (flag === '--poll-interval-ms') pollIntervalMs = read(100, 60_000);
    else throw new BusyArgumentError(`unknown argument ${JSON.stringify(flag)}`);
  }
  return { inFlight, seconds, pollIntervalMs };
}

/** A kind of task's scheduled, started and completed events, and the steps its waits and runs sum into. */
const TASK_KINDS = [
  {
    kind: 'workflow tasks',
    scheduled: EventType.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED,
    started: EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED,
    completed: EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED,
  },
  {
    kind: 'activities',
    scheduled: EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED,
    started: EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED,
    completed: EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED,
  },
] as const;

/** One connection's history, summed by step (ms). */
function stepsOf(events: readonly HistoryEvent[], pollIntervalMs: number): Record<string, number> {
  const sums: Record<string, number> = { whole: 0 };
  for (const { kind } of TASK_KINDS) Object.assign(sums, { [`${kind} waiting`]: 0, [`${kind} running`]: 0 });
  sums['timers late'] = 0;
  const at = (event: HistoryEvent) => eventTimeMs(event.eventTime);
  const first = events[0];
  const last = events.at(-1);
  if (first && last) sums.whole = at(last) - at(first);
  // Each kind's times kept apart: a workflow task can be scheduled while an activity waits.
  const times = new Map(TASK_KINDS.map(({ kind }) => [kind, { scheduled: 0, started: 0 }]));
  let timer = 0;
  for (const event of events) {
    for (const { kind, scheduled, started, completed } of TASK_KINDS) {
      const time = times.get(kind)!;
      if (event.eventType === scheduled) time.scheduled = at(event);
      else if (event.eventType === started) {
        time.started = at(event);
        sums[`${kind} waiting`]! += time.started - time.scheduled;
      } else if (event.eventType === completed) sums[`${kind} running`]! += at(event) - time.started;
    }
    if (event.eventType === EventType.EVENT_TYPE_TIMER_STARTED) timer = at(event);
    else if (event.eventType === EventType.EVENT_TYPE_TIMER_FIRED) sums['timers late'] += at(event) - timer - pollIntervalMs;
  }
  return sums;
}

async function main(): Promise<void> {
  const { inFlight, seconds, pollIntervalMs } = parseArgs(process.argv.slice(2));
  const env = await startBenchServer();
  try {
    const sandboxUrl = await startSandboxProcess();
    const worker = await prepareBenchWorker();
    const taskQueue = `connection-busy-${Date.now().toString(36)}`;
    await worker.start({
      TEMPORAL_ADDRESS: env.address,
      TEMPORAL_TASK_QUEUE: taskQueue,
      AGGREGATOR_BASE_URL: sandboxUrl,
      WORKER_METRICS_PORT: '0',
      LOG_LEVEL: 'INFO',
      ...workerTuning(),
    });
    const connection = await Connection.connect({ address: env.address });
    const client = new Client({ connection, dataConverter: dataConverterFor(loadClientConfig({ TEMPORAL_ADDRESS: env.address, ...runtimeOverride() })) });
    const connections = new ConnectionsClient({ client, taskQueue });
    const customerId = 'connection-busy';
    const tuning =
      Object.entries(workerTuning())
        .map(([name, value]) => `${name}=${value}`)
        .join(' ') || 'the product defaults';
    process.stdout.write(
      `connection-busy: one worker (${worker.runtime}; ${tuning}), a dev server, the sandbox; each phase ${seconds} s, one poll ${pollIntervalMs} ms apart\n`,
    );
    let serial = 0;
    for (const count of inFlight) {
      const ended: string[] = [];
      const until = Date.now() + seconds * 1000;
      await Promise.all(
        Array.from({ length: count }, async () => {
          while (Date.now() < until) {
            const loginId = await createSandboxLogin(sandboxUrl, customerId, `pending_polls_${(serial += 1)}`, 1);
            const { workflowId } = await connections.start(connectionKey(customerId, `busy-${serial}`), {
              customerId,
              session: { kind: 'cached', loginId },
              products: { accountsDetail: {} },
              timing: { pollIntervalMs },
              unattended: true,
            });
            await connections.result(workflowId);
            ended.push(workflowId);
          }
        }),
      );
      const sample = await Promise.all(
        ended.slice(-SAMPLE).map(async (workflowId) => stepsOf((await client.workflow.getHandle(workflowId).fetchHistory()).events ?? [], pollIntervalMs)),
      );
      const names = Object.keys(sample[0] ?? {});
      const figures = names.map((name) => `${name} ${median(sample.map((steps) => steps[name] as number)).toFixed(0)}`).join(', ');
      process.stdout.write(`in flight ${count}: ${ended.length} connections ended; medians of the last ${sample.length}, ms a connection: ${figures}\n`);
    }
    await connection.close();
  } finally {
    await stopAllProcesses();
    await env.teardown();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    if (error instanceof BusyArgumentError) {
      process.stderr.write(`connection-busy: ${error.message}\n${USAGE}\n`);
      process.exit(2);
    }
    process.stderr.write(`connection-busy failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
