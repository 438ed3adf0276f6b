/**
 * `npm run bench:stack-floor`: what the product's cached connection costs the whole production stack
 * (its worker, the Temporal server, PostgreSQL, the sandbox) beside what Temporal's floor for the same
 * shape costs it (bench/sdk-floor: no-op activities, SDK defaults, no codec), and the floor's shape
 * with the service's two calls made for real (fetch, JSON.parse: what the calls cost the stack,
 * the sandbox's part included, with nothing of the product's own), on the stack
 * bench:burst starts (PostgreSQL, the server with the project's dynamic config). Batches of each
 * side alternate (product, floor, floor with calls, ...), their runs at once; each batch's stack CPU is read from
 * /proc from its first start until a settle after its last result (work the server does after a
 * run closes counts), less the stack's idle read just before. bench/floor-ratio.ts compares the
 * workers alone; these lines are the whole stack.
 *
 *   npm run bench:stack-floor -- [--batches 6] [--per-batch 20] [--worker-runtime compiled|tsx]
 *
 * Its last two lines: stack floor with the service's calls: product <ms> ms, floor with calls <ms> ms ...;
 * then the closing line: stack floor: product <ms> ms, floor <ms> ms of stack CPU a run (<r>x); workers <p> / <f>, server ..., postgres ..., sandbox ...; medians of <n> batches of <k> a side, alternating
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@temporalio/client';
import { connectionKey } from '../src/client/business-key.js';
import { numberArgument } from '../scripts/lib/number-argument.js';
import { Timeline } from '../scripts/chaos/timeline.js';
import { ConnectionsClient } from '../src/client/connections.js';
import { prepareBenchWorker, startProcess, stopProcess, workerNodeArgs, workerRuntime, workerTuning, type WorkerRuntime } from './bench-processes.js';
import { cpuBetween, sampleCpu, waitForQuietStack, type CpuSample } from './burst/cpu.js';
import { releaseStack, startStack, workerPriorityEnv, type StackResources } from './burst/stack.js';
import { CPU_PARTS, perRun, sideFigures, stackFloorLine, totalOf, type BatchSample, type PartsMs } from './stack-floor/figures.js';
import { createSandboxLogin } from './sandbox-fixtures.js';
import { compiledFloorWorker, FLOOR_WORKFLOWS_PATH } from './sdk-floor/compiled-worker.js';

const USAGE =
  'usage: npm run bench:stack-floor -- [--batches 6] (1..50) [--per-batch 20] (1..200) [--worker-runtime compiled|tsx] (default: BENCH_WORKER_RUNTIME, compiled)';
/** Runs of each side before the measured batches: both workers warm (bundles loaded, connections open). */
const WARM_UP_RUNS = 10;
/** Before each idle read: the stack's CPU a second under which it counts as quiet (its pollers and timers: 13-40 ms here), and how long to wait for it. */
const QUIET = { quietMsPerSecond: 150, sampleMs: 1_000, maxMs: 30_000 } as const;
/** After a batch's last result: the server's and PostgreSQL's work on closed runs (visibility, history) still counts. */
const SETTLE_MS = 2_000;
/** The stack's idle, read before each batch. */
const IDLE_SAMPLE_MS = 3_000;
/** A batch that has not ended in this long is a failure of the run, not a figure. */
const BATCH_TIMEOUT_MS = 120_000;

class StackFloorArgumentError extends Error {
  override readonly name = 'StackFloorArgumentError';
}

function parseArgs(argv: readonly string[]): { batches: number; perBatch: number; runtime: WorkerRuntime } {
  let batches = 6;
  let perBatch = 20;
  let runtime = workerRuntime();
  for (let index = 0; index < argv.length; index += 1) {
    const flag = argv[index] as string;
    const read = (min: number, max: number) => {
      const value = numberArgument(flag, argv[(index += 1)], min, max);
      if (typeof value === 'string') throw new StackFloorArgumentError(value);
      return value;
    };
    if (flag === '--batches') batches = read(1, 50);
    else if (flag === '--per-batch') perBatch = read(1, 200);
    else if (flag === '--worker-runtime') {
      const text = argv[(index += 1)];
      if (text !== 'compiled' && text !== 'tsx')
        throw new StackFloorArgumentError(`--worker-runtime must be compiled or tsx, got ${JSON.stringify(text ?? '')}`);
      runtime = text;
    } else throw new StackFloorArgumentError(`unknown argument ${JSON.stringify(flag)}`);
  }
  return { batches, perBatch, runtime };
}

function log(line: string): void {
  process.stdout.write(`${line}\n`);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const byPart = (used: PartsMs) => CPU_PARTS.map((name) => `${name} ${used[name].toFixed(1)}`).join(', ');

async function main(): Promise<void> {
  const { batches, perBatch, runtime } = parseArgs(process.argv.slice(2));
  const runDir = await mkdtemp(join(tmpdir(), 'aggregation-stack-floor-'));
  const runTag = Date.now().toString(36);
  const timeline = new Timeline();
  const resources: StackResources = {};
  let floorWorker: Awaited<ReturnType<typeof startProcess>> | undefined;
  let productWorker: Awaited<ReturnType<typeof startProcess>> | undefined;
  // Both workers as the image runs a worker: compiled JavaScript under node (tsx's source maps cost CPU production does not pay).
  const benchWorker = await prepareBenchWorker(runtime);
  try {
    // Budgets far above what the batches ask: the product's connections are never held back by them.
    const stack = await startStack({ mode: 'on', workers: 1, budgetRps: 1_000, tenantBudgetRps: 1_000, runDir, runTag, timeline }, resources);
    const address = resources.server?.address as string;
    // The product's worker of its own on the stack, with the stack's payload key and store and the same priority settings (the stack's pool worker stays idle on its queue).
    const productQueue = `stack-floor-product-${runTag}`;
    productWorker = await benchWorker.start({
      TEMPORAL_ADDRESS: address,
      TEMPORAL_NAMESPACE: 'default',
      TEMPORAL_TASK_QUEUE: productQueue,
      AGGREGATOR_BASE_URL: stack.sandboxUrl,
      ...stack.payloadEnv,
      WORKER_METRICS_PORT: '0',
      LOG_LEVEL: 'INFO',
      ...workerPriorityEnv('on'),
      ...workerTuning(),
    });
    const connections = new ConnectionsClient({ client: stack.client, taskQueue: productQueue, priority: stack.policy });
    const floorQueue = `stack-floor-floor-${runTag}`;
    floorWorker = await startProcess(
      'sdk-floor worker',
      compiledFloorWorker(),
      { TEMPORAL_ADDRESS: address, TEMPORAL_TASK_QUEUE: floorQueue, SDK_FLOOR_WORKFLOWS_PATH: FLOOR_WORKFLOWS_PATH },
      '"worker started"',
      workerNodeArgs(),
      'node',
    );
    const floorClient = new Client({ connection: resources.connection!, namespace: 'default' });
    const customerId = `stack-floor-${runTag}`;
    const loginId = await createSandboxLogin(stack.sandboxUrl, customerId, 'pending_polls_0');
    log(
      `stack-floor: Temporal server ${stack.serverVersion} on PostgreSQL, the product's worker (${benchWorker.runtime}, ${productQueue}) and the floor's (compiled, ${floorQueue}: its shape, and its shape with the service's calls), the sandbox; ${batches} batches of ${perBatch} a side, alternating, each after ${WARM_UP_RUNS} warm-up runs`,
    );

    let serial = 0;
    const product = async () => {
      const { workflowId } = await connections.start(connectionKey(customerId, `run-${(serial += 1)}`), {
        customerId,
        session: { kind: 'cached', loginId },
        products: { accountsDetail: {} },
        timing: { pollIntervalMs: 10_000 },
      });
      await connections.result(workflowId);
      return workflowId;
    };
    const floor = async () => {
      const handle = await floorClient.workflow.start('cachedConnectionShape', {
        taskQueue: floorQueue,
        workflowId: `stack-floor-floor-${runTag}-${(serial += 1)}`,
      });
      await handle.result();
      return handle.workflowId;
    };
    const calls = async () => {
      const handle = await floorClient.workflow.start('cachedConnectionCallsShape', {
        taskQueue: floorQueue,
        workflowId: `stack-floor-calls-${runTag}-${(serial += 1)}`,
        args: [{ baseUrl: stack.sandboxUrl, customerId, loginId }],
      });
      await handle.result();
      return handle.workflowId;
    };
    const sides = { product, floor, calls } as const;
    for (let run = 0; run < WARM_UP_RUNS; run += 1) await Promise.all([product(), floor(), calls()]);

    const samples: Record<keyof typeof sides, BatchSample[]> = { product: [], floor: [], calls: [] };
    const events: Partial<Record<keyof typeof sides, number>> = {};
    const cpuSince = (before: CpuSample) => cpuBetween(before, sampleCpu(stack.postgresDataDir));
    for (let batch = 1; batch <= batches; batch += 1) {
      for (const name of ['product', 'floor', 'calls'] as const) {
        const quiet = await waitForQuietStack(stack.postgresDataDir, QUIET);
        if (!quiet.settled)
          log(
            `batch ${batch} ${name}: the stack did not settle under ${QUIET.quietMsPerSecond} ms a second in ${QUIET.maxMs / 1000} s (last ${quiet.msPerSecond.toFixed(0)}); its idle is read anyway`,
          );
        const idleFrom = sampleCpu(stack.postgresDataDir);
        await sleep(IDLE_SAMPLE_MS);
        const idle = cpuSince(idleFrom);
        const idleMsPerSecond = Object.fromEntries(CPU_PARTS.map((part) => [part, (idle[part] * 1000) / IDLE_SAMPLE_MS])) as PartsMs;
        const before = sampleCpu(stack.postgresDataDir);
        const began = Date.now();
        let timer: NodeJS.Timeout | undefined;
        const timedOut = new Promise<never>((_, reject) => {
          timer = setTimeout(
            () => reject(new Error(`stack-floor: batch ${batch} of the ${name} had not ended after ${BATCH_TIMEOUT_MS / 1000} s`)),
            BATCH_TIMEOUT_MS,
          );
        });
        const workflowIds = await Promise.race([Promise.all(Array.from({ length: perBatch }, () => sides[name]())), timedOut]).finally(() =>
          clearTimeout(timer),
        );
        await sleep(SETTLE_MS);
        const sample: BatchSample = { runs: perBatch, seconds: (Date.now() - began) / 1000, cpuMs: cpuSince(before), idleMsPerSecond };
        samples[name].push(sample);
        events[name] ??= (
          (await (name === 'product' ? stack.client : floorClient).workflow.getHandle(workflowIds[0] as string).fetchHistory()).events ?? []
        ).length;
        const used = perRun(sample);
        log(
          `batch ${batch} ${name.padEnd(7)}: ${perBatch} runs, ${totalOf(used).toFixed(1)} ms a run (${byPart(used)}) beyond an idle of ${totalOf(idleMsPerSecond).toFixed(0)} ms a second`,
        );
      }
    }
    log(`history events a run: product ${events.product}, floor ${events.floor}, floor with calls ${events.calls}`);
    const [productFigures, floorFigures, callsFigures] = [sideFigures(samples.product), sideFigures(samples.floor), sideFigures(samples.calls)];
    log(
      `the service's calls alone: floor with calls ${callsFigures.totalMs.toFixed(1)} ms against the floor's ${floorFigures.totalMs.toFixed(1)} ms of stack CPU a run (${(callsFigures.totalMs / floorFigures.totalMs).toFixed(2)}x)`,
    );
    log(stackFloorLine(productFigures, callsFigures, perBatch, 'floor with calls'));
    log(stackFloorLine(productFigures, floorFigures, perBatch));
  } finally {
    for (const worker of [floorWorker, productWorker]) if (worker) await stopProcess(worker);
    await benchWorker.remove();
    await releaseStack(resources, (line) => process.stderr.write(`${line}\n`));
    await rm(runDir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    if (error instanceof StackFloorArgumentError) {
      process.stderr.write(`bench:stack-floor: ${error.message}\n${USAGE}\n`);
      process.exit(2);
    }
    process.stderr.write(`bench:stack-floor failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
