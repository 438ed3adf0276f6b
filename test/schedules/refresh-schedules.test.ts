/**
 * Scheduled refresh through the pipeline client on a real dev server, with the real worker and the
 * real sandbox over HTTP: schedules with short intervals run the ordinary connection workflow; pause,
 * unpause, trigger and delete act on the Temporal Schedule; the latest refresh is found by LoginId;
 * logins that need their end user (two-step, trusted device) are refused up front when known, and
 * a scheduled run that meets a challenge ends at once and flags the login.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import proto from '@temporalio/proto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import {
  InvalidLoginRefError,
  InvalidScheduleError,
  RefreshNotUnattendedError,
  RefreshScheduleNotFoundError,
  connectionKey,
  type ConnectionsClient,
  type LatestRefresh,
  type RefreshScheduleArgs,
} from '../../src/client/index.js';
import { refreshScheduleId } from '../../src/contract/login-keys.js';
import { connectionStateQuery } from '../../src/contract/connection/connection-definitions.js';
import type { ConnectionStack } from '../helpers/connection-stack.js';
import { uniqueId, waitFor } from '../helpers/temporal.js';
import { liveInput, startClientStack, stopClientStack } from '../client/client-stack.js';
import { scenarioSteps } from '../client/scenario-answers.js';

const TIMER_STARTED = proto.temporal.api.enums.v1.EventType.EVENT_TYPE_TIMER_STARTED;

let env: TestWorkflowEnvironment;
let stack: ConnectionStack;
let client: ConnectionsClient;

before(async () => {
  ({ env, stack, client } = await startClientStack());
});

after(async () => {
  await stopClientStack({ stack, env });
});

/** A schedule request for a login of the stack's tenant that polls fast. */
function request(loginId: string, fields: Partial<RefreshScheduleArgs>): RefreshScheduleArgs {
  return {
    customerId: stack.customerId,
    loginId,
    products: { accountsDetail: { WithTransactions: true } },
    cadence: { kind: 'interval', every: '1h' },
    timing: { pollIntervalMs: 50 },
    ...fields,
  };
}

/** The sandbox scenario listed as needing the end user in this way (the listing says which logins are two-step). */
async function scenarioNeeding(verification: 'two-step' | 'trusted-device'): Promise<{ username: string; institution: string }> {
  const response = await fetch(`${stack.sandboxUrl}/sandbox/scenarios`);
  const listing = (await response.json()) as {
    scenarios: { username: string; institution: string; endUserVerification: string | null; unattendedRefresh: boolean }[];
  };
  const found = listing.scenarios.find((scenario) => scenario.endUserVerification === verification);
  assert.ok(found, `the sandbox lists a ${verification} login`);
  assert.equal(found.unattendedRefresh, false);
  return found;
}

async function latestCompletedBySchedule(loginId: string): Promise<LatestRefresh> {
  return waitFor(
    async () => {
      const latest = await client.schedules.latestRefresh({ customerId: stack.customerId, loginId });
      return latest?.trigger === 'schedule' && latest.outcome.kind !== 'running' ? latest : undefined;
    },
    { timeoutMs: 30_000, describe: `a finished scheduled refresh of ${loginId}` },
  );
}

void describe('scheduled refresh', () => {
  void it('runs a cached connection every 2 s, lists the schedule, and finds the latest refresh with its result by LoginId', async () => {
    const loginId = await stack.savedLogin('no_mfa');
    const ref = { customerId: stack.customerId, loginId };
    const created = await client.schedules.schedule(request(loginId, { cadence: { kind: 'interval', every: '2s' } }));
    assert.equal(created.created, true);
    assert.equal(created.scheduleId, refreshScheduleId(stack.customerId, loginId));
    assert.deepEqual(created.cadence, { kind: 'interval', every: '2s', jitter: '0s' });
    assert.equal(created.session, 'cached');

    const latest = await latestCompletedBySchedule(loginId);
    assert.equal(latest.outcome.kind, 'completed', JSON.stringify(latest.outcome));
    assert.ok(latest.workflowId.startsWith(`${created.scheduleId}-`), `a run of the schedule: ${latest.workflowId}`);
    assert.equal(latest.status, 'Completed');
    assert.equal(latest.loginId, loginId);
    if (latest.outcome.kind === 'completed') {
      assert.equal(latest.outcome.result.loginId, loginId);
      assert.ok((latest.outcome.result.accountsDetail?.Accounts.length ?? 0) > 0, 'the run retrieved accounts detail');
    }

    const listed = await waitFor(async () => (await client.schedules.list({ customerId: stack.customerId })).find((schedule) => schedule.loginId === loginId), {
      describe: 'the schedule in the tenant listing',
    });
    assert.equal(listed.scheduleId, created.scheduleId);
    assert.deepEqual(listed.products, { accountsDetail: { WithTransactions: true } });

    // Scheduling the login again replaces its schedule.
    const replaced = await client.schedules.schedule(request(loginId, { cadence: { kind: 'daily', at: '02:30', timeZone: 'America/Toronto', jitter: '30m' } }));
    assert.equal(replaced.created, false);
    assert.deepEqual(replaced.cadence, { kind: 'daily', at: '02:30', timeZone: 'America/Toronto', jitter: '30m' });
    assert.equal(await client.schedules.delete(ref), 'deleted');
  });

  void it('pauses, unpauses, triggers and deletes a schedule', async () => {
    // A live refresh of a saved login with security questions: the service answers them itself.
    const loginId = await stack.savedLogin('security_question');
    const ref = { customerId: stack.customerId, loginId };
    await client.schedules.schedule(request(loginId, { session: 'refresh', cadence: { kind: 'interval', every: '2s' } }));
    await waitFor(async () => (await client.schedules.describe(ref)).recentRuns.length > 0, { timeoutMs: 15_000, describe: 'a first scheduled run' });

    await client.schedules.pause(ref, 'paused by the test');
    const paused = await client.schedules.describe(ref);
    assert.equal(paused.paused, true);
    assert.equal(paused.note, 'paused by the test');
    const pausedAt = new Date().toISOString();
    // Two of the times it would have run pass: neither starts a run.
    const skipped = paused.nextRunsAt.slice(0, 2);
    assert.equal(skipped.length, 2);
    await waitFor(() => Date.now() > Date.parse(skipped[1] ?? '') + 1_000, { timeoutMs: 10_000, describe: 'two scheduled times to pass' });
    const whilePaused = (await client.schedules.describe(ref)).recentRuns.filter((run) => run.scheduledAt > pausedAt);
    assert.deepEqual(whilePaused, [], 'no run is taken while paused');

    await client.schedules.unpause(ref);
    const unpausedAt = new Date().toISOString();
    assert.equal((await client.schedules.describe(ref)).paused, false);
    await waitFor(async () => (await client.schedules.describe(ref)).recentRuns.some((run) => run.scheduledAt > unpausedAt), {
      timeoutMs: 15_000,
      describe: 'a run after unpausing',
    });

    // Triggering runs now, even on a schedule that would not run for an hour.
    await client.schedules.schedule(request(loginId, { session: 'refresh', cadence: { kind: 'interval', every: '1h' } }));
    const triggeredAt = new Date().toISOString();
    await client.schedules.trigger(ref);
    const run = await waitFor(async () => (await client.schedules.describe(ref)).recentRuns.find((r) => r.startedAt >= triggeredAt.slice(0, 19)), {
      timeoutMs: 15_000,
      describe: 'the triggered run',
    });
    assert.deepEqual(await client.result(run.workflowId).then((result) => result.loginId), loginId);

    assert.equal(await client.schedules.delete(ref), 'deleted');
    await assert.rejects(client.schedules.describe(ref), RefreshScheduleNotFoundError);
    await assert.rejects(client.schedules.pause(ref), RefreshScheduleNotFoundError);
    await assert.rejects(client.schedules.trigger(ref), RefreshScheduleNotFoundError);
    assert.equal(await client.schedules.delete(ref), 'none', 'deleting again finds nothing');
    await waitFor(async () => !(await client.schedules.list({ customerId: stack.customerId, loginId })).length, {
      describe: 'the schedule to leave the listing',
    });
  });

  void it('refuses up front to schedule a login whose connection met two-step verification', async () => {
    const scenario = await scenarioNeeding('two-step');
    const steps = await scenarioSteps(stack.sandboxUrl, scenario.username);
    const key = connectionKey(stack.customerId, uniqueId('two-step'));
    const first = await client.startAndAwaitFirstStep(key, liveInput(stack.customerId, scenario.username, scenario.institution));
    assert.equal(first.step, 'challenge');
    for (const step of steps.challengeSequence) await client.answer(key, { responses: step.answer });
    const { loginId } = await client.result(key);
    const ref = { customerId: stack.customerId, loginId };

    const flag = await waitFor(() => client.schedules.endUserFlag(ref), { describe: 'the login flagged in visibility' });
    assert.equal(flag.challengeType, 'TextOrCall');
    assert.equal(flag.workflowId, key);
    await assert.rejects(client.schedules.schedule(request(loginId, {})), (error: unknown) => {
      assert.ok(error instanceof RefreshNotUnattendedError);
      assert.equal(error.loginId, loginId);
      assert.equal(error.challengeType, 'TextOrCall');
      assert.match(error.message, /cannot be refreshed unattended: it needs its end user: two-step verification/);
      return true;
    });
    await assert.rejects(client.schedules.describe(ref), RefreshScheduleNotFoundError, 'nothing was scheduled');
  });

  void it('ends a scheduled run that meets a challenge at once as EndUserActionRequired and flags the login', async () => {
    const scenario = await scenarioNeeding('trusted-device');
    // Saved without any connection of ours: nothing is known up front, so the schedule is accepted.
    const loginId = await stack.savedLogin(scenario.username);
    const ref = { customerId: stack.customerId, loginId };
    assert.equal(await client.schedules.endUserFlag(ref), undefined);
    await client.schedules.schedule(request(loginId, { session: 'refresh' }));
    await client.schedules.trigger(ref);

    const latest = await latestCompletedBySchedule(loginId);
    assert.equal(latest.outcome.kind, 'failed');
    assert.equal(latest.outcome.kind === 'failed' && latest.outcome.type, 'EndUserActionRequired');
    assert.equal(latest.status, 'Failed');
    const state = await stack.client.workflow.getHandle(latest.workflowId).query(connectionStateQuery);
    assert.equal(state.endUserChallenge, 'WaitUntilEUAccept');
    assert.equal(state.challengeSet, undefined, 'no challenge was presented to anyone');
    // At once: it never waited for an answer (that wait is a durable timer).
    const history = await stack.client.workflow.getHandle(latest.workflowId).fetchHistory();
    assert.equal(history.events?.filter((event) => event.eventType === TIMER_STARTED).length, 0);

    const flag = await waitFor(() => client.schedules.endUserFlag(ref), { describe: 'the login flagged by the run' });
    assert.equal(flag.workflowId, latest.workflowId);
    await assert.rejects(client.schedules.schedule(request(loginId, { session: 'refresh' })), RefreshNotUnattendedError);
    assert.equal(await client.schedules.delete(ref), 'deleted');
  });

  void it('refuses bad requests and login references before reaching Temporal', async () => {
    const loginId = await stack.savedLogin('no_mfa');
    const cases: [Partial<RefreshScheduleArgs>, RegExp][] = [
      [{ cadence: { kind: 'daily', at: '7:5' } }, /cadence\.at: must be HH:MM/],
      [{ cadence: { kind: 'daily', at: '07:05', timeZone: 'Europe/Atlantis' } }, /cadence\.timeZone: unknown time zone "Europe\/Atlantis"/],
      [{ cadence: { kind: 'interval', every: '0s' } }, /cadence\.every: must be at least 1s/],
      [{ loginId: '' }, /loginId: must not be empty/],
    ];
    for (const [fields, message] of cases) {
      await assert.rejects(
        client.schedules.schedule(request(loginId, fields)),
        (error: unknown) => error instanceof InvalidScheduleError && message.test(error.message),
      );
    }
    await assert.rejects(client.schedules.pause({ customerId: stack.customerId, loginId: '' }), InvalidLoginRefError);
    await assert.rejects(client.schedules.describe({ customerId: stack.customerId, loginId }), RefreshScheduleNotFoundError, 'none of them was created');
  });
});
