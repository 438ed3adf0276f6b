/**
 * Secrets at rest, with the product's default settings: a worker process and a console process as a
 * user starts them (payloads encrypted, large ones in a local payload store), a connection per
 * challenge sequence answered through the console (one answer wrong first), a cached one with every
 * product, one that fails, and a start the client refuses. Then nothing a lender must protect (the bank password, MFA answers, account numbers, holder
 * names, emails and phones, a refused answer, a refused start's password) appears in the raw history
 * (read without codec), in the payload store's files, in the worker's and the console's logs, or in
 * what the error paths answered and threw.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { inspect } from 'node:util';
import { ConnectionsClient, connectionKey, ConnectionFailedError, InvalidConnectionInputError, type ConnectionResult } from '../../src/client/index.js';
import type { AnswerOutcome } from '../../src/contract/connection/connection-definitions.js';
import { loadClientConfig } from '../../src/settings/client.js';
import { createSandbox, type Sandbox } from '../../sandbox/server.js';
import { describeScenario, SANDBOX_PASSWORD, SCENARIOS } from '../../sandbox/scenarios.js';
import { TEST_ENCRYPTION_ENV } from '../helpers/connection-stack.js';
import { startProcess, stopAllProcesses, type ProductProcess } from '../helpers/processes.js';
import { fetchRawHistory, holdsInClear, payloadsIn } from '../helpers/raw-history.js';
import { specAccounts } from '../helpers/spec-data.js';
import { createDevEnvironment, uniqueId } from '../helpers/temporal.js';

const CHALLENGE_SCENARIOS = SCENARIOS.filter((scenario) => scenario.kind === 'challenge');
const TOKEN = `secrets-${uniqueId('token')}`;

let env: TestWorkflowEnvironment;
let sandbox: Sandbox;
let storeDirectory: string;
let worker: ProductProcess;
let consoleProcess: ProductProcess;
let consoleUrl: string;
let client: ConnectionsClient;
const customerId = uniqueId('tenant');
const workflowIds: string[] = [];
const results: ConnectionResult[] = [];
const answers: string[] = [];
/** What the product answered or threw on the error paths: each must hold no secret either. */
const errorTexts: string[] = [];
const WRONG_ANSWER = `WrongAnswer-${uniqueId('secret')}`;
const BAD_INPUT_PASSWORD = `BadInputPassword-${uniqueId('secret')}`;

before(async () => {
  env = await createDevEnvironment();
  sandbox = await createSandbox({ port: 0 });
  storeDirectory = await mkdtemp(join(tmpdir(), 'secrets-store-'));
  const taskQueue = uniqueId('secrets');
  const shared = {
    TEMPORAL_ADDRESS: env.address,
    TEMPORAL_TASK_QUEUE: taskQueue,
    AGGREGATOR_CUSTOMER_ID: customerId,
    ...TEST_ENCRYPTION_ENV,
    PAYLOAD_STORE: 'local',
    PAYLOAD_STORE_DIRECTORY: storeDirectory,
    // The store must hold something: results of a normal login are smaller than the default 128 KiB.
    PAYLOAD_STORE_THRESHOLD_BYTES: '1024',
  };
  // DEBUG: the most a worker ever logs.
  worker = await startProcess('worker', { ...shared, AGGREGATOR_BASE_URL: sandbox.url, WORKER_METRICS_PORT: '0', LOG_LEVEL: 'DEBUG' });
  consoleProcess = await startProcess('console', { ...shared, CONSOLE_TOKEN: TOKEN, CONSOLE_PORT: '0' });
  consoleUrl =
    /operator console on (http:\/\/[^\s]+?)\/ /.exec(consoleProcess.output())?.[1] ?? assert.fail(`the console's address in:\n${consoleProcess.output()}`);
  client = await ConnectionsClient.connect(loadClientConfig(shared));

  for (const scenario of CHALLENGE_SCENARIOS) {
    const id = connectionKey(customerId, uniqueId(scenario.username.replace(/_/g, '-')));
    workflowIds.push(id);
    const first = await client.startAndAwaitFirstStep(id, {
      customerId,
      session: { kind: 'live', institution: scenario.institution, username: scenario.username, password: SANDBOX_PASSWORD, save: true },
      products: { accountsDetail: { WithTransactions: true } },
      timing: { pollIntervalMs: 100 },
    });
    assert.equal(first.step, 'challenge');
    let challengeSetId = first.challengeSet.id;
    for (const [index, round] of describeScenario(scenario).challengeSequence.entries()) {
      // The first scenario's first round is answered wrong first: a refused answer is a secret too.
      if (scenario === CHALLENGE_SCENARIOS[0] && index === 0) {
        const wrong = Object.fromEntries(Object.keys(round.answer).map((question) => [question, [WRONG_ANSWER]]));
        const refused = await answer(id, challengeSetId, wrong);
        assert.equal(refused.outcome, 'rejected', `${scenario.username}: the wrong answer is refused`);
        challengeSetId = refused.nextChallengeSet?.id ?? assert.fail('a next challenge set after the refusal');
      }
      answers.push(...Object.values(round.answer).flat());
      const accepted = await answer(id, challengeSetId, round.answer);
      challengeSetId = ('nextChallengeSet' in accepted ? accepted.nextChallengeSet?.id : undefined) ?? challengeSetId;
    }
    results.push(await client.result(id));
  }

  // A start the client refuses (an empty institution): the error names the field, never the password.
  const refusedStart = await client
    .start(connectionKey(customerId, uniqueId('bad-input')), {
      customerId,
      session: { kind: 'live', institution: '', username: 'bad_input', password: BAD_INPUT_PASSWORD },
      products: { accountsDetail: {} },
    })
    .then(
      () => assert.fail('a start with an empty institution was accepted'),
      (error: unknown) => error,
    );
  assert.ok(refusedStart instanceof InvalidConnectionInputError, String(refusedStart));
  errorTexts.push(inspect(refusedStart, { depth: 10 }), String((refusedStart as Error).stack));

  const saved = await fetch(`${sandbox.url}/sandbox/${customerId}/logins`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'no_mfa' }),
  });
  const { LoginId: loginId } = (await saved.json()) as { LoginId: string };
  const cached = connectionKey(customerId, uniqueId('cached'));
  workflowIds.push(cached);
  await client.start(cached, {
    customerId,
    session: { kind: 'cached', loginId },
    products: { accountsDetail: { WithTransactions: true }, investments: true, attributes: { package: 'GetLendingAttributes' } },
    timing: { pollIntervalMs: 100 },
  });
  results.push(await client.result(cached));

  const failing = connectionKey(customerId, uniqueId('refused'));
  workflowIds.push(failing);
  await client.start(failing, {
    customerId,
    session: { kind: 'live', institution: 'SandboxBank', username: 'invalid_password', password: SANDBOX_PASSWORD },
    products: { accountsDetail: {} },
  });
  await assert.rejects(client.result(failing), (error: unknown) => error instanceof ConnectionFailedError && error.type === 'InvalidCredentials');
});

/**
 * Answers through the console's API, as an operator's page does; the update's outcome. A refused
 * answer's reply is an error path's (an accepted one shows the next set's choices, answers included).
 */
async function answer(workflowId: string, challengeSetId: string, responses: Record<string, string[]>): Promise<AnswerOutcome> {
  const response = await fetch(`${consoleUrl}/api/connections/${encodeURIComponent(workflowId)}/answer`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ challengeSetId, responses }),
  });
  const text = await response.text();
  if (text.includes('"rejected"')) errorTexts.push(text);
  assert.equal(response.status, 200, `${workflowId} set ${challengeSetId}: ${text}`);
  return (JSON.parse(text) as { outcome: AnswerOutcome }).outcome;
}

after(async () => {
  await client?.close();
  await stopAllProcesses();
  await sandbox?.close();
  await env?.teardown();
  if (storeDirectory) await rm(storeDirectory, { recursive: true, force: true });
});

/** Every secret the connections handled: what must never be readable at rest. */
function secrets(): Map<string, string> {
  const found = new Map<string, string>([
    ['the bank password', SANDBOX_PASSWORD],
    ['the password of a refused start', BAD_INPUT_PASSWORD],
    ['a refused answer', WRONG_ANSWER],
  ]);
  // Short answers ("Text", "Call") could occur in ciphertext by chance and are not secret; an answer
  // naming an institution ("SandboxCreditUnion") is readable on purpose in the Institution search attribute.
  const institutions: ReadonlySet<string> = new Set(SCENARIOS.map((scenario) => scenario.institution));
  for (const answer of answers)
    if (answer.length >= 6 && answer !== 'VERIFIED' && !institutions.has(answer)) found.set(`the answer ${answer.slice(0, 12)}…`, answer);
  for (const result of results) {
    for (const account of specAccounts(result.accountsDetail?.Accounts ?? [])) {
      found.set(`account number ${account.AccountNumber}`, account.AccountNumber);
      const holder = account.Holder;
      if (holder?.Name) found.set(`holder name ${holder.Name}`, holder.Name);
      if (holder?.Email) found.set(`holder email ${holder.Email}`, holder.Email);
      if (holder?.PhoneNumber) found.set(`holder phone ${holder.PhoneNumber}`, holder.PhoneNumber);
    }
  }
  return found;
}

async function filesUnder(directory: string): Promise<Buffer[]> {
  const entries = await readdir(directory, { recursive: true, withFileTypes: true });
  return Promise.all(entries.filter((entry) => entry.isFile()).map((entry) => readFile(join(entry.parentPath, entry.name))));
}

function assertNoSecretIn(where: string, haystack: Buffer): void {
  for (const [name, secret] of secrets()) assert.ok(!holdsInClear(haystack, secret), `${where} holds ${name}`);
}

describe('secrets at rest with the default settings', () => {
  it('finds a secret in clear, and not a code of digits inside a run id or a hash that happens to hold it', () => {
    assert.ok(holdsInClear(Buffer.from('{"answer":"654321"}'), '654321'));
    assert.ok(holdsInClear(Buffer.from('\x12\x06654321\x1a'), '654321'), 'a protobuf string field holding only the code');
    assert.ok(!holdsInClear(Buffer.from('runId 0d1f2a3b-4c5d-6e7f-8a9b-1c2d3e654321 request 9af654321bc0de12'), '654321'));
    assert.ok(
      holdsInClear(Buffer.from('password hunter22 in a uuid 0d1f2a3b-4c5d-6e7f-8a9b-1c2d3e654321'), 'hunter22'),
      'other secrets are searched as they are',
    );
  });

  it('handled every kind of secret (the checks below have something to find)', () => {
    const found = secrets();
    assert.ok(results.length === CHALLENGE_SCENARIOS.length + 1, 'every connection completed');
    for (const kind of ['account number', 'holder name', 'holder email', 'holder phone', 'the answer']) {
      assert.ok(
        [...found.keys()].some((name) => name.startsWith(kind)),
        `some ${kind}`,
      );
    }
  });

  it('keeps them out of the raw history of every connection, failure messages included', async () => {
    for (const workflowId of workflowIds) {
      const raw = await fetchRawHistory(env.connection, env.namespace ?? 'default', workflowId);
      assert.ok(raw.bytes.includes('connectionWorkflow'), 'the history is readable where it is meant to be');
      assertNoSecretIn(`the history of ${workflowId}`, raw.bytes);
      assert.ok(payloadsIn(raw.events).length > 0);
      for (const event of raw.events) {
        const failure = event.workflowExecutionFailedEventAttributes?.failure ?? event.activityTaskFailedEventAttributes?.failure;
        if (failure) assert.equal(failure.message, 'Encoded failure', 'failure messages are encrypted');
      }
    }
  });

  it("keeps them out of the payload store's files, which hold something", async () => {
    const files = await filesUnder(storeDirectory);
    assert.ok(files.length > 0, 'large payloads were stored');
    for (const file of files) assertNoSecretIn('a stored payload', file);
  });

  it('keeps them out of what the error paths answered and threw (a refused start, a refused answer)', () => {
    assert.ok(
      errorTexts.some((text) => /institution/.test(text)),
      'the refused start named its field',
    );
    assert.ok(
      errorTexts.some((text) => text.includes('"rejected"')),
      'the refused answer was answered',
    );
    for (const text of errorTexts) assertNoSecretIn("an error path's answer", Buffer.from(text));
  });

  it("keeps them out of the worker's and the console's logs", () => {
    assert.ok(worker.output().length > 0 && consoleProcess.output().length > 0);
    assertNoSecretIn("the worker's log", Buffer.from(worker.output()));
    assertNoSecretIn("the console's log", Buffer.from(consoleProcess.output()));
  });
});
