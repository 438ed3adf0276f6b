/**
 * A tenant's admission on a real dev server: unattended connections started outside a book queue
 * behind the tenant's window while live ones start at once; a queued connection cancelled leaves the
 * queue; a worker restarted with a queue loses nothing; an admission terminated by hand costs its
 * queued connections one ask-again wait; forged requests and grants change nothing they should not.
 * Each connection polls a pending operation (`pending_polls_<n>`, 1 s apart), so it takes seconds and
 * the window (4 at its start, grown only after a round of completions) is full while the test looks.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { WorkflowFailedError } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import {
  ADMISSION_WINDOW_BOUNDS,
  admissionRequestSignal,
  admissionStateQuery,
  admissionWorkflowId,
  type AdmissionState,
} from '../../src/contract/admission/admission-definitions.js';
import { connectionStateQuery, type ConnectionState } from '../../src/contract/connection/connection-definitions.js';
import { SANDBOX_PASSWORD } from '../../sandbox/scenarios.js';
import { createSandbox, type Sandbox } from '../../sandbox/server.js';
import { startConnectionStack, type ConnectionStack } from '../helpers/connection-stack.js';
import { createDevEnvironment, uniqueId, waitFor } from '../helpers/temporal.js';

let env: TestWorkflowEnvironment;
let sandbox: Sandbox;
let stack: ConnectionStack;
const stacks: ConnectionStack[] = [];

before(async () => {
  env = await createDevEnvironment();
  // Kept beyond a stack: the worker standing in for a restarted one finds the same saved logins.
  sandbox = await createSandbox({ port: 0 });
  stack = await startConnectionStack(env, { sandbox, unattendedAdmission: 'window' });
  stacks.push(stack);
});

after(async () => {
  for (const each of stacks) await each.stop();
  await sandbox?.close();
  await env?.teardown();
});

/** The admission's first window: connections beyond it queue. */
const WINDOW = ADMISSION_WINDOW_BOUNDS.start;

/** A run id no run has. */
const NO_RUN = '00000000-0000-4000-8000-000000000000';

type Started = Awaited<ReturnType<ConnectionStack['start']>>;

/** Unattended cached refreshes of fresh saved logins that each poll `polls` times, 1 s apart; started at once. */
async function startUnattended(customerId: string, count: number, polls: number, timing: { admissionAskAgainMs?: number } = {}): Promise<Started[]> {
  const logins = await Promise.all(Array.from({ length: count }, () => savedLogin(customerId, `pending_polls_${polls}`)));
  return await Promise.all(
    // Ids the admission takes: the tenant's (`connection-<customerId>:…`), as the product's client makes them.
    logins.map((loginId) =>
      stack.start(
        { customerId, session: { kind: 'cached', loginId }, products: { accountsDetail: {} }, unattended: true, timing: { pollIntervalMs: 1_000, ...timing } },
        `connection-${customerId}:${uniqueId('app')}`,
      ),
    ),
  );
}

/** A saved login of `customerId` at the shared sandbox (the stack's own helper saves its tenant's). */
async function savedLogin(customerId: string, username: string): Promise<string> {
  const response = await fetch(`${sandbox.url}/sandbox/${encodeURIComponent(customerId)}/logins`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username }),
  });
  assert.ok(response.ok, `the sandbox saved a login: ${response.status}`);
  return ((await response.json()) as { LoginId: string }).LoginId;
}

/**
 * The `count` connections still queued, with their states: those not admitted once every grant sent
 * has reached its connection (waited for until exactly `count` are left).
 */
async function stillQueued(storm: readonly Started[], count: number): Promise<{ handle: Started; state: ConnectionState }[]> {
  return await waitFor(
    async () => {
      const states = await Promise.all(storm.map((handle) => handle.query(connectionStateQuery)));
      const waiting = storm.flatMap((handle, index) => (states[index]?.admission?.admittedAt === undefined ? [{ handle, state: states[index]! }] : []));
      return waiting.length === count ? waiting : undefined;
    },
    { describe: `${count} connections still waiting for room` },
  );
}

async function admissionOf(customerId: string): Promise<AdmissionState> {
  return await stack.client.workflow.getHandle(admissionWorkflowId(customerId)).query(admissionStateQuery);
}

describe('admission of unattended connections', () => {
  it('queues a storm of unattended starts behind the window while a live connection starts at once', async () => {
    const customerId = uniqueId('adm-storm');
    const storm = await startUnattended(customerId, WINDOW + 4, 6);
    const held = await waitFor(
      async () => {
        const state = await admissionOf(customerId);
        // All asked, and the admission has granted what its window holds (its grants follow its reads of
        // the fleet); "no more" is the four still queued.
        return state.queued + state.inFlight === WINDOW + 4 && state.inFlight >= WINDOW ? state : undefined;
      },
      { describe: 'all at the admission, the window granted' },
    );
    assert.equal(held.inFlight, WINDOW, 'the window, and no more, admitted');
    assert.equal(held.queued, 4);
    // The queue's order is the order the asks reached the admission, not the order of the starts.
    const waiting = await stillQueued(storm, 4);
    for (const { state } of waiting) {
      assert.equal(state.status, 'Authorizing');
      assert.ok(state.admission?.queuedAt, 'a queued one says it is queued');
    }

    // A live user meanwhile: no admission, done while the storm still queues.
    const live = await stack.start({
      customerId,
      session: { kind: 'live', institution: 'SandboxBank', username: 'no_mfa', password: SANDBOX_PASSWORD, save: false },
      products: { accountsDetail: {} },
      timing: { pollIntervalMs: 100 },
    });
    await live.result();
    assert.equal((await live.query(connectionStateQuery)).admission, undefined);
    const liveEnded = Date.parse((await live.query(connectionStateQuery)).updatedAt);

    const results = await Promise.all(storm.map((handle) => handle.result()));
    assert.equal(results.length, WINDOW + 4);
    const admitted = await Promise.all(storm.map(async (handle) => (await handle.query(connectionStateQuery)).admission));
    for (const admission of admitted) assert.ok(admission?.admittedAt, 'every one was granted room');
    const lastAdmitted = Math.max(...admitted.map((admission) => Date.parse(admission?.admittedAt ?? '')));
    assert.ok(
      liveEnded < lastAdmitted,
      `the live connection ended (${new Date(liveEnded).toISOString()}) before the storm was all admitted (${admitted.map((admission) => admission?.admittedAt).join(', ')})`,
    );
    const done = await waitFor(
      async () => {
        const state = await admissionOf(customerId);
        return state.inFlight === 0 && state.queued === 0 ? state : undefined;
      },
      { describe: 'the admission empty' },
    );
    assert.equal(done.granted, WINDOW + 4);
    assert.equal(done.refused, 0);
  });

  it('takes a queued connection that is cancelled out of the queue, and loses nothing over a worker restart', async () => {
    const customerId = uniqueId('adm-cancel');
    const storm = await startUnattended(customerId, WINDOW + 2, 10);
    await waitFor(
      async () => {
        const state = await admissionOf(customerId);
        return state.queued === 2 && state.inFlight === WINDOW ? state : undefined;
      },
      { describe: 'the window admitted, two queued' },
    );
    const queued = (await stillQueued(storm, 2)).map(({ handle }) => handle);
    await queued[0]!.cancel();
    await assert.rejects(queued[0]!.result(), (error: unknown) => error instanceof WorkflowFailedError);
    await waitFor(async () => ((await admissionOf(customerId)).queued === 1 ? true : undefined), { describe: 'the cancelled one out of the queue' });

    // The worker goes (mid-poll for the window, one queued); another takes its task queue.
    await stack.stop();
    const restarted = await startConnectionStack(env, { taskQueue: stack.taskQueue, customerId: stack.customerId, sandbox, unattendedAdmission: 'window' });
    stacks.push(restarted);
    const others = storm.filter((handle) => handle !== queued[0]);
    const results = await Promise.all(others.map((handle) => handle.result()));
    assert.equal(results.length, WINDOW + 1);
    const done = await waitFor(
      async () => {
        const state = await admissionOf(customerId);
        return state.inFlight === 0 && state.queued === 0 ? state : undefined;
      },
      { describe: 'the admission empty' },
    );
    assert.equal(done.granted, WINDOW + 1, 'the cancelled one was never granted');
    stack = restarted;
  });

  it('lets queued connections ask again when the admission is terminated by hand', async () => {
    const customerId = uniqueId('adm-term');
    const storm = await startUnattended(customerId, WINDOW + 2, 5, { admissionAskAgainMs: 2_000 });
    await waitFor(
      async () => {
        const state = await admissionOf(customerId);
        return state.queued === 2 ? state : undefined;
      },
      { describe: 'two queued' },
    );
    await stack.client.workflow.getHandle(admissionWorkflowId(customerId)).terminate('test: an operator ends the admission');
    const results = await Promise.all(storm.map((handle) => handle.result()));
    assert.equal(results.length, WINDOW + 2, 'every connection ended, the queued ones through the next admission');
    // The next admission (started by the first ask again) granted the two that were queued, and any
    // whose grant the termination cut off before Temporal delivered it.
    const next = await admissionOf(customerId);
    assert.ok(next.granted >= 2 && next.granted <= WINDOW + 2, `the next admission granted ${next.granted}`);
  });

  it('refuses requests it must not queue, gives back a grant to no run, and lets a connection it would refuse start at once', async () => {
    const customerId = uniqueId('adm-forged');
    const [first] = await startUnattended(customerId, 1, 1);
    await first!.result();
    const admission = stack.client.workflow.getHandle(admissionWorkflowId(customerId));
    const before = await admission.query(admissionStateQuery);
    const refusedRequests = [
      { workflowId: `connection-someone-else:${uniqueId('x')}`, runId: NO_RUN, priorityKey: 3 },
      { workflowId: `connection-${customerId}:nobody`, runId: NO_RUN, priorityKey: 9 },
      // Temporal would fail the task that signals a run id that is not a UUID, or an id over 1,000 bytes.
      { workflowId: `connection-${customerId}:nobody`, runId: 'not-a-run', priorityKey: 3 },
      { workflowId: `connection-${customerId}:${'€'.repeat(999)}`, runId: NO_RUN, priorityKey: 3 },
      // Another kind of the tenant's workflows: a grant would sit in its history, its room never back.
      { workflowId: `book-entry-${customerId}:login`, runId: NO_RUN, priorityKey: 3 },
    ];
    for (const request of refusedRequests) await admission.signal(admissionRequestSignal, request);
    await admission.signal(admissionRequestSignal, { workflowId: `connection-${customerId}:nobody`, runId: NO_RUN, priorityKey: 3 });
    const after = await waitFor(
      async () => {
        const state = await admission.query(admissionStateQuery);
        return state.granted === before.granted + 1 && state.inFlight === 0 && state.refused === before.refused + refusedRequests.length ? state : undefined;
      },
      { describe: 'the refusals counted and the grant to no run given back' },
    );
    assert.equal(after.queued, 0);

    // An unattended connection whose id was chosen freely (not the tenant's): it would be refused, so it does not ask.
    const loginId = await savedLogin(customerId, 'pending_polls_1');
    const free = await stack.start(
      { customerId, session: { kind: 'cached', loginId }, products: { accountsDetail: {} }, unattended: true, timing: { pollIntervalMs: 100 } },
      uniqueId('free-id'),
    );
    await free.result();
    assert.equal((await free.query(connectionStateQuery)).admission, undefined);
    assert.equal((await admission.query(admissionStateQuery)).granted, after.granted, 'the admission never heard of it');
  });
});
