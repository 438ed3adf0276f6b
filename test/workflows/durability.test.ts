/**
 * Durability: the worker process is killed (SIGKILL) while a connection waits on a poll timer, while
 * it awaits an answer, while a data request is at the service (never answered), and while an
 * Authorize is (its reply held by a delaying proxy after the sandbox acted); a new worker process, started from the production bundle, finishes it
 * with the right data and no answer reaches the service twice. Real dev server, real sandbox, real
 * worker processes.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { Client } from '@temporalio/client';
import proto from '@temporalio/proto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { startChaosProxy, type ChaosProxy } from '../../scripts/chaos/proxy.js';
import { createSandbox } from '../../sandbox/server.js';
import { SANDBOX_PASSWORD, SCENARIOS, describeScenario } from '../../sandbox/scenarios.js';
import type { ConnectionInputArgs } from '../../src/contract/connection/connection-input.js';
import { connectionStateQuery, submitAnswerUpdate, type ConnectionResult, type ConnectionState } from '../../src/contract/connection/connection-definitions.js';
import { dataConverterFor } from '../../src/codec/data-converter.js';
import { TEST_ENCRYPTION } from '../helpers/connection-stack.js';
import { killProcess, stopAllProcesses } from '../helpers/processes.js';
import { createDevEnvironment, uniqueId, waitFor } from '../helpers/temporal.js';
import { startWorkerProcess as startWorker, writeWorkflowBundle, type WorkflowBundleFile } from '../helpers/worker-processes.js';

let env: TestWorkflowEnvironment;
/** Reads and writes payloads with the key the worker processes encrypt with. */
let client: Client;
let sandbox: Awaited<ReturnType<typeof createSandbox>>;
let bundle: WorkflowBundleFile;
const customerId = uniqueId('tenant');

before(async () => {
  env = await createDevEnvironment();
  client = new Client({ connection: env.connection, namespace: env.namespace ?? 'default', dataConverter: dataConverterFor({ encryption: TEST_ENCRYPTION }) });
  sandbox = await createSandbox({ port: 0 });
  bundle = await writeWorkflowBundle();
});

after(async () => {
  await stopAllProcesses();
  await sandbox?.close();
  await env?.teardown();
  await bundle?.remove();
});

/** Starts `src/worker.ts` as its own process, from the production bundle, and resolves once it polls. */
function startWorkerProcess(taskQueue: string, aggregatorUrl = sandbox.url): Promise<ChildProcess> {
  return startWorker({ temporalAddress: env.address, taskQueue, aggregatorUrl, bundlePath: bundle.path });
}

async function kill(child: ChildProcess): Promise<void> {
  await killProcess(child);
  assert.equal(child.signalCode, 'SIGKILL', `worker ended with ${child.exitCode}/${child.signalCode}`);
}

async function start(input: Omit<ConnectionInputArgs, 'customerId'>, taskQueue: string) {
  return client.workflow.start('connectionWorkflow', { taskQueue, workflowId: uniqueId('durable'), args: [{ customerId, ...input }] });
}

async function stateOf(workflowId: string, predicate: (state: ConnectionState) => boolean, describe: string): Promise<ConnectionState> {
  return waitFor(
    async () => {
      const state = await client.workflow.getHandle(workflowId).query(connectionStateQuery);
      return predicate(state) ? state : undefined;
    },
    { timeoutMs: 30_000, describe },
  );
}

describe('a killed worker loses nothing', () => {
  it('finishes a connection whose worker was killed while it waited on a poll timer', async () => {
    const taskQueue = uniqueId('durable-poll');
    const response = await fetch(`${sandbox.url}/sandbox/${customerId}/logins`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'pending_polls_4' }),
    });
    const { LoginId: loginId } = (await response.json()) as { LoginId: string };

    const first = await startWorkerProcess(taskQueue);
    const handle = await start(
      { session: { kind: 'cached', loginId }, products: { accountsDetail: { WithTransactions: true } }, timing: { pollIntervalMs: 2_000 } },
      taskQueue,
    );
    const waiting = await stateOf(
      handle.workflowId,
      (s) => (s.pending?.pollCount ?? 0) >= 1 && s.pending?.nextPollAt !== undefined,
      'a poll made and the next one on a timer',
    );
    await kill(first);

    await startWorkerProcess(taskQueue);
    const result = (await handle.result()) as ConnectionResult;
    assert.equal(result.totalPolls, 4, 'every poll counted once across both workers');
    assert.ok(waiting.totalPolls < 4, 'the kill happened mid-polling');
    assert.equal(result.loginId, loginId);
    assert.ok(result.accountsDetail && result.accountsDetail.Accounts.length >= 2);
  });

  it('finishes a connection whose worker was killed while it awaited an answer', async () => {
    const taskQueue = uniqueId('durable-answer');
    const scenario = SCENARIOS.find((entry) => entry.username === 'triple_question') ?? assert.fail('scenario');
    const answer = describeScenario(scenario).challengeSequence[0]?.answer ?? assert.fail('answer');

    const first = await startWorkerProcess(taskQueue);
    const handle = await start(
      {
        session: { kind: 'live', institution: scenario.institution, username: scenario.username, password: SANDBOX_PASSWORD, save: true },
        products: { accountsDetail: {} },
        timing: { pollIntervalMs: 500 },
      },
      taskQueue,
    );
    await stateOf(handle.workflowId, (s) => s.status === 'AwaitingAnswer', 'the triple question');
    await kill(first);

    await startWorkerProcess(taskQueue);
    const outcome = await handle.executeUpdate(submitAnswerUpdate, { args: [{ challengeSetId: '1', responses: answer }] });
    assert.equal(outcome.outcome, 'accepted');
    const result = (await handle.result()) as ConnectionResult;
    assert.ok(result.loginId);
    assert.ok(result.accountsDetail && result.accountsDetail.Accounts.length >= 2);
  });
});

describe('a worker killed while a data request is at the service', () => {
  /** Forwards every request to the sandbox but GetAccountsDetail, which it takes and never answers. */
  let holding: Server;
  let heldRequests = 0;
  before(async () => {
    holding = createServer((request, response) => {
      if (request.url?.endsWith('/GetAccountsDetail')) {
        heldRequests += 1;
        return;
      }
      const upstream = httpRequest(`${sandbox.url}${request.url ?? '/'}`, { method: request.method, headers: request.headers }, (reply) => {
        response.writeHead(reply.statusCode ?? 502, reply.headers);
        reply.pipe(response);
      });
      upstream.on('error', () => response.destroy());
      request.pipe(upstream);
    });
    await new Promise<void>((resolve) => holding.listen(0, '127.0.0.1', resolve));
  });
  after(async () => {
    holding?.closeAllConnections();
    await new Promise((resolve) => holding?.close(resolve));
  });

  it('retries the request on another worker at its heartbeat timeout, not its 90-s start-to-close one', async () => {
    const taskQueue = uniqueId('durable-data-call');
    const response = await fetch(`${sandbox.url}/sandbox/${customerId}/logins`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'no_mfa' }),
    });
    const { LoginId: loginId } = (await response.json()) as { LoginId: string };
    const { port } = holding.address() as AddressInfo;

    const first = await startWorkerProcess(taskQueue, `http://127.0.0.1:${port}`);
    const handle = await start({ session: { kind: 'cached', loginId }, products: { accountsDetail: {} }, timing: { pollIntervalMs: 500 } }, taskQueue);
    await waitFor(() => Promise.resolve(heldRequests > 0), { timeoutMs: 30_000, describe: "the first worker's accounts detail request at the service" });
    await kill(first);
    await startWorkerProcess(taskQueue);

    const result = (await handle.result()) as ConnectionResult;
    assert.ok(result.accountsDetail && result.accountsDetail.Accounts.length >= 2);
    // Why the request was sent again: the attempt that ran it stopped heartbeating (an attempt the
    // server started and no worker ran ends the same way), not its start-to-close timeout.
    const events = (await handle.fetchHistory()).events ?? [];
    const scheduled =
      events.find((event) => event.activityTaskScheduledEventAttributes?.activityType?.name === 'requestAccountsDetail') ??
      assert.fail('requestAccountsDetail scheduled');
    const started = events.find(
      (event) => event.activityTaskStartedEventAttributes && String(event.activityTaskStartedEventAttributes.scheduledEventId) === String(scheduled.eventId),
    );
    const attributes = started?.activityTaskStartedEventAttributes ?? assert.fail('requestAccountsDetail started');
    assert.equal(attributes.attempt, 2, 'the request ran again once');
    assert.equal(
      attributes.lastFailure?.timeoutFailureInfo?.timeoutType,
      proto.temporal.api.enums.v1.TimeoutType.TIMEOUT_TYPE_HEARTBEAT,
      `the first attempt ended by its heartbeat timeout: ${JSON.stringify(attributes.lastFailure)}`,
    );
    assert.equal(heldRequests, 1, "the held request was the first worker's only one");
  });
});

describe('a worker killed while an Authorize is at the service', () => {
  let proxy: ChaosProxy;
  before(async () => {
    // The sandbox acts at once; the proxy holds its reply 2 s, as a real service reaching a bank would.
    proxy = await startChaosProxy({ upstream: sandbox.url, replyDelayMs: 2_000 });
  });
  after(async () => {
    await proxy?.close();
  });

  function liveInput(username: string): Omit<ConnectionInputArgs, 'customerId'> {
    const scenario = SCENARIOS.find((entry) => entry.username === username) ?? assert.fail(`scenario ${username}`);
    return {
      session: { kind: 'live', institution: scenario.institution, username, password: SANDBOX_PASSWORD, save: true },
      products: { accountsDetail: {} },
      timing: { pollIntervalMs: 500 },
    };
  }

  it('never sends the answer again: it opens a new session, tells the update caller, and completes', async () => {
    const taskQueue = uniqueId('durable-authorize');
    const tenantDuplicatesBefore = sandbox.authorizeSubmissions(customerId).duplicates.length;
    const rounds = describeScenario(SCENARIOS.find((entry) => entry.username === 'image_selection') ?? assert.fail('scenario')).challengeSequence;
    const [question, image] = [rounds[0]?.answer ?? assert.fail('round 1'), rounds[1]?.answer ?? assert.fail('round 2')];

    const first = await startWorkerProcess(taskQueue, proxy.urlFor('first'));
    const handle = await start(liveInput('image_selection'), taskQueue);
    await stateOf(handle.workflowId, (s) => s.status === 'AwaitingAnswer' && s.challengeSet?.id === '1', 'the security question');
    const outcomeOfAnswer = handle.executeUpdate(submitAnswerUpdate, { args: [{ challengeSetId: '1', responses: question }] });
    assert.deepEqual(await proxy.answerHolders(15_000), ['first'], 'the service took the answer and its reply is held');
    await kill(first);
    await startWorkerProcess(taskQueue, proxy.urlFor('second'));

    const outcome = await outcomeOfAnswer;
    assert.equal(outcome.outcome, 'restarted', `the caller learns the session was restarted, got ${JSON.stringify(outcome)}`);
    assert.equal(outcome.outcome === 'restarted' && outcome.nextChallengeSet?.id, '2', "with the new session's first challenge set");
    const restarted = await stateOf(handle.workflowId, (s) => s.status === 'AwaitingAnswer', "the new session's challenge");
    assert.equal(restarted.sessionRestarts, 1);
    assert.equal(restarted.lastRestart?.challengeSetId, '1');
    assert.match(restarted.lastRestart?.reason ?? '', /worker stopped/);

    assert.equal((await handle.executeUpdate(submitAnswerUpdate, { args: [{ challengeSetId: '2', responses: question }] })).outcome, 'accepted');
    assert.equal((await handle.executeUpdate(submitAnswerUpdate, { args: [{ challengeSetId: '3', responses: image }] })).outcome, 'accepted');
    const result = (await handle.result()) as ConnectionResult;
    assert.ok(result.accountsDetail && result.accountsDetail.Accounts.length >= 2);
    assert.equal(sandbox.authorizeSubmissions(customerId).duplicates.length, tenantDuplicatesBefore, 'no answer reached the service twice');
    assert.deepEqual(proxy.stats().duplicates, [], 'the proxy saw no answer twice either');
  });

  it('recovers a first Authorize with credentials whose worker died: a new session, not a failure', async () => {
    const taskQueue = uniqueId('durable-credentials');
    const first = await startWorkerProcess(taskQueue, proxy.urlFor('credentials-first'));
    const handle = await start(liveInput('no_mfa'), taskQueue);
    await waitFor(() => Promise.resolve((proxy.stats().byClient.get('credentials-first') ?? 0) > 0), { timeoutMs: 15_000, describe: 'the credentials sent' });
    await kill(first);
    await startWorkerProcess(taskQueue, proxy.urlFor('credentials-second'));
    const result = (await handle.result()) as ConnectionResult;
    assert.ok(result.accountsDetail && result.accountsDetail.Accounts.length >= 2);
    const state = await client.workflow.getHandle(handle.workflowId).query(connectionStateQuery);
    assert.equal(state.sessionRestarts, 1, 'the restart is counted where operators see it');
  });
});
