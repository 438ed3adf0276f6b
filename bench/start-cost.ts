/**
 * `npm run bench:start-cost`: what one unattended start costs the production stack (Temporal server,
 * PostgreSQL, the workers) by the way it is handed to its tenant's admission, at the storm's pace
 * (issue 46, item 1):
 * - a held start as the client made it before: the workflow created with a start delay, then its
 *   request sent to the admission, which the worker takes (a workflow task a request, fewer when
 *   they come faster than its tasks) and releases (a read of the run, which finds it on a queue of
 *   no connection's and gives its room back; the held start of now pays that read at its grant);
 * - a held start now: the same workflow, and a wake a second for the admission, which finds the
 *   starts in visibility;
 * - the parts: the request alone with no worker for the admission (the server's and PostgreSQL's
 *   share), and a request the worker takes and refuses at once (the workflow task's cost).
 * The connections go to a queue no worker polls, so none runs: what is measured is the hand-over.
 * Sides alternate, each batch after the stack is quiet, less the stack's idle read just before.
 *
 *   npm run bench:start-cost -- [--batches 2] [--per-batch 300] [--rate 30]
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { requestAdmission } from '../src/admission/request-admission.js';
import { connectionKey } from '../src/client/business-key.js';
import { TypedSearchAttributes } from '@temporalio/common';
import { ADMISSION_ASK_AGAIN_MS, admissionStateQuery, admissionWorkflowId, HELD_START_MEMO } from '../src/contract/admission/admission-definitions.js';
import { CONNECTION_WORKFLOW_TYPE } from '../src/contract/connection/connection-definitions.js';
import type { ConnectionInputArgs } from '../src/contract/connection/connection-input.js';
import { startPriority } from '../src/contract/priority.js';
import { connectionStartAttributes } from '../src/contract/search-attributes.js';
import { ConnectionsClient } from '../src/client/connections.js';
import { Timeline } from '../scripts/chaos/timeline.js';
import { numberArgument } from '../scripts/lib/number-argument.js';
import { cpuBetween, sampleCpu, waitForQuietStack } from './burst/cpu.js';
import { releaseStack, startStack, type StackResources } from './burst/stack.js';
import { CPU_PARTS, perRun, totalOf, type BatchSample, type PartsMs } from './stack-floor/figures.js';

const QUIET = { quietMsPerSecond: 150, sampleMs: 1_000, maxMs: 30_000 } as const;
const IDLE_SAMPLE_MS = 3_000;
const SETTLE_MS = 3_000;
const CONCURRENCY = 16;

function parseArgs(argv: readonly string[]): { batches: number; perBatch: number; rate: number } {
  const out = { batches: 2, perBatch: 300, rate: 30 };
  for (let index = 0; index < argv.length; index += 1) {
    const flag = argv[index] as string;
    const value = numberArgument(flag, argv[(index += 1)], 1, 10_000);
    if (typeof value === 'string') throw new Error(value);
    if (flag === '--batches') out.batches = value;
    else if (flag === '--per-batch') out.perBatch = value;
    else if (flag === '--rate') out.rate = value;
    else throw new Error(`unknown argument ${JSON.stringify(flag)}`);
  }
  return out;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const log = (line: string) => process.stdout.write(`${line}\n`);
const byPart = (used: PartsMs) => CPU_PARTS.map((name) => `${name} ${used[name].toFixed(2)}`).join(', ');

/** Runs `op` `count` times at `rate` a second, at most CONCURRENCY at once. */
async function paced(count: number, rate: number, op: (index: number) => Promise<unknown>): Promise<void> {
  const began = Date.now();
  const running = new Set<Promise<unknown>>();
  for (let index = 0; index < count; index += 1) {
    const due = began + (index * 1000) / rate;
    if (due > Date.now()) await sleep(due - Date.now());
    while (running.size >= CONCURRENCY) await Promise.race(running);
    const call = op(index).finally(() => running.delete(call));
    running.add(call);
  }
  await Promise.all(running);
}

async function main(): Promise<void> {
  const { batches, perBatch, rate } = parseArgs(process.argv.slice(2));
  const runDir = await mkdtemp(join(tmpdir(), 'aggregation-start-cost-'));
  const runTag = Date.now().toString(36);
  const resources: StackResources = {};
  try {
    const stack = await startStack({ mode: 'on', workers: 1, budgetRps: 1_000, tenantBudgetRps: 1_000, runDir, runTag, timeline: new Timeline() }, resources);
    // Connections on a queue no worker polls: none runs. The admissions on the stack's worker, or (the parts) on a queue of their own.
    const nobody = `start-cost-nobody-${runTag}`;
    const woken = new ConnectionsClient({
      client: stack.client,
      taskQueue: nobody,
      unattendedTaskQueue: stack.taskQueue,
      unattendedAdmission: 'window',
      priority: stack.policy,
    });
    /** The held start of before, as its client made it: the workflow (delay, memo, search attributes), then a request (below). */
    const heldWorkflow = async (key: string, input: ConnectionInputArgs) => {
      const handle = await stack.client.workflow.start(CONNECTION_WORKFLOW_TYPE, {
        workflowId: key,
        taskQueue: nobody,
        args: [input],
        startDelay: ADMISSION_ASK_AGAIN_MS,
        memo: { [HELD_START_MEMO]: true },
        typedSearchAttributes: new TypedSearchAttributes(connectionStartAttributes(input)),
        priority: startPriority(stack.policy, 'scheduled', input.customerId),
      });
      return { workflowId: key, runId: handle.firstExecutionRunId };
    };
    const cachedStart = (customerId: string, name: string) => ({
      key: connectionKey(customerId, name),
      input: { customerId, session: { kind: 'cached' as const, loginId: randomUUID() }, products: { accountsDetail: {} }, unattended: true },
    });
    let serial = 0;
    const beforeAdmission = stack.client.workflow.getHandle(admissionWorkflowId('start-cost-before'));
    /** After a side's calls: the work they left the worker (the before side's queue, taken and released). */
    const drained: Partial<Record<string, () => Promise<void>>> = {
      'held start, a request each (before)': async () => {
        const deadline = Date.now() + 120_000;
        while (Date.now() < deadline) {
          // A query can time out while the worker is busy: asked again.
          const state = await beforeAdmission.query(admissionStateQuery).catch(() => undefined);
          if (state?.queued === 0 && state.inFlight === 0) return;
          await sleep(200);
        }
        throw new Error("start-cost: the before side's admission did not empty within 120 s");
      },
    };
    const sides = {
      'held start, a request each (before)': async () => {
        const { key, input } = cachedStart('start-cost-before', `b-${(serial += 1)}`);
        const { workflowId, runId } = await heldWorkflow(key, input);
        await requestAdmission({ temporal: stack.client, taskQueue: stack.taskQueue, priority: stack.policy }, input.customerId, {
          workflowId,
          runId,
          priorityKey: 3,
          held: true,
        });
      },
      'held start, a wake a second (now)': async () => {
        const { key, input } = cachedStart('start-cost-now', `n-${(serial += 1)}`);
        await woken.start(key, input);
      },
      'admission request alone (no worker)': async () => {
        const customerId = 'start-cost-signal';
        await requestAdmission({ temporal: stack.client, taskQueue: `${nobody}-admission`, priority: stack.policy }, customerId, {
          workflowId: connectionKey(customerId, `s-${(serial += 1)}`),
          runId: randomUUID(),
          priorityKey: 3,
          held: true,
        });
      },
      'admission request, refused by the worker': async () => {
        const customerId = 'start-cost-worker';
        // A run id that is not a UUID: the product's admission refuses it in its handler (no release, no describe).
        await requestAdmission({ temporal: stack.client, taskQueue: stack.taskQueue, priority: stack.policy }, customerId, {
          workflowId: connectionKey(customerId, `w-${(serial += 1)}`),
          runId: 'not-a-run',
          priorityKey: 3,
        });
      },
    } as const;
    log(
      `start-cost: Temporal server ${stack.serverVersion} on PostgreSQL, 1 worker; ${batches} batches of ${perBatch} a side at ${rate} a second, alternating`,
    );
    const samples = new Map<string, BatchSample[]>();
    for (let batch = 1; batch <= batches; batch += 1) {
      for (const [name, op] of Object.entries(sides)) {
        await waitForQuietStack(stack.postgresDataDir, QUIET);
        const idleFrom = sampleCpu(stack.postgresDataDir);
        await sleep(IDLE_SAMPLE_MS);
        const idle = cpuBetween(idleFrom, sampleCpu(stack.postgresDataDir));
        const idleMsPerSecond = Object.fromEntries(CPU_PARTS.map((part) => [part, (idle[part] * 1000) / IDLE_SAMPLE_MS])) as PartsMs;
        const before = sampleCpu(stack.postgresDataDir);
        const began = Date.now();
        await paced(perBatch, rate, op);
        await drained[name]?.();
        await sleep(SETTLE_MS);
        const sample: BatchSample = {
          runs: perBatch,
          seconds: (Date.now() - began) / 1000,
          cpuMs: cpuBetween(before, sampleCpu(stack.postgresDataDir)),
          idleMsPerSecond,
        };
        samples.set(name, [...(samples.get(name) ?? []), sample]);
        const used = perRun(sample);
        log(`batch ${batch} ${name}: ${totalOf(used).toFixed(2)} ms of stack CPU a start (${byPart(used)})`);
      }
    }
  } finally {
    await releaseStack(resources, (line) => process.stderr.write(`${line}\n`));
    await rm(runDir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`start-cost failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
