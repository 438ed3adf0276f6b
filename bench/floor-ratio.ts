/**
 * The product's cached connection against the floor Temporal sets for its shape (issue 21, item 7),
 * measured in one run so the machine's load weighs on both alike: one dev server, the sandbox, the
 * product's worker as production runs it (compiled, prebuilt bundle, payloads encrypted) and the
 * floor's worker (bench/sdk-floor: the same calls as no-op activities, SDK defaults, no codec), each on
 * its own task queue; the runs alternate product, floor, product, ... one connection at a time.
 * The product's connection starts as a pipeline starts it (ConnectionsClient: its search attributes
 * and priority set at start). Each side's figures: start→result median, worker CPU per connection
 * (its own process), and the median time each of its workflow tasks and activities spent on the
 * worker, from the histories.
 * With `serviceCalls` a third side joins the rotation: the floor's shape with its two calls made for
 * real, the plainest way (bench/sdk-floor: fetch and JSON.parse, SDK defaults, no codec), on a floor
 * worker of its own, so the product's own work beyond the service's calls can be told apart from the
 * calls themselves.
 * With `keyProvider: 'vault-transit'` a second product side joins the rotation: the same worker and
 * client on PAYLOAD_KEY_PROVIDER=vault-transit against a local OpenBao (scripts/lib/openbao-server.ts:
 * raft storage, its file audit device declared in the config, as OpenBao requires), its worker holding a token of the least policy; the runs go static product, transit
 * product, floor, ... The KMS calls are counted from OpenBao's audit log (every datakey and decrypt
 * request, by the worker and the client, warm-up included) against the envelope-v1 payloads stored in
 * the transit side's histories (warm-up included).
 */
import type { ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import proto from '@temporalio/proto';
import { ConnectionsClient } from '../src/client/connections.js';
import { dataConverterFor } from '../src/codec/data-converter.js';
import { loadClientConfig } from '../src/settings/client.js';
import {
  cpuMs,
  median,
  prepareBenchWorker,
  runtimeOverride,
  startBenchServer,
  startProcess,
  startSandboxProcess,
  stopProcess,
  workerNodeArgs,
  workerTuning,
  type WorkerRuntime,
} from './bench-processes.js';
import { createSandboxLogin, eventTimeMs } from './sandbox-fixtures.js';
import { compiledFloorWorker, FLOOR_WORKFLOWS_PATH } from './sdk-floor/compiled-worker.js';
import { payloadsIn } from '../scripts/lib/history-payloads.js';
import { monotonicUs, summarizeCpuProfiles, type CpuSummary } from './cpu-profile.js';
import { OpenBaoServer, workerPolicy } from '../scripts/lib/openbao-server.js';

const { EventType } = proto.temporal.api.enums.v1;
type HistoryEvent = proto.temporal.api.history.v1.IHistoryEvent;
const WARM_UP_RUNS = 5;
const TRANSIT_KEY = 'aggregation-payloads';

export interface SideFigures {
  /** Median start→result at the client, ms. */
  readonly startToResultMs: number;
  /** The side's worker process CPU over its measured runs, per connection, ms. */
  readonly workerCpuMs: number;
  /** Median ms of each step on the worker: "workflow task 1", "activity 1", ... in history order. */
  readonly steps: ReadonlyMap<string, number>;
  /** Median number of history events. */
  readonly events: number;
}

export interface FloorRatio {
  readonly runs: number;
  readonly product: SideFigures;
  readonly floor: SideFigures;
  /** product / floor. */
  readonly latencyRatio: number;
  readonly cpuRatio: number;
  /** With keyProvider vault-transit: the product on OpenBao's transit, measured in the same rotation. */
  readonly transit?: TransitFigures;
  /** With serviceCalls: the floor's shape making the service's two calls, measured in the same rotation. */
  readonly calls?: CallsFigures;
  /** With a profile directory: each worker's CPU profile over the measured runs (the calls side's with serviceCalls), and where the files are. */
  readonly profiles?: { readonly product: CpuSummary; readonly floor: CpuSummary; readonly calls?: CpuSummary; readonly dir: string };
}

export interface CallsFigures {
  readonly floorWithCalls: SideFigures;
  /** product / floor with calls: what the product adds beyond the service's calls. */
  readonly productOverCallsLatencyRatio: number;
  readonly productOverCallsCpuRatio: number;
  /** floor with calls / floor: what the service's two calls cost by themselves. */
  readonly callsOverFloorLatencyRatio: number;
  readonly callsOverFloorCpuRatio: number;
}

export interface FloorRatioOptions {
  readonly keyProvider?: FloorKeyProvider | undefined;
  /** Write V8 CPU profiles of the workers under a new directory in this one, and sum them. */
  readonly cpuProfileDir?: string | undefined;
  /** Add the floor's shape with its calls made for real to the rotation. */
  readonly serviceCalls?: boolean | undefined;
  /** How the product's worker runs (default: BENCH_WORKER_RUNTIME, compiled). */
  readonly workerRuntime?: WorkerRuntime | undefined;
  /** `off`: the product's worker and client run with PAYLOAD_ENCRYPTION=off, to tell what sealing its payloads costs. */
  readonly payloadEncryption?: 'auto' | 'off' | undefined;
}

export interface TransitFigures {
  readonly product: SideFigures;
  /** transit product / floor. */
  readonly latencyRatio: number;
  readonly cpuRatio: number;
  /** datakey and decrypt requests in OpenBao's audit log over the whole run (warm-up included). */
  readonly datakeyCalls: number;
  readonly decryptCalls: number;
  /** envelope-v1 payloads stored in the transit side's histories (warm-up included). */
  readonly payloads: number;
}

export type FloorKeyProvider = 'static' | 'vault-transit';

/** Each workflow task's and activity's STARTED→COMPLETED time in one history, in order. */
function stepTimes(events: readonly HistoryEvent[]): [string, number][] {
  const steps: [string, number][] = [];
  let tasks = 0;
  let activities = 0;
  const startedAt = new Map<string, number>();
  for (const event of events) {
    const type = event.eventType ?? 0;
    const at = eventTimeMs(event.eventTime);
    if (type === EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED) startedAt.set('task', at);
    else if (type === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED) steps.push([`workflow task ${(tasks += 1)}`, at - (startedAt.get('task') ?? at)]);
    else if (type === EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED) startedAt.set('activity', at);
    else if (type === EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED) steps.push([`activity ${(activities += 1)}`, at - (startedAt.get('activity') ?? at)]);
  }
  return steps;
}

class Side {
  readonly totals: number[] = [];
  readonly eventCounts: number[] = [];
  readonly steps = new Map<string, number[]>();
  private cpuBefore = 0;
  constructor(readonly worker: ChildProcess) {}
  startCounting(): void {
    this.cpuBefore = cpuMs(this.worker.pid ?? 0);
  }
  record(ms: number, events: readonly HistoryEvent[]): void {
    this.totals.push(ms);
    this.eventCounts.push(events.length);
    for (const [name, time] of stepTimes(events)) {
      const times = this.steps.get(name) ?? [];
      times.push(time);
      this.steps.set(name, times);
    }
  }
  figures(): SideFigures {
    return {
      startToResultMs: median(this.totals),
      workerCpuMs: (cpuMs(this.worker.pid ?? 0) - this.cpuBefore) / this.totals.length,
      steps: new Map([...this.steps].map(([name, times]) => [name, median(times)])),
      events: median(this.eventCounts),
    };
  }
}

/** A floor worker (compiled, SDK defaults) on `queue`; with `profileDir`, its CPU profiles go to `profileDir/<side>`. */
function startFloorWorker(address: string, queue: string, side: 'floor' | 'calls', profileDir: string | undefined): Promise<ChildProcess> {
  return startProcess(
    `sdk-floor worker (${side})`,
    compiledFloorWorker(),
    { TEMPORAL_ADDRESS: address, TEMPORAL_TASK_QUEUE: queue, SDK_FLOOR_WORKFLOWS_PATH: FLOOR_WORKFLOWS_PATH },
    '"worker started"',
    [...workerNodeArgs(), ...profileArgs(profileDir && join(profileDir, side))],
    'node',
  );
}

/** An accounts detail answer with at least one account. */
function hasAccounts(answer: unknown): boolean {
  const accounts = (answer as { Accounts?: unknown } | null)?.Accounts;
  return Array.isArray(accounts) && accounts.length > 0;
}

/** Transit requests of one kind (`datakey`, `decrypt`) in a file audit log: one JSON object per line, requests and responses. */
function auditedCalls(log: string, kind: 'datakey' | 'decrypt'): number {
  return log
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as { type?: string; request?: { path?: string } })
    .filter((entry) => entry.type === 'request' && (entry.request?.path ?? '').startsWith(`transit/${kind}/`)).length;
}

/** Node's arguments that make a worker write its CPU profiles into `dir` when it exits. */
function profileArgs(dir: string | undefined): string[] {
  return dir ? ['--cpu-prof', `--cpu-prof-dir=${dir}`] : [];
}

/**
 * Starts the stack, alternates `runs` product and `runs` floor connections (and `runs` transit ones
 * with vault-transit, `runs` of the floor with calls with serviceCalls), stops what it started. With
 * `cpuProfileDir`, the product's and the floors' workers write V8 CPU profiles under a new directory
 * in it (its `product`, `floor` and `calls`), summed over the measured runs only.
 */
export async function measureFloorRatio(
  runs: number,
  { keyProvider = 'static', cpuProfileDir, serviceCalls = false, workerRuntime, payloadEncryption = 'auto' }: FloorRatioOptions = {},
): Promise<FloorRatio> {
  const benchWorker = await prepareBenchWorker(workerRuntime);
  const env = await startBenchServer();
  const started: ChildProcess[] = [];
  let openBao: OpenBaoServer | undefined;
  let auditDir: string | undefined;
  try {
    const sandboxUrl = await startSandboxProcess();
    const productQueue = `floor-ratio-product-${Date.now()}`;
    const floorQueue = `floor-ratio-floor-${Date.now()}`;
    // A directory of this run's own under DIR: profiles of an earlier run there are not summed in.
    const profileDir = cpuProfileDir ? await mkdir(cpuProfileDir, { recursive: true }).then(() => mkdtemp(join(cpuProfileDir, 'floor-ratio-'))) : undefined;
    const productWorker = await benchWorker.start(
      {
        TEMPORAL_ADDRESS: env.address,
        TEMPORAL_TASK_QUEUE: productQueue,
        AGGREGATOR_BASE_URL: sandboxUrl,
        WORKER_METRICS_PORT: '0',
        LOG_LEVEL: 'INFO',
        ...workerTuning(),
        PAYLOAD_ENCRYPTION: payloadEncryption,
      },
      profileArgs(profileDir && join(profileDir, 'product')),
    );
    const floorWorker = await startFloorWorker(env.address, floorQueue, 'floor', profileDir);
    started.push(productWorker, floorWorker);
    const callsQueue = `floor-ratio-calls-${Date.now()}`;
    const callsWorker = serviceCalls ? await startFloorWorker(env.address, callsQueue, 'calls', profileDir) : undefined;
    if (callsWorker) started.push(callsWorker);
    let transitVariables: Record<string, string> | undefined;
    let transitWorker: ChildProcess | undefined;
    const transitQueue = `floor-ratio-transit-${Date.now()}`;
    if (keyProvider === 'vault-transit') {
      auditDir = await mkdtemp(join(tmpdir(), 'floor-ratio-openbao-'));
      openBao = await OpenBaoServer.start({ dir: auditDir, transitKey: TRANSIT_KEY });
      // The worker and the client as production has them: a token allowed datakey and decrypt on the key, nothing else.
      const token = await openBao.token('floor-ratio', workerPolicy(TRANSIT_KEY));
      transitVariables = {
        PAYLOAD_KEY_PROVIDER: 'vault-transit',
        PAYLOAD_VAULT_ADDR: openBao.address,
        PAYLOAD_VAULT_TOKEN: token,
        PAYLOAD_VAULT_TRANSIT_KEY: TRANSIT_KEY,
      };
      transitWorker = await benchWorker.start({
        TEMPORAL_ADDRESS: env.address,
        TEMPORAL_TASK_QUEUE: transitQueue,
        AGGREGATOR_BASE_URL: sandboxUrl,
        WORKER_METRICS_PORT: '0',
        LOG_LEVEL: 'INFO',
        ...workerTuning(),
        ...transitVariables,
      });
      started.push(transitWorker);
    }
    // The product's client as a pipeline has it (payloads encrypted with the local key); the floor's has the SDK's defaults.
    const connection = await Connection.connect({ address: env.address });
    const productClient = new Client({
      connection,
      dataConverter: dataConverterFor(loadClientConfig({ TEMPORAL_ADDRESS: env.address, ...runtimeOverride(), PAYLOAD_ENCRYPTION: payloadEncryption })),
    });
    const floorClient = new Client({ connection });
    const transitClient = transitVariables
      ? new Client({
          connection,
          dataConverter: dataConverterFor(loadClientConfig({ TEMPORAL_ADDRESS: env.address, ...runtimeOverride(), ...transitVariables })),
        })
      : undefined;
    const transitConnections = transitClient ? new ConnectionsClient({ client: transitClient, taskQueue: transitQueue }) : undefined;
    // The product's connections start as a pipeline starts them: through its client, with their search attributes and priority.
    const connections = new ConnectionsClient({ client: productClient, taskQueue: productQueue });
    const customerId = `floor-ratio-${Date.now()}`;
    const loginId = await createSandboxLogin(sandboxUrl, customerId, 'pending_polls_0');

    const product = new Side(productWorker);
    const floor = new Side(floorWorker);
    const transit = transitWorker ? new Side(transitWorker) : undefined;
    const calls = callsWorker ? new Side(callsWorker) : undefined;
    let transitPayloads = 0;
    const startProduct = async (client: Client, through: ConnectionsClient, run: number) =>
      client.workflow.getHandle(
        (
          await through.start(`connection-${customerId}:floor-ratio-${Date.now()}-${run}`, {
            customerId,
            session: { kind: 'cached', loginId },
            products: { accountsDetail: {} },
            timing: { pollIntervalMs: 10_000 },
          })
        ).workflowId,
      );
    const once = async (side: Side, run: number) => {
      const startedAt = performance.now();
      const handle =
        side === product
          ? await startProduct(productClient, connections, run)
          : side === transit && transitClient && transitConnections
            ? await startProduct(transitClient, transitConnections, run)
            : side === calls
              ? await floorClient.workflow.start('cachedConnectionCallsShape', {
                  taskQueue: callsQueue,
                  workflowId: `floor-ratio-calls-${Date.now()}-${run}`,
                  args: [{ baseUrl: sandboxUrl, customerId, loginId }],
                })
              : await floorClient.workflow.start('cachedConnectionShape', { taskQueue: floorQueue, workflowId: `floor-ratio-floor-${Date.now()}-${run}` });
      const result: unknown = await handle.result();
      const ms = performance.now() - startedAt;
      // The floor with calls must have retrieved what the product's connection does, or the two would not compare.
      if (side === calls && !hasAccounts(result))
        throw new Error(
          `the floor with the service's calls returned no accounts (${JSON.stringify(result)?.slice(0, 200)}): its calls did not retrieve what the product's connection does`,
        );
      // After the timing: the history fetch is not part of the connection.
      const events = side === transit || run >= 0 ? ((await handle.fetchHistory()).events ?? []) : [];
      if (side === transit) {
        transitPayloads += payloadsIn(events).filter(
          ({ payload }) => Buffer.from(payload.metadata?.['encryption-format'] ?? new Uint8Array()).toString() === 'envelope-v1',
        ).length;
      }
      if (run >= 0) side.record(ms, events);
    };
    let measuredFromUs = 0;
    for (let run = -WARM_UP_RUNS; run < runs; run += 1) {
      if (run === 0) {
        [product, floor, ...(transit ? [transit] : []), ...(calls ? [calls] : [])].forEach((side) => side.startCounting());
        measuredFromUs = monotonicUs();
      }
      await once(product, run);
      if (transit) await once(transit, run);
      await once(floor, run);
      if (calls) await once(calls, run);
    }
    const measured = { fromUs: measuredFromUs, toUs: monotonicUs() };
    await connection.close();
    // Before any worker stops: a side's CPU is read from its live process.
    const [productFigures, floorFigures, callsFigures] = [product.figures(), floor.figures(), calls?.figures()];
    let profiles: FloorRatio['profiles'];
    if (profileDir) {
      // A profile is written when its worker exits.
      await Promise.all([productWorker, floorWorker, ...(callsWorker ? [callsWorker] : [])].map(stopProcess));
      profiles = {
        product: await summarizeCpuProfiles(join(profileDir, 'product'), measured),
        floor: await summarizeCpuProfiles(join(profileDir, 'floor'), measured),
        ...(callsWorker ? { calls: await summarizeCpuProfiles(join(profileDir, 'calls'), measured) } : {}),
        dir: profileDir,
      };
    }
    let transitFigures: TransitFigures | undefined;
    if (transit && openBao) {
      const side = transit.figures();
      const log = await readFile(openBao.auditLog, 'utf8');
      transitFigures = {
        product: side,
        latencyRatio: side.startToResultMs / floorFigures.startToResultMs,
        cpuRatio: side.workerCpuMs / floorFigures.workerCpuMs,
        datakeyCalls: auditedCalls(log, 'datakey'),
        decryptCalls: auditedCalls(log, 'decrypt'),
        payloads: transitPayloads,
      };
    }
    return {
      runs,
      product: productFigures,
      floor: floorFigures,
      calls: callsFigures && {
        floorWithCalls: callsFigures,
        productOverCallsLatencyRatio: productFigures.startToResultMs / callsFigures.startToResultMs,
        productOverCallsCpuRatio: productFigures.workerCpuMs / callsFigures.workerCpuMs,
        callsOverFloorLatencyRatio: callsFigures.startToResultMs / floorFigures.startToResultMs,
        callsOverFloorCpuRatio: callsFigures.workerCpuMs / floorFigures.workerCpuMs,
      },
      latencyRatio: productFigures.startToResultMs / floorFigures.startToResultMs,
      cpuRatio: productFigures.workerCpuMs / floorFigures.workerCpuMs,
      transit: transitFigures,
      profiles,
    };
  } finally {
    await Promise.all(started.map(stopProcess));
    await env.teardown();
    await benchWorker.remove();
    await openBao?.stop();
    if (auditDir) await rm(auditDir, { recursive: true, force: true });
  }
}

/** The one line bench:burst and bench/floor-ratio-run.ts print. */
export function floorRatioLine({ runs, product, floor, latencyRatio, cpuRatio }: FloorRatio): string {
  return (
    `connection vs SDK floor: start→result ${product.startToResultMs.toFixed(1)} / ${floor.startToResultMs.toFixed(1)} ms (${latencyRatio.toFixed(2)}x), ` +
    `worker CPU ${product.workerCpuMs.toFixed(1)} / ${floor.workerCpuMs.toFixed(1)} ms (${cpuRatio.toFixed(2)}x), ${runs} runs each, alternating`
  );
}

/** The vault-transit line of floor-ratio-run.ts --key-provider vault-transit: its floor ratio beside the static one of the same run, and its KMS calls. */
export function transitLine({ runs, latencyRatio, cpuRatio, transit }: FloorRatio): string {
  if (!transit) return '';
  const calls = transit.datakeyCalls + transit.decryptCalls;
  return (
    `vault-transit (OpenBao) vs SDK floor: start→result ${transit.product.startToResultMs.toFixed(1)} ms (${transit.latencyRatio.toFixed(2)}x; static ${latencyRatio.toFixed(2)}x), ` +
    `worker CPU ${transit.product.workerCpuMs.toFixed(1)} ms (${transit.cpuRatio.toFixed(2)}x; static ${cpuRatio.toFixed(2)}x), ${runs} runs each, alternating; ` +
    `KMS calls ${calls} (${transit.datakeyCalls} datakey, ${transit.decryptCalls} decrypt) for ${transit.payloads} payloads: ${((calls * 1000) / transit.payloads).toFixed(1)} per 1,000 payloads`
  );
}

/**
 * The serviceCalls lines of floor-ratio-run.ts: what the service's two calls cost the floor by
 * themselves, and the product against the floor that makes them (what the product adds beyond its calls).
 */
export function callsLines({ runs, product, floor, calls }: FloorRatio): string[] {
  if (!calls) return [];
  const { floorWithCalls: withCalls } = calls;
  return [
    `floor with the service's calls vs SDK floor: start→result ${withCalls.startToResultMs.toFixed(1)} / ${floor.startToResultMs.toFixed(1)} ms (${calls.callsOverFloorLatencyRatio.toFixed(2)}x), ` +
      `worker CPU ${withCalls.workerCpuMs.toFixed(1)} / ${floor.workerCpuMs.toFixed(1)} ms (${calls.callsOverFloorCpuRatio.toFixed(2)}x), ${runs} runs each, alternating`,
    `connection vs the floor with the service's calls: start→result ${product.startToResultMs.toFixed(1)} / ${withCalls.startToResultMs.toFixed(1)} ms (${calls.productOverCallsLatencyRatio.toFixed(2)}x), ` +
      `worker CPU ${product.workerCpuMs.toFixed(1)} / ${withCalls.workerCpuMs.toFixed(1)} ms (${calls.productOverCallsCpuRatio.toFixed(2)}x), ${runs} runs each, alternating`,
  ];
}
