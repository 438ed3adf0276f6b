/**
 * A schedule Temporal has taken is reported as written, from the pipeline client and the CLI, even
 * when it cannot be read back yet. A schedule is described by querying the scheduler workflow behind
 * it, which answers only once the server's own scheduler worker has run its first workflow task: on a
 * dev server that has just started, that worker may not be polling yet, and the server holds the
 * query for 30 s, then answers DEADLINE_EXCEEDED.
 *
 * That race does not happen on demand on a healthy server (the worker is usually polling before the
 * server reports ready), so the first test only runs the reported sequence on a server that has just
 * started. The others produce the condition itself, for good, on a real dev server whose scheduler
 * worker is switched off (`worker.enableScheduler: false`): every schedule there stays undescribable.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { startDevEnvironment, type DevEnvironment } from '../../scripts/lib/dev-environment.js';
import { SERVER_DYNAMIC_CONFIG } from '../../scripts/lib/server-dynamic-config.js';
import { runCli } from '../../src/cli/run-cli.js';
import { EXIT_OK } from '../../src/cli/report.js';
import { ConnectionsClient, RefreshScheduleNotReadyError, RefreshSchedules, type RefreshScheduleArgs } from '../../src/client/index.js';
import { refreshScheduleId } from '../../src/contract/login-keys.js';
import { uniqueId, waitFor } from '../helpers/temporal.js';

const customerId = uniqueId('read-back');

function request(loginId: string, fields: Partial<RefreshScheduleArgs> = {}): RefreshScheduleArgs {
  return { customerId, loginId, products: { accountsDetail: { WithTransactions: true } }, cadence: { kind: 'interval', every: '1m' }, ...fields };
}

/** The pipeline client over an environment's connection (no worker: no schedule here gets to run). */
function connectionsOn(env: DevEnvironment): ConnectionsClient {
  return new ConnectionsClient({ client: env.client, taskQueue: uniqueId('read-back') });
}

void describe('a schedule on a dev server that has just started', () => {
  void it('is reported as created when it is created at once', async () => {
    const env = await startDevEnvironment();
    try {
      const loginId = randomUUID();
      const created = await connectionsOn(env).schedules.schedule(request(loginId));
      assert.equal(created.created, true);
      assert.equal(created.scheduleId, refreshScheduleId(customerId, loginId));
      assert.deepEqual(created.cadence, { kind: 'interval', every: '1m', jitter: '0s' });
    } finally {
      await env.teardown();
    }
  });
});

void describe('a schedule whose scheduler has not answered yet', () => {
  let env: DevEnvironment;
  let connections: ConnectionsClient;
  /** Reads give up after 1 s here: the scheduler never answers on this server. */
  let schedules: RefreshSchedules;

  before(async () => {
    env = await startDevEnvironment({ dynamicConfig: { ...SERVER_DYNAMIC_CONFIG, 'worker.enableScheduler': false } });
    connections = connectionsOn(env);
    schedules = new RefreshSchedules({ client: env.client, taskQueue: uniqueId('read-back'), connections, describeWaitMs: 1_000 });
  });

  after(async () => {
    await env?.teardown();
  });

  void it('is reported as created, with what was written and why it was not read back', async () => {
    const loginId = randomUUID();
    const created = await schedules.schedule(
      request(loginId, { session: 'refresh', cadence: { kind: 'daily', at: '02:30', timeZone: 'America/Toronto', jitter: '30m' }, note: 'nightly' }),
    );
    assert.equal(created.created, true);
    assert.equal(created.scheduleId, refreshScheduleId(customerId, loginId));
    assert.equal(created.loginId, loginId);
    assert.equal(created.session, 'refresh');
    assert.deepEqual(created.products, { accountsDetail: { WithTransactions: true } });
    assert.deepEqual(created.cadence, { kind: 'daily', at: '02:30', timeZone: 'America/Toronto', jitter: '30m' });
    assert.equal(created.paused, false);
    assert.equal(created.note, 'nightly');
    assert.deepEqual(created.nextRunsAt, [], 'the upcoming runs are the scheduler’s to say');
    assert.match(created.readBackError ?? '', /its scheduler has not answered yet .*last: DEADLINE_EXCEEDED/);
  });

  void it('is described as not ready, typed and naming the schedule, instead of as Temporal refusing the call', async () => {
    const loginId = randomUUID();
    await schedules.schedule(request(loginId, { paused: true }));
    await assert.rejects(schedules.describe({ customerId, loginId }), (error: unknown) => {
      assert.ok(error instanceof RefreshScheduleNotReadyError, String(error));
      assert.equal(error.scheduleId, refreshScheduleId(customerId, loginId));
      assert.equal(error.lastCode, 'DEADLINE_EXCEEDED');
      return true;
    });
  });

  void it('cannot be replaced yet, and says so typed: the replace reads it first, so nothing was written', async () => {
    const loginId = randomUUID();
    await schedules.schedule(request(loginId));
    await assert.rejects(schedules.schedule(request(loginId, { cadence: { kind: 'interval', every: '5m' } })), (error: unknown) => {
      assert.ok(error instanceof RefreshScheduleNotReadyError, String(error));
      assert.equal(error.scheduleId, refreshScheduleId(customerId, loginId));
      return true;
    });
  });

  void it('is left out of a listing instead of failing it', async () => {
    const loginId = randomUUID();
    const { scheduleId } = await schedules.schedule(request(loginId));
    // Temporal's own listing has it (visibility lags a little), so ours meets it and must not fail.
    await waitFor(
      async () => {
        for await (const listed of env.client.schedule.list()) if (listed.scheduleId === scheduleId) return true;
        return false;
      },
      { describe: `${scheduleId} in Temporal's listing` },
    );
    const listed = await schedules.list({ customerId });
    assert.ok(!listed.some((schedule) => schedule.loginId === loginId));
  });

  void it('is reported as scheduled by the CLI, which exits 0', async () => {
    const loginId = randomUUID();
    const out: string[] = [];
    const err: string[] = [];
    const code = await runCli(['refresh', 'schedule', loginId, '--every', '1m'], {
      out: (line) => out.push(line),
      err: (line) => err.push(line),
      readStdin: () => Promise.resolve(''),
      env: { AGGREGATOR_CUSTOMER_ID: customerId },
      // The test's client shares the environment's connection; closing it is a no-op.
      connect: () => Promise.resolve(connections),
      now: () => Date.now(),
      sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
      program: 'connections',
    });
    assert.equal(code, EXIT_OK, err.join('\n'));
    assert.match(out.join('\n'), new RegExp(`^scheduled ${refreshScheduleId(customerId, loginId)}: cached refresh every 1m$`, 'm'));
    assert.match(out.join('\n'), /its next runs are not known yet \(.*has not answered yet.*\); "refresh list" shows them/);
  });
});
