/**
 * Held starts on a real dev server: with UNATTENDED_ADMISSION=window the product's client starts an
 * unattended connection held by Temporal (a start delay) and wakes its tenant's admission, which
 * finds it in visibility and begins it when there is room with a signal-with-start that carries the
 * grant. Shown here: a held start runs no workflow task until its grant (so a storm of starts costs
 * the workers nothing while it queues) and asks for nothing, and the admission takes no signal a
 * start; one terminated while held gives its room back and is never started again; one whose
 * admission is gone begins at its delay and asks for itself.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import proto from '@temporalio/proto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { connectionKey } from '../../src/client/business-key.js';
import { ConnectionsClient } from '../../src/client/connections.js';
import { ConnectionHeldError } from '../../src/client/errors.js';
import {
  ADMISSION_WINDOW_BOUNDS,
  admissionGrantSignal,
  admissionRequestSignal,
  admissionStateQuery,
  admissionWakeSignal,
  admissionWorkflowId,
  type AdmissionState,
} from '../../src/contract/admission/admission-definitions.js';
import { connectionStateQuery } from '../../src/contract/connection/connection-definitions.js';
import type { ConnectionInputArgs } from '../../src/contract/connection/connection-input.js';
import { createSandbox, type Sandbox } from '../../sandbox/server.js';
import { localActivityTypes, type HistoryEvents } from '../../scripts/security-check/admission-attacks.js';
import { startConnectionStack, type ConnectionStack } from '../helpers/connection-stack.js';
import { createDevEnvironment, uniqueId, waitFor } from '../helpers/temporal.js';

let env: TestWorkflowEnvironment;
let sandbox: Sandbox;
let stack: ConnectionStack;
let connections: ConnectionsClient;

before(async () => {
  env = await createDevEnvironment();
  sandbox = await createSandbox({ port: 0 });
  stack = await startConnectionStack(env, { sandbox, unattendedAdmission: 'window' });
  connections = new ConnectionsClient({ client: stack.client, taskQueue: stack.taskQueue, unattendedAdmission: 'window' });
});

after(async () => {
  await stack?.stop();
  await sandbox?.close();
  await env?.teardown();
});

/** The admission's first window: held starts beyond it stay held. */
const WINDOW = ADMISSION_WINDOW_BOUNDS.start;

async function savedLogin(customerId: string, username: string): Promise<string> {
  const response = await fetch(`${sandbox.url}/sandbox/${encodeURIComponent(customerId)}/logins`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username }),
  });
  assert.ok(response.ok, `the sandbox saved a login: ${response.status}`);
  return ((await response.json()) as { LoginId: string }).LoginId;
}

/** Unattended cached refreshes through the product's client, each polling `polls` times 1 s apart. */
async function startHeld(
  customerId: string,
  count: number,
  polls: number,
  timing: ConnectionInputArgs['timing'] = {},
): Promise<{ workflowId: string; runId: string }[]> {
  const logins = await Promise.all(Array.from({ length: count }, () => savedLogin(customerId, `pending_polls_${polls}`)));
  return await Promise.all(
    logins.map((loginId) =>
      connections.start(connectionKey(customerId, uniqueId('app')), {
        customerId,
        session: { kind: 'cached', loginId },
        products: { accountsDetail: {} },
        unattended: true,
        timing: { pollIntervalMs: 1_000, ...timing },
      }),
    ),
  );
}

async function admissionOf(customerId: string): Promise<AdmissionState> {
  return await stack.client.workflow.getHandle(admissionWorkflowId(customerId)).query(admissionStateQuery);
}

const { EventType } = proto.temporal.api.enums.v1;
const STARTED = EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED;
const SIGNALED = EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED;
const TASK_SCHEDULED = EventType.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED;

async function historyOf(workflowId: string): Promise<HistoryEvents> {
  return (await stack.client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
}

/** The history's event types, in order. */
function eventTypes(events: HistoryEvents): number[] {
  return events.map((event) => Number(event.eventType));
}

/** Signals of one name in a history. */
function signalsIn(events: HistoryEvents, name: string): number {
  return events.filter((event) => event.workflowExecutionSignaledEventAttributes?.signalName === name).length;
}

describe('held unattended starts', () => {
  it('runs no workflow task of a held start until its admission grants it, and the grant begins it without an ask', async () => {
    const customerId = uniqueId('held');
    const started = await startHeld(customerId, WINDOW + 2, 4);
    const full = await waitFor(
      async () => {
        const state = await admissionOf(customerId).catch(() => undefined);
        return state && state.inFlight === WINDOW && state.queued === 2 ? state : undefined;
      },
      { timeoutMs: 30_000, describe: 'the window full and two held starts queued' },
    );
    assert.equal(full.queuedByPriority['3'], 2, 'queued at the scheduled class');
    // The two still queued: their histories hold the start alone, no workflow task.
    const histories = await Promise.all(started.map(async ({ workflowId }) => eventTypes(await historyOf(workflowId))));
    const untouched = started.filter((_, index) => !histories[index]!.includes(TASK_SCHEDULED));
    assert.equal(untouched.length, 2, `two runs not begun while the window is full: ${JSON.stringify(histories.map((types) => types.slice(0, 3)))}`);
    // Its state is not there to read until it begins: the client says why, not that Temporal is down.
    const waiting = untouched[0]!;
    await assert.rejects(connections.getState(waiting.workflowId), (error: unknown) => {
      assert.ok(error instanceof ConnectionHeldError, `a ConnectionHeldError: ${String(error)}`);
      assert.match(error.message, new RegExp(`held until .*admission-${customerId}:unattended`));
      return true;
    });

    const results = await Promise.all(started.map(({ workflowId }) => stack.client.workflow.getHandle(workflowId).result()));
    assert.equal(results.length, WINDOW + 2);
    for (const { workflowId } of started) {
      const events = await historyOf(workflowId);
      // Begun by its grant: the signal comes before the first workflow task (an asking connection's comes after its ask).
      assert.deepEqual(eventTypes(events).slice(0, 3), [STARTED, SIGNALED, TASK_SCHEDULED], `${workflowId} began with its grant`);
      assert.equal(signalsIn(events, admissionGrantSignal.name), 1, `${workflowId} was granted once`);
      const locals = localActivityTypes(events);
      assert.ok(locals.includes('validateConnectionInput'), `${workflowId}'s local activities read: ${locals.join(', ')}`);
      assert.ok(!locals.includes('askAdmission'), `${workflowId} never asked: ${locals.join(', ')}`);
      const state = await stack.client.workflow.getHandle(workflowId).query(connectionStateQuery);
      assert.ok(state.admission?.queuedAt && state.admission.admittedAt, `${workflowId} says when it queued and was admitted`);
    }
    const done = await waitFor(
      async () => {
        const state = await admissionOf(customerId);
        return state.inFlight === 0 && state.queued === 0 ? state : undefined;
      },
      { describe: 'the admission empty' },
    );
    assert.equal(done.granted, WINDOW + 2);
    // Found, not sent: no request a start, and the client's wakes (once a second at most) fewer than its starts.
    const admissionEvents = await historyOf(admissionWorkflowId(customerId));
    assert.equal(signalsIn(admissionEvents, admissionRequestSignal.name), 0, 'no start was sent to the admission one by one');
    const wakes = signalsIn(admissionEvents, admissionWakeSignal.name);
    assert.ok(wakes >= 1 && wakes < started.length, `${wakes} wakes for ${started.length} held starts`);
  });

  it('gives back the room of a held start terminated before its grant, and never starts it again', async () => {
    const customerId = uniqueId('held-term');
    const running = await startHeld(customerId, WINDOW, 10);
    await waitFor(async () => ((await admissionOf(customerId).catch(() => undefined))?.inFlight === WINDOW ? true : undefined), {
      timeoutMs: 30_000,
      describe: 'the window full',
    });
    const [held] = await startHeld(customerId, 1, 1);
    await waitFor(async () => ((await admissionOf(customerId)).queued === 1 ? true : undefined), { describe: 'the held start queued' });
    await stack.client.workflow.getHandle(held!.workflowId).terminate('test: an operator ends a held start');
    await Promise.all(running.map(({ workflowId }) => stack.client.workflow.getHandle(workflowId).result()));
    const after = await waitFor(
      async () => {
        const state = await admissionOf(customerId);
        return state.inFlight === 0 && state.queued === 0 ? state : undefined;
      },
      { timeoutMs: 30_000, describe: 'the admission empty: the terminated start released as ended' },
    );
    assert.equal(after.granted, WINDOW + 1, 'it was granted room, and gave it back');
    const described = await stack.client.workflow.getHandle(held!.workflowId).describe();
    assert.equal(described.status.name, 'TERMINATED');
    assert.equal(described.runId, held!.runId, 'no other run of its id was started');
  });

  it('begins a held start at its delay when its admission is gone, and it asks for itself', async () => {
    const customerId = uniqueId('held-lost');
    const running = await startHeld(customerId, WINDOW, 10);
    await waitFor(async () => ((await admissionOf(customerId).catch(() => undefined))?.inFlight === WINDOW ? true : undefined), {
      timeoutMs: 30_000,
      describe: 'the window full',
    });
    const [held] = await startHeld(customerId, 1, 1, { admissionAskAgainMs: 3_000 });
    await waitFor(async () => ((await admissionOf(customerId)).queued === 1 ? true : undefined), { describe: 'the held start queued' });
    await stack.client.workflow.getHandle(admissionWorkflowId(customerId)).terminate('test: an operator ends the admission');
    const result = await connections.result(held!.workflowId);
    assert.ok(result.accountsDetail, 'it ended with its data');
    const state = await stack.client.workflow.getHandle(held!.workflowId).query(connectionStateQuery);
    assert.ok(state.admission?.admittedAt, 'admitted by the next admission, which its own ask started');
    const events = await historyOf(held!.workflowId);
    assert.equal(eventTypes(events)[1], TASK_SCHEDULED, 'begun by its delay, not by a grant');
    assert.ok(localActivityTypes(events).includes('askAdmission'), 'it asked for itself');
    await Promise.all(running.map(({ workflowId }) => stack.client.workflow.getHandle(workflowId).result()));
  });
});
