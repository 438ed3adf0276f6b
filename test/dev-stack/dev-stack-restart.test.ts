/**
 * The README's promise for `npm start` (scripts/dev-stack.ts): stop the stack while a connection
 * waits on a poll timer, start it again, and the connection finishes. The history persists in the
 * stack's SQLite file and the sandbox's state in the file beside it, so after a Ctrl-C (SIGINT) and a
 * start on the same directory the waiting connection polls on in the session it had, a connection
 * awaiting an answer is answered with the challenge it was shown, and a cached connection on a login
 * saved before the stop opens. The stack runs on ports of its own and a temporary directory.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { devNull } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { ConnectionsClient, connectionKey, loadClientConfig } from '../../src/client/index.js';
import { describeScenario, resolveScenario, SANDBOX_PASSWORD } from '../../sandbox/scenarios.js';
import { TEMPORAL_SERVER_VERSION } from '../../scripts/lib/temporal-versions.js';
import { DevStackRunner, type RunningStack } from './dev-stack-process.js';

const runner = new DevStackRunner('dev-stack-restart-');

before(async () => {
  await runner.prepare();
});

after(() => {
  runner.cleanup();
});

async function connect(): Promise<ConnectionsClient> {
  return ConnectionsClient.connect(loadClientConfig({ ...runner.env, TEMPORAL_ADDRESS: runner.temporalAddress, TEMPORAL_CONFIG_FILE: devNull }));
}

/** `check`, with what the stack printed when it fails. */
async function withOutput<T>(stack: RunningStack, check: () => Promise<T>): Promise<T> {
  try {
    return await check();
  } catch (error) {
    throw new Error(`${error instanceof Error ? error.message : String(error)}\nthe stack printed:\n${stack.output()}\n${runner.serverLogTail()}`, {
      cause: error,
    });
  }
}

async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await delay(200);
  }
}

describe('npm start stopped with Ctrl-C and started again on the same directory', { concurrency: false }, () => {
  test('finishes a connection that waited on a poll timer, takes the answer to a challenge shown before, and opens a cached session on a login saved before', async () => {
    const customerId = loadClientConfig({ ...runner.env, TEMPORAL_CONFIG_FILE: devNull }).customerId;
    const key = (what: string) => connectionKey(customerId, `restart-${what}-${randomUUID().slice(0, 8)}`);
    const securityQuestion = describeScenario(resolveScenario('security_question') ?? assert.fail('security_question'));
    const polling = key('poll');
    const waiting = key('answer');

    const first = await runner.start();
    const before = await withOutput(first, async () => {
      const client = await connect();
      try {
        // A login saved by a connection that completed.
        const savedKey = key('saved');
        await client.startAndAwaitFirstStep(savedKey, {
          customerId,
          session: { kind: 'live', institution: 'SandboxBank', username: 'no_mfa', password: SANDBOX_PASSWORD, save: true },
          products: { accountsDetail: { WithTransactions: false } },
          timing: { pollIntervalMs: 200 },
        });
        const saved = await client.result(savedKey);
        // Accounts detail pending for 3 polls, polled every 4 s: it waits on a timer between polls.
        await client.start(polling, {
          customerId,
          session: { kind: 'live', institution: 'SandboxBank', username: 'pending_polls_3', password: SANDBOX_PASSWORD },
          products: { accountsDetail: { WithTransactions: true } },
          timing: { pollIntervalMs: 4_000 },
        });
        // A challenge shown and left unanswered.
        const step = await client.startAndAwaitFirstStep(waiting, {
          customerId,
          session: { kind: 'live', institution: securityQuestion.institution, username: securityQuestion.username, password: SANDBOX_PASSWORD },
          products: { accountsDetail: { WithTransactions: true } },
          timing: { pollIntervalMs: 200 },
        });
        assert.equal(step.step, 'challenge');
        await waitFor('the polling connection to wait on its poll timer', async () => (await client.getState(polling)).pending?.nextPollAt !== undefined);
        const pollingState = await client.getState(polling);
        const waitingState = await client.getState(waiting);
        assert.equal(waitingState.status, 'AwaitingAnswer');
        return {
          loginId: saved.loginId,
          pollingRequestId: pollingState.requestId,
          pollsBefore: pollingState.totalPolls,
          waitingRequestId: waitingState.requestId,
        };
      } finally {
        await client.close();
      }
    });
    await first.stop();
    assert.match(
      first.output(),
      new RegExp(
        `Sandbox {11}http://\\S+ {2}\\(state ${join(runner.dir, `dev-stack-v${TEMPORAL_SERVER_VERSION}-sandbox.json`).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\)`,
      ),
    );
    assert.ok(existsSync(join(runner.dir, `dev-stack-v${TEMPORAL_SERVER_VERSION}-sandbox.json`)), 'the sandbox state file beside the history');

    const second = await runner.start();
    await withOutput(second, async () => {
      const client = await connect();
      try {
        // The answer goes to the session it was asked in: accepted, not a new session's challenges.
        const answered = await client.answer(waiting, { responses: securityQuestion.challengeSequence[0]?.answer ?? {} });
        assert.equal(answered.outcome, 'accepted', JSON.stringify(answered));
        const [polled, answeredResult] = await Promise.all([client.result(polling), client.result(waiting)]);
        assert.equal(polled.requestId, before.pollingRequestId, 'the polling connection finished in the session it had');
        assert.ok(polled.totalPolls > before.pollsBefore, `polled on after the restart (${before.pollsBefore} polls before, ${polled.totalPolls} in all)`);
        assert.ok((polled.accountsDetail?.Accounts.length ?? 0) > 0);
        assert.equal((await client.getState(polling)).sessionRestarts, 0);
        assert.equal(answeredResult.requestId, before.waitingRequestId, 'the answered connection finished in the session it had');
        assert.ok((answeredResult.accountsDetail?.Accounts.length ?? 0) > 0);

        // The login saved before the stop opens a cached session (not 401 INVALID_LOGIN).
        const cachedKey = key('cached');
        await client.startAndAwaitFirstStep(cachedKey, {
          customerId,
          session: { kind: 'cached', loginId: before.loginId },
          products: { accountsDetail: { WithTransactions: true } },
          timing: { pollIntervalMs: 200 },
        });
        const cached = await client.result(cachedKey);
        assert.equal(cached.loginId, before.loginId);
        assert.ok((cached.accountsDetail?.Accounts.length ?? 0) > 0);
        console.log(
          `dev-stack restart: the polling connection made ${before.pollsBefore} polls before the stop and ${polled.totalPolls} in all; the answer after the restart accepted; the cached connection on the saved login completed`,
        );
      } finally {
        await client.close();
      }
    });
    await second.stop();
  });
});
