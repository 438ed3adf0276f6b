/**
 * `npm start` (scripts/dev-stack.ts) as a crash leaves it: its process killed with SIGKILL, which runs
 * none of its shutdown. Its children (the Temporal server, the Web UI server, the worker, the console)
 * must end with it; the next start on the same file database must serve its first connection at once.
 * The stack runs on ports of its own and on a database in a temporary directory, never the
 * developer's own .temporal.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { devNull } from 'node:os';
import { after, before, describe, test } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { Client, Connection } from '@temporalio/client';
import { ConnectionsClient, connectionKey, loadClientConfig } from '../../src/client/index.js';
import { SANDBOX_PASSWORD } from '../../sandbox/scenarios.js';
import { DevStackRunner, type RunningStack } from './dev-stack-process.js';

/** The children get this long to end after their parent (the worker's drain is cut at 5 s). */
const ORPHAN_TIMEOUT_MS = 15_000;

const runner = new DevStackRunner('dev-stack-lifetime-');
const startStack = (underShell = false) => runner.start(underShell);

/** Every process on the machine with its parent and state (ps works on Linux and macOS alike). */
function processTable(): Map<number, { ppid: number; state: string; command: string }> {
  const table = new Map<number, { ppid: number; state: string; command: string }>();
  for (const line of execFileSync('ps', ['-A', '-o', 'pid=,ppid=,stat=,comm='], { encoding: 'utf8' }).split('\n')) {
    const match = /^\s*(\d+)\s+(\d+)\s+(\S+)\s+(.*)$/.exec(line);
    if (match) table.set(Number(match[1]), { ppid: Number(match[2]), state: match[3]!, command: match[4]! });
  }
  return table;
}

function descendantsOf(pid: number): Map<number, string> {
  const table = processTable();
  const found = new Map<number, string>();
  const queue = [pid];
  while (queue.length > 0) {
    const parent = queue.shift()!;
    for (const [child, row] of table) {
      if (row.ppid === parent && !found.has(child)) {
        found.set(child, row.command);
        queue.push(child);
      }
    }
  }
  return found;
}

/** Those of `pids` still running (a zombie, dead but not reaped, does not count). */
function alive(pids: Iterable<number>): number[] {
  const table = processTable();
  return [...pids].filter((pid) => {
    const row = table.get(pid);
    return row !== undefined && !row.state.startsWith('Z');
  });
}

async function killParentAndWaitForChildren(stack: RunningStack): Promise<{ children: Map<number, string>; goneMs: number }> {
  const children = descendantsOf(stack.pid);
  const killedAt = Date.now();
  process.kill(stack.pid, 'SIGKILL');
  while (alive(children.keys()).length > 0 && Date.now() - killedAt < ORPHAN_TIMEOUT_MS) await delay(100);
  const left = alive(children.keys());
  assert.deepEqual(
    left.map((pid) => `${pid} ${children.get(pid)}`),
    [],
    `children of the stack still running ${ORPHAN_TIMEOUT_MS} ms after its SIGKILL`,
  );
  return { children, goneMs: Date.now() - killedAt };
}

before(async () => {
  await runner.prepare();
});

after(() => {
  runner.cleanup();
});

/** ms since the epoch of a history event. */
function eventMs(event: { eventTime?: { seconds?: unknown; nanos?: number | null } | null } | undefined): number {
  assert.ok(event?.eventTime, 'an event with its time');
  return Number(event.eventTime.seconds ?? 0) * 1000 + Math.round((event.eventTime.nanos ?? 0) / 1e6);
}

interface FirstConnection {
  /** From its start (WorkflowExecutionStarted) to its first workflow task's start: the wait for a worker. */
  readonly taskWaitMs: number;
  /** From the stack's "up" to the first workflow task (the worker's start-up included). */
  readonly firstTaskMs: number;
  /** From the stack's "up" to the first step returned to the client. */
  readonly firstStepMs: number;
}

/** Starts a connection that authorizes at once and waits for its result; its times (`from`: the stack's "up"). */
async function firstConnection(from: number): Promise<FirstConnection> {
  const config = loadClientConfig({ ...runner.env, TEMPORAL_ADDRESS: runner.temporalAddress, TEMPORAL_CONFIG_FILE: devNull });
  const client = await ConnectionsClient.connect(config);
  const connection = await Connection.connect({ address: runner.temporalAddress });
  try {
    const key = connectionKey(config.customerId, `lifetime-${randomUUID().slice(0, 8)}`);
    const first = await client.startAndAwaitFirstStep(key, {
      customerId: config.customerId,
      session: { kind: 'live', institution: 'SandboxBank', username: 'no_mfa', password: SANDBOX_PASSWORD },
      products: { accountsDetail: { WithTransactions: true } },
      timing: { pollIntervalMs: 200 },
    });
    const firstStepMs = Date.now() - from;
    assert.notEqual(first.step, undefined);
    // The history's times, which need no codec: a client of its own, without the payload key.
    const history = await new Client({ connection, namespace: config.temporal.namespace }).workflow.getHandle(key).fetchHistory();
    const events = history.events ?? [];
    const started = eventMs(events.find((event) => event.workflowExecutionStartedEventAttributes));
    const taskStarted = eventMs(events.find((event) => event.workflowTaskStartedEventAttributes));
    await client.result(key);
    return { taskWaitMs: taskStarted - started, firstTaskMs: taskStarted - from, firstStepMs };
  } finally {
    await client.close();
    await connection.close();
  }
}

/** firstConnection, with what the stack printed when it fails. */
async function firstConnectionOf(stack: RunningStack): Promise<FirstConnection> {
  try {
    return await firstConnection(stack.upAt);
  } catch (error) {
    throw new Error(`the stack's first connection failed; the stack printed:\n${stack.output()}\n${runner.serverLogTail()}`, { cause: error });
  }
}

/** One line of figures for the run's output. */
function figures(what: string, stack: RunningStack, times: FirstConnection): string {
  return (
    `${what}: worker polling ${stack.workerAt - stack.upAt} ms after "up"; its first connection, started then, ` +
    `waited ${times.taskWaitMs} ms for its first workflow task (${times.firstTaskMs} ms after "up"), first step ${times.firstStepMs} ms after "up"`
  );
}

describe('npm start killed with SIGKILL', { concurrency: false }, () => {
  test('leaves none of its children running', async () => {
    const stack = await startStack();
    const fresh = await firstConnectionOf(stack);
    console.log(figures('dev-stack on a fresh database', stack, fresh));
    // Both pools in its one worker process (the shell sets neither here).
    assert.match(stack.output(), /Worker {12}src\/worker\.ts, task queue (\S+) \(book refreshes on \1-unattended, in the same process\)/);
    const { children, goneMs } = await killParentAndWaitForChildren(stack);
    const names = [...children.values()].join(', ');
    // The server, the Web UI server, the worker and the console at least (a keeper may stand before a binary).
    assert.ok(children.size >= 4, `the stack had ${children.size} children: ${names}`);
    console.log(`dev-stack lifetime: ${children.size} children (${names}) all gone ${goneMs} ms after the parent's SIGKILL`);
  });

  test('stops, children and all, when only the process above it is killed (npm, tsx)', async () => {
    const shell = await startStack(true);
    const stack = descendantsOf(shell.pid);
    const killedAt = Date.now();
    process.kill(shell.pid, 'SIGKILL');
    while (alive(stack.keys()).length > 0 && Date.now() - killedAt < ORPHAN_TIMEOUT_MS) await delay(100);
    assert.deepEqual(
      alive(stack.keys()).map((pid) => `${pid} ${stack.get(pid)}`),
      [],
      `the stack or its children still running ${ORPHAN_TIMEOUT_MS} ms after its parent's SIGKILL`,
    );
    console.log(`dev-stack lifetime: the stack and its ${stack.size - 1} descendants gone ${Date.now() - killedAt} ms after its parent's SIGKILL`);
  });

  test('restarted on the same database after that, serves its first connection (a figure, not a bound)', async () => {
    // The stacks above ran on this database: the last stopped itself, then this one is killed with SIGKILL.
    const first = await startStack();
    const one = await firstConnectionOf(first);
    console.log(figures('dev-stack restarted after stopping itself', first, one));
    await killParentAndWaitForChildren(first);

    const spawnedAt = Date.now();
    const second = await startStack();
    const two = await firstConnectionOf(second);
    console.log(`${figures('dev-stack restarted after a SIGKILL', second, two)}; "up" ${second.upAt - spawnedAt} ms after its start`);
    await killParentAndWaitForChildren(second);
  });
});
