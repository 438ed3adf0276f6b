/**
 * What the connection activities count (src/metrics/service-metrics.ts) for each outcome of a call,
 * against the real sandbox: answers by how the service answered, polls (never a first request) by
 * operation and result in every polling strategy, failed calls by failure type and code, throttles
 * by tenant; a call held back while its tenant is paused is not counted at all, since it was not sent.
 * That the worker exports these counters on /metrics is test/metrics/grafana-dashboard.test.ts's.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { createActivities } from '../../src/activities/connection-activities.js';
import type { AuthorizeOutcome } from '../../src/activities/connection-activity-types.js';
import { tenantClients } from '../../src/activities/tenant-clients.js';
import type { FailedCall, ServiceMetrics } from '../../src/metrics/service-metrics.js';
import { SANDBOX_PASSWORD, SCENARIOS, describeScenario } from '../../sandbox/scenarios.js';
import { createSandbox, type Sandbox } from '../../sandbox/server.js';
import { uniqueId } from '../helpers/temporal.js';

/** Every count, in order, as `<metric> <labels>`. */
class RecordingMetrics implements ServiceMetrics {
  readonly counted: string[] = [];
  answered(outcome: string): void {
    this.counted.push(`answers ${outcome}`);
  }
  polled(operation: string, result: string): void {
    this.counted.push(`polls ${operation} ${result}`);
  }
  failed({ failureType, serviceCode }: FailedCall): void {
    this.counted.push(`failures ${failureType} ${serviceCode}`);
  }
  throttled(customerId: string): void {
    this.counted.push(`throttles ${customerId}`);
  }
  /** The counts since the last take. */
  take(): string[] {
    return this.counted.splice(0);
  }
}

const answersOf = (username: string) =>
  describeScenario(SCENARIOS.find((entry) => entry.username === username) ?? assert.fail(`the sandbox has ${username}`)).challengeSequence.map(
    (round) => round.answer,
  );

/** The activity failures these tests cause on purpose are not worth a warning each. */
const quiet = new DefaultLogger('ERROR');

/** Runs an activity's call in an activity's context (attempt 1). */
function run<R>(call: () => Promise<R>): Promise<R> {
  return new MockActivityEnvironment(undefined, { logger: quiet }).run(call);
}

describe('the counts of the connection activities', () => {
  let sandbox: Sandbox;
  const metrics = new RecordingMetrics();
  let activities: ReturnType<typeof createActivities>;
  const customerId = uniqueId('metrics');

  async function open(username: string): Promise<Extract<AuthorizeOutcome, { kind: 'session-open' }>> {
    const outcome = await run(() =>
      activities.openSession({ customerId, session: { kind: 'live', institution: 'SandboxBank', username, password: SANDBOX_PASSWORD, save: true } }),
    );
    if (outcome.kind !== 'session-open') assert.fail(`${username} opens a session at once, not ${outcome.kind}`);
    return outcome;
  }

  before(async () => {
    sandbox = await createSandbox({ port: 0 });
    activities = createActivities(tenantClients({ baseUrl: sandbox.url }), { metrics });
  });

  after(async () => {
    await sandbox?.close();
  });

  it('counts answers by how the service answered them: another challenge set, rejected, the session open', async () => {
    const [textOrCall, code] = answersOf('token_code');
    const first = await run(() =>
      activities.openSession({
        customerId,
        session: { kind: 'live', institution: 'SandboxTokenBank', username: 'token_code', password: SANDBOX_PASSWORD, save: true },
      }),
    );
    assert.equal(first.kind, 'challenge');
    assert.deepEqual(metrics.take(), [], 'an Authorize with credentials is no answer');
    const second = await run(() => activities.answerChallenge({ customerId, requestId: first.requestId, responses: textOrCall! }));
    assert.equal(second.kind, 'challenge');
    const wrong = Object.fromEntries(Object.keys(code!).map((key) => [key, ['000000']]));
    const refusal = await run(() => activities.answerChallenge({ customerId, requestId: second.requestId, responses: wrong })).catch((error: unknown) => error);
    assert.ok(refusal instanceof ApplicationFailure && refusal.type === 'InvalidSecurityResponse', `the service rejects a wrong code: ${String(refusal)}`);
    const last = await run(() => activities.answerChallenge({ customerId, requestId: second.requestId, responses: code! }));
    assert.equal(last.kind, 'session-open');
    assert.deepEqual(metrics.take(), [
      'answers next_challenge',
      'answers rejected',
      'failures InvalidSecurityResponse INVALID_SECURITY_RESPONSE',
      'answers session_open',
    ]);
  });

  it('counts a refused call by the failure type it becomes and the service code', async () => {
    const refused = run(() =>
      activities.openSession({
        customerId,
        session: { kind: 'live', institution: 'SandboxBank', username: 'invalid_login', password: SANDBOX_PASSWORD, save: true },
      }),
    );
    await assert.rejects(refused, (error: unknown) => error instanceof ApplicationFailure && error.type === 'InvalidCredentials');
    assert.deepEqual(metrics.take(), ['failures InvalidCredentials INVALID_LOGIN']);
  });

  it('counts polls, not first requests: accounts detail on its async endpoint, investments when repeated, in every strategy', async () => {
    const session = await open('operation_pending');
    const { requestId } = session;
    const loginId = session.login.Id;
    assert.equal((await run(() => activities.requestAccountsDetail({ customerId, requestId, options: {} }))).kind, 'pending');
    assert.equal((await run(() => activities.pollAccountsDetail({ customerId, requestId }))).kind, 'pending');
    assert.deepEqual(metrics.take(), ['polls accounts_detail pending']);

    assert.equal((await run(() => activities.requestInvestments({ customerId, loginId, requestId }))).kind, 'pending');
    assert.deepEqual(metrics.take(), [], 'the first investments request is no poll');
    assert.equal((await run(() => activities.requestInvestments({ customerId, loginId, requestId, pollNumber: 1 }))).kind, 'pending');
    assert.deepEqual(metrics.take(), ['polls investments pending']);

    // The in-activity strategies: each poll they make is one.
    const input = {
      operation: 'investments',
      request: { kind: 'investments', input: { customerId, loginId, requestId } },
      intervalMs: 1,
      deadline: Date.now() + 60_000,
    } as const;
    await assert.rejects(
      run(() => activities.pollByRetry(input)),
      (error: unknown) => error instanceof ApplicationFailure && error.type === 'OperationStillPending',
    );
    const polled = await run(() => activities.pollHeartbeating(input));
    assert.ok(polled.pollCount >= 1);
    const counted = metrics.take();
    assert.deepEqual(counted, [...Array<string>(counted.length - 1).fill('polls investments pending'), 'polls investments ready']);
  });

  it('counts a throttle by tenant and a failed poll; a call held back while the tenant is paused is not counted', async () => {
    const throttled = uniqueId('throttled');
    const refusedFor: string[] = [];
    const pauses = { pauseOf: () => Promise.resolve(undefined), refused: (tenant: string) => Promise.resolve(void refusedFor.push(tenant)) };
    const withPauses = createActivities(tenantClients({ baseUrl: sandbox.url }), { metrics, pauses });
    const session = await run(() =>
      withPauses.openSession({
        customerId: throttled,
        session: { kind: 'live', institution: 'SandboxBank', username: 'rate_limited', password: SANDBOX_PASSWORD, save: true },
      }),
    );
    if (session.kind !== 'session-open') assert.fail('rate_limited opens a session at once');
    // The first data requests of the session answer TOO_MANY_REQUESTS.
    await assert.rejects(
      run(() => withPauses.pollAccountsDetail({ customerId: throttled, requestId: session.requestId })),
      ApplicationFailure,
    );
    assert.deepEqual(metrics.take(), ['polls accounts_detail failed', 'failures ServiceUnavailable TOO_MANY_REQUESTS', `throttles ${throttled}`]);
    assert.deepEqual(refusedFor, [throttled]);

    const paused = createActivities(tenantClients({ baseUrl: sandbox.url }), {
      metrics,
      pauses: { pauseOf: () => Promise.resolve({ until: Date.now() + 60_000, reason: 'test' }), refused: () => Promise.resolve() },
    });
    await assert.rejects(
      run(() => paused.pollAccountsDetail({ customerId: throttled, requestId: session.requestId })),
      ApplicationFailure,
    );
    await assert.rejects(
      run(() => paused.answerChallenge({ customerId: throttled, requestId: session.requestId, responses: {} })),
      ApplicationFailure,
    );
    assert.deepEqual(metrics.take(), [], 'nothing was sent');
  });
});
