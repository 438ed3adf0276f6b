/**
 * The worker against the realistic variations of the service (issue 60): the same data written other
 * ways, a record the typed view cannot read, challenge types the spec does not name, slow replies,
 * and replies the product cannot act on. A real dev server, the product's real worker and
 * activities, the real sandbox over HTTP. The worker of the main stack calls the sandbox through a
 * small recording proxy: every answer the sandbox sent is kept as the worker received it, so the
 * data of a result is compared with exactly what the service sent; for a few tenants the proxy also
 * adds the sandbox's variation header, or rewrites an answer into one the sandbox cannot serve.
 */
import assert from 'node:assert/strict';
import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { WorkflowFailedError, WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { Worker } from '@temporalio/worker';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { AuthorizeSubmissions } from '../../sandbox/authorize-submissions.js';
import { SANDBOX_PASSWORD } from '../../sandbox/scenarios.js';
import { createSandbox, type Sandbox } from '../../sandbox/server.js';
import { VARIATION_HEADER } from '../../sandbox/variations.js';
import type { ConnectionInputArgs } from '../../src/contract/connection/connection-input.js';
import { connectionStateQuery, submitAnswerUpdate, type ConnectionFailureType } from '../../src/contract/connection/connection-definitions.js';
import { workerDataConverterFor } from '../../src/codec/data-converter.js';
import { TEST_ENCRYPTION, startConnectionStack, type ConnectionStack } from '../helpers/connection-stack.js';
import { createDevEnvironment, uniqueId } from '../helpers/temporal.js';
import { productWorkflowCode } from '../helpers/test-tier.js';

const FAST = { pollIntervalMs: 100, pollTimeoutMs: 20_000, answerTimeoutMs: 20_000 };
const YEAR = { WithTransactions: true, DaysOfTransactions: 'Days365' } as const;
/** Custom attributes with their contributing transactions (AttributesDetail carries dates and descriptions). */
const ATTRIBUTES_WITH_DETAIL = {
  custom: {
    MostRecentCached: true,
    Attributes: { Card: ['sum_employer_income', 'balance_min'] },
    Options: { AttributesDetail: ['sum_employer_income', 'balance_min'] },
  },
};
/** The sandbox's slow replies: waited for by the default Authorize timeout (240 s) ... */
const SLOW_REPLY_MS = 2_000;
/** ... and longer than the 1 s Authorize timeout of the impatient worker. */
const SLOWER_REPLY_MS = 3_000;
const IMPATIENT_AUTHORIZE_TIMEOUT_MS = 1_000;

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);
const objects = (value: unknown): Json[] => (Array.isArray(value) ? value.filter(isObject) : []);

// --- the recording proxy -----------------------------------------------------------------------

type AuthorizeKind = 'credentials' | 'answer' | 'cached';

/** One request the worker made and the answer it received (after any rewrite), bodies as text. */
interface Exchange {
  readonly method: string;
  readonly path: string;
  readonly requestBody: string;
  /** For an Authorize: what it carried. */
  readonly authorize?: AuthorizeKind | undefined;
  readonly status: number;
  readonly body: string;
}

/** A rewritten answer: JSON to send instead, or raw text (e.g. cut short). */
type Rewrite = { readonly json: unknown } | { readonly text: string };

interface TenantRule {
  /** Headers added to each of the tenant's requests to the sandbox (e.g. the variation header). */
  readonly headers?: Readonly<Record<string, string>>;
  /** Sees each answer of the sandbox (its body parsed when JSON); undefined passes it on as it came. */
  readonly rewrite?: (exchange: {
    readonly method: string;
    readonly path: string;
    readonly authorize?: AuthorizeKind | undefined;
    readonly status: number;
    readonly body: unknown;
  }) => Rewrite | undefined;
}

interface RecordingProxy {
  readonly url: string;
  /** Steers one tenant's requests (the path's customer id). */
  rule(tenant: string, rule: TenantRule): void;
  /** The tenant's exchanges so far, in the order their answers were delivered. */
  exchanges(tenant: string): readonly Exchange[];
  close(): Promise<void>;
}

function authorizeKindOf(path: string, body: string): AuthorizeKind | undefined {
  if (!/\/BankingServices\/Authorize$/.test(path)) return undefined;
  const request = JSON.parse(body) as Json;
  if (request.SecurityResponses !== undefined) return 'answer';
  return request.MostRecentCached === true ? 'cached' : 'credentials';
}

/** A pass-through proxy that buffers each exchange so it can record (and, per tenant, rewrite) it. */
async function startRecordingProxy(upstream: string): Promise<RecordingProxy> {
  const target = new URL(upstream);
  const rules = new Map<string, TenantRule>();
  const recorded = new Map<string, Exchange[]>();
  const tenantOf = (path: string) => /^\/v3\/([^/]+)\//.exec(path)?.[1];

  const server: Server = createServer((incoming: IncomingMessage, outgoing: ServerResponse) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      const method = incoming.method ?? 'GET';
      const path = incoming.url ?? '';
      const requestBody = Buffer.concat(chunks).toString('utf8');
      const tenant = tenantOf(path);
      const rule = tenant === undefined ? undefined : rules.get(tenant);
      const authorize = authorizeKindOf(path, requestBody);
      // Identity encoding: the proxy reads and may rewrite the answer's text.
      const headers = { ...incoming.headers, host: target.host, 'accept-encoding': 'identity', ...(rule?.headers ?? {}) };
      const forwarded = httpRequest({ host: target.hostname, port: target.port, method, path, headers }, (reply) => {
        const replyChunks: Buffer[] = [];
        reply.on('data', (chunk: Buffer) => replyChunks.push(chunk));
        reply.on('end', () => {
          const status = reply.statusCode ?? 502;
          let body = Buffer.concat(replyChunks).toString('utf8');
          if (rule?.rewrite) {
            let parsed: unknown;
            try {
              parsed = JSON.parse(body);
            } catch {
              parsed = undefined;
            }
            const rewritten = rule.rewrite({ method, path, authorize, status, body: parsed });
            if (rewritten) body = 'json' in rewritten ? JSON.stringify(rewritten.json) : rewritten.text;
          }
          if (tenant !== undefined) {
            const list = recorded.get(tenant) ?? [];
            list.push({ method, path, requestBody, authorize, status, body });
            recorded.set(tenant, list);
          }
          const replyHeaders = { ...reply.headers };
          delete replyHeaders['content-length'];
          delete replyHeaders['transfer-encoding'];
          outgoing.writeHead(status, { ...replyHeaders, 'content-length': Buffer.byteLength(body) });
          outgoing.end(body);
        });
      });
      forwarded.on('error', () => outgoing.destroy());
      forwarded.end(requestBody);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    rule: (tenant, rule) => rules.set(tenant, rule),
    exchanges: (tenant) => [...(recorded.get(tenant) ?? [])],
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

// --- the stacks --------------------------------------------------------------------------------

let env: TestWorkflowEnvironment;
let sandbox: Sandbox;
let proxy: RecordingProxy;
/** The worker of most tests: the sandbox through the recording proxy, the client's default timeouts. */
let stack: ConnectionStack;
/** A worker whose client waits only IMPATIENT_AUTHORIZE_TIMEOUT_MS for an Authorize, on a sandbox slower than that. */
let slowSandbox: Sandbox;
let impatient: ConnectionStack;

before(async () => {
  env = await createDevEnvironment();
  sandbox = await createSandbox({ port: 0, slowReplyMs: SLOW_REPLY_MS });
  proxy = await startRecordingProxy(sandbox.url);
  stack = await startConnectionStack(env, { sandbox, serviceUrl: proxy.url });
  slowSandbox = await createSandbox({ port: 0, slowReplyMs: SLOWER_REPLY_MS });
  impatient = await startConnectionStack(env, { sandbox: slowSandbox, authorizeTimeoutMs: IMPATIENT_AUTHORIZE_TIMEOUT_MS });
});

after(async () => {
  await stack?.stop();
  await impatient?.stop();
  await proxy?.close();
  await sandbox?.close();
  await slowSandbox?.close();
  await env?.teardown();
});

/** A live connection of `username` at SandboxBank (every variation banks there), for its own tenant. */
function live(customerId: string, username: string, products: ConnectionInputArgs['products'] = { accountsDetail: YEAR }): ConnectionInputArgs {
  return { customerId, session: { kind: 'live', institution: 'SandboxBank', username, password: SANDBOX_PASSWORD, save: true }, products, timing: FAST };
}

/** Every finished connection, replayed against the current code at the end of the file. */
const finished: { client: ConnectionStack['client']; workflowId: string }[] = [];
const kept = (on: ConnectionStack, workflowId: string) => finished.push({ client: on.client, workflowId });

async function failureOf(promise: Promise<unknown>): Promise<{ type: ConnectionFailureType; message: string }> {
  const error = await promise.then(
    () => assert.fail('the connection was expected to fail'),
    (caught: unknown) => caught,
  );
  assert.ok(error instanceof WorkflowFailedError, `expected WorkflowFailedError, got ${String(error)}`);
  assert.ok(error.cause instanceof ApplicationFailure, `expected an ApplicationFailure cause, got ${String(error.cause)}`);
  return { type: error.cause.type as ConnectionFailureType, message: error.cause.message };
}

async function submissions(on: Sandbox, customerId: string): Promise<AuthorizeSubmissions> {
  const response = await fetch(`${on.url}/sandbox/authorize-submissions?customerId=${encodeURIComponent(customerId)}`);
  assert.equal(response.status, 200);
  return (await response.json()) as AuthorizeSubmissions;
}

const isAccountsDetail = (exchange: Exchange) => /\/BankingServices\/GetAccountsDetail(Async\/[^/]+)?$/.test(exchange.path);
const isInvestments = (exchange: Exchange) => /^\/v3\/[^/]+\/Investments$/.test(exchange.path);
const isAttributes = (exchange: Exchange) => /\/insight\/login\/[^/]+\/attributes\//.test(exchange.path);
const isData = (exchange: Exchange) => isAccountsDetail(exchange) || isInvestments(exchange) || isAttributes(exchange);
const operationOf = (exchange: Exchange) => (/GetAccountsDetailAsync\//.test(exchange.path) ? 'GetAccountsDetailAsync' : 'GetAccountsDetail');
const authorizes = (tenant: string, kind: AuthorizeKind) => proxy.exchanges(tenant).filter((exchange) => exchange.authorize === kind);

/** The one 200 answer among `exchanges` with this RequestId, parsed: what the sandbox sent. */
function answerSent(exchanges: readonly Exchange[], requestId: string | undefined): Json {
  const answers = exchanges.filter((exchange) => exchange.status === 200).map((exchange) => JSON.parse(exchange.body) as Json);
  const matching = answers.filter((body) => body.RequestId === requestId);
  assert.equal(matching.length, 1, `one 200 answer of RequestId ${String(requestId)} (of ${answers.length})`);
  return matching[0] as Json;
}

/**
 * An attributes answer as a connection's result carries it (the product's documented shape): the
 * groups apart (every object member beside the envelope), and the members that are not groups in `Other`.
 */
function asResultCarriesAttributes(body: Json): Json {
  const envelope = new Set(['Login', 'RequestId', 'HttpStatusCode', 'Links']);
  const members = Object.entries(body).filter(([key]) => !envelope.has(key));
  const other = Object.fromEntries(members.filter(([, value]) => !isObject(value)));
  return {
    Login: body.Login,
    RequestId: body.RequestId,
    Groups: Object.fromEntries(members.filter(([, value]) => isObject(value))),
    ...(Object.keys(other).length > 0 ? { Other: other } : {}),
  };
}

const transactionsOf = (accounts: unknown): Json[] => objects(accounts).flatMap((account) => objects(account.Transactions));
const detailTransactionsOf = (attributes: Json): Json[] =>
  Object.values((attributes.Groups as Json | undefined) ?? {})
    .filter(isObject)
    .flatMap((group) => objects(group.AttributesDetail).flatMap((detail) => objects(detail.Transactions)));

// --- 1. the same data written other ways --------------------------------------------------------

type VariationName = 'nulls' | 'extra-members' | 'slash-dates' | 'iso-datetimes' | 'brand-code';

/** That the variation is really in the result (so the comparison with what was sent is not vacuous). */
const VARIATION_IN_RESULT: Record<VariationName, (result: { accounts: Json; investments: Json; attributes: Json }, exchanges: readonly Exchange[]) => void> = {
  nulls: ({ accounts, investments, attributes }) => {
    const transactions = transactionsOf(accounts.Accounts);
    const emptied = transactions.filter((transaction) => /[0-3]$/.test(String(transaction.Id)));
    assert.ok(emptied.length > 0 && emptied.every((transaction) => transaction.Description === null), 'the chosen transactions have a null Description');
    assert.ok(
      transactions.some((transaction) => typeof transaction.Description === 'string'),
      'the others keep theirs',
    );
    assert.equal((accounts.Login as Json).Type, null, 'Login.Type is null');
    assert.ok(
      objects(accounts.Accounts).every((account) => (account.Holder as Json).Email === null && (account.Holder as Json).PhoneNumber === null),
      'holders without Email and PhoneNumber',
    );
    assert.ok(
      objects(investments.Securities).length > 0 && objects(investments.Securities).every((security) => security.Aliases === null && security.ISIN === null),
      'securities without Aliases and ISIN',
    );
    const detail = detailTransactionsOf(attributes);
    assert.ok(
      detail.some((transaction) => transaction.Description === null),
      'attributes detail with a null Description',
    );
  },
  'extra-members': ({ accounts, investments, attributes }) => {
    assert.equal(accounts.Tag, 'abc', 'the top-level Tag of accounts detail');
    assert.equal((accounts.Login as Json).IsGoodLogin, true);
    for (const account of objects(accounts.Accounts)) {
      assert.deepEqual(account.Extra, { Source: 'sandbox' });
      assert.ok('Nickname' in account && account.Nickname === null, 'an unknown member that is null');
      assert.equal((account.Holder as Json).Type, 'Individual');
    }
    assert.ok(
      transactionsOf(accounts.Accounts).every(
        (transaction) => typeof transaction.Reference === 'string' && 'SubCode' in transaction && transaction.SubCode === null,
      ),
      'every transaction carries Reference and SubCode',
    );
    assert.ok(
      objects(investments.Accounts).every((account) => isObject(account.Extra)),
      'investment accounts carry Extra',
    );
    assert.deepEqual(attributes.Other, { Tag: 'abc' }, 'a member of the attributes answer that is not a group is kept in Other');
  },
  'slash-dates': ({ accounts }) => {
    const transactions = transactionsOf(accounts.Accounts);
    assert.ok(
      transactions.length > 0 && transactions.every((transaction) => /^\d{4}\/\d{2}\/\d{2}$/.test(String(transaction.Date))),
      'every transaction date written YYYY/MM/DD',
    );
  },
  'iso-datetimes': ({ accounts, investments, attributes }) => {
    const timestamp = /^\d{4}-\d{2}-\d{2}T00:00:00$/;
    assert.ok(
      transactionsOf(accounts.Accounts).every((transaction) => timestamp.test(String(transaction.Date))),
      'transaction dates as timestamps',
    );
    const investmentTransactions = transactionsOf(investments.Accounts);
    assert.ok(
      investmentTransactions.length > 0 && investmentTransactions.every((transaction) => timestamp.test(String(transaction.Date))),
      'investment transaction dates as timestamps',
    );
    const detail = detailTransactionsOf(attributes);
    assert.ok(detail.length > 0 && detail.every((transaction) => timestamp.test(String(transaction.Date))), 'attributes detail dates as timestamps');
  },
  'brand-code': (_, exchanges) => {
    const pending = exchanges.filter((exchange) => exchange.status === 202).map((exchange) => JSON.parse(exchange.body) as Json);
    assert.ok(
      pending.length > 0 && pending.every((body) => typeof body.FlinksCode === 'string' && !('ServiceCode' in body)),
      'every 202 wrote its code as FlinksCode',
    );
  },
};

const VARIANTS: { readonly username: string; readonly variations: readonly VariationName[]; readonly header?: string }[] = [
  { username: 'variant_nulls', variations: ['nulls'] },
  { username: 'variant_extra_members', variations: ['extra-members'] },
  { username: 'variant_slash_dates', variations: ['slash-dates'] },
  { username: 'variant_iso_datetimes', variations: ['iso-datetimes'] },
  { username: 'variant_brand_code', variations: ['brand-code'] },
  { username: 'variant_all', variations: ['nulls', 'extra-members', 'slash-dates', 'brand-code'] },
  // The header varies any scenario's answers (slash-dates and iso-datetimes exclude each other).
  { username: 'no_mfa', variations: ['nulls', 'extra-members', 'iso-datetimes', 'brand-code'], header: 'nulls,extra-members,iso-datetimes,brand-code' },
];

describe('the same data written the ways a real service writes it', () => {
  for (const { username, variations, header } of VARIANTS) {
    const name = header ? `${username} with the header ${VARIATION_HEADER}: ${header}` : username;
    it(`completes a live connection of ${name} whose accounts detail, investments and attributes equal what the sandbox sent, without warnings`, async () => {
      const tenant = uniqueId('variant');
      if (header) proxy.rule(tenant, { headers: { [VARIATION_HEADER]: header } });
      const handle = await stack.start(live(tenant, username, { accountsDetail: YEAR, investments: true, attributes: ATTRIBUTES_WITH_DETAIL }));
      const result = await handle.result();
      kept(stack, handle.workflowId);
      assert.equal(result.warnings, undefined, 'the views accept these variations');

      const exchanges = proxy.exchanges(tenant);
      const accounts = result.accountsDetail as unknown as Json;
      const investments = result.investments as unknown as Json;
      const attributes = result.attributes as unknown as Json;
      assert.ok(accounts && investments && attributes, 'every product retrieved');
      // Exactly what the sandbox sent: unknown members still there, nulls still null, dates as written.
      assert.deepStrictEqual(accounts, answerSent(exchanges.filter(isAccountsDetail), result.accountsDetail?.RequestId));
      assert.deepStrictEqual(investments, answerSent(exchanges.filter(isInvestments), result.investments?.RequestId));
      assert.deepStrictEqual(attributes, asResultCarriesAttributes(answerSent(exchanges.filter(isAttributes), result.attributes?.RequestId)));
      assert.ok(objects(accounts.Accounts).length >= 2 && transactionsOf(accounts.Accounts).length > 20, 'a year of accounts detail');
      for (const variation of variations) VARIATION_IN_RESULT[variation]({ accounts, investments, attributes }, exchanges);

      // Each pending answer was polled once more, and nothing was asked twice beyond that.
      const pendingAnswers = exchanges.filter((exchange) => isData(exchange) && exchange.status === 202).length;
      assert.equal(result.totalPolls, pendingAnswers, 'one poll for every 202');
      assert.ok(
        exchanges.every((exchange) => exchange.status === 200 || exchange.status === 202),
        'no request refused or retried',
      );
      if (username === 'variant_brand_code') {
        const accountsPending = exchanges.filter((exchange) => isAccountsDetail(exchange) && exchange.status === 202).length;
        assert.ok(accountsPending >= 2, `accounts detail was pending for its 2 polls (${accountsPending} 202s)`);
      }
      const state = await handle.query(connectionStateQuery);
      assert.equal(state.status, 'Completed');
    });
  }
});

// --- 2. a record the view cannot read ------------------------------------------------------------

describe('a record the typed view cannot read', () => {
  it("is kept as sent and named in the result's warnings; the connection completes without asking again", async () => {
    const tenant = uniqueId('unreadable');
    let balanceWas: unknown;
    proxy.rule(tenant, {
      rewrite: ({ path, status, body }) => {
        if (status !== 200 || !isObject(body) || !/\/GetAccountsDetail(Async\/[^/]+)?$/.test(path)) return undefined;
        // A balance written as text, and a date in a format no view reads: nothing the sandbox serves.
        const first = objects(body.Accounts)[0]?.Transactions as Json[];
        const second = objects(body.Accounts)[1]?.Transactions as Json[];
        balanceWas = first[3]?.Balance;
        (first[3] as Json).Balance = String(balanceWas);
        (second[0] as Json).Date = '31.10.2026';
        return { json: body };
      },
    });
    const handle = await stack.start(live(tenant, 'no_mfa'));
    const result = await handle.result();
    kept(stack, handle.workflowId);

    const accountsExchanges = proxy.exchanges(tenant).filter(isAccountsDetail);
    assert.deepEqual(
      accountsExchanges.map((exchange) => `${exchange.method} ${operationOf(exchange)} ${exchange.status}`),
      ['POST GetAccountsDetail 202', 'GET GetAccountsDetailAsync 200'],
      'one request and one poll: the answer was read once, not retried',
    );
    const delivered = accountsExchanges[1] as Exchange;
    assert.equal(typeof balanceWas, 'number');
    // The whole answer as sent, the unreadable fields as the service wrote them.
    assert.deepStrictEqual(result.accountsDetail, JSON.parse(delivered.body));
    const transactions = (result.accountsDetail?.Accounts ?? []).map((account) => account.Transactions ?? []);
    assert.equal(transactions[0]?.[3]?.Balance, String(balanceWas));
    assert.equal(transactions[1]?.[0]?.Date, '31.10.2026');

    const warnings = result.warnings ?? assert.fail('the result carries warnings');
    assert.deepEqual(
      warnings.map(({ operation, path }) => ({ operation, path })),
      [
        { operation: 'GetAccountsDetailAsync', path: 'Accounts[0].Transactions[3].Balance' },
        { operation: 'GetAccountsDetailAsync', path: 'Accounts[1].Transactions[0].Date' },
      ],
    );
    assert.match(warnings[0]?.problem ?? '', /number/);
    assert.match(warnings[1]?.problem ?? '', /date/);
    for (const warning of warnings)
      assert.ok(!warning.problem.includes(String(balanceWas)) && !warning.problem.includes('31.10.2026'), 'a warning never quotes the value');
    const state = await handle.query(connectionStateQuery);
    assert.equal(state.status, 'Completed');
  });
});

// --- 3. challenge types the spec does not name ---------------------------------------------------

describe('challenge types the spec does not name', () => {
  const SMS_PROMPT = 'Enter the code we sent by SMS to ***-***-1234';

  async function refusedByValidator(handle: Awaited<ReturnType<ConnectionStack['start']>>, responses: Record<string, string[]>): Promise<string> {
    const error = await handle.executeUpdate(submitAnswerUpdate, { args: [{ challengeSetId: '1', responses }] }).then(
      () => assert.fail('the validator was expected to refuse the answer'),
      (caught: unknown) => caught,
    );
    assert.ok(error instanceof WorkflowUpdateFailedError, `expected WorkflowUpdateFailedError, got ${String(error)}`);
    assert.ok(error.cause instanceof Error);
    return error.cause.message;
  }

  it('presents an SmsCode challenge with its prompt, refuses an empty or a two-value answer, and completes once answered 246810 by its prompt', async () => {
    const tenant = uniqueId('sms');
    const handle = await stack.start(live(tenant, 'unknown_challenge'));
    const state = await stack.waitForState(handle.workflowId, (s) => s.status === 'AwaitingAnswer', 'the SmsCode challenge');
    assert.deepEqual(
      state.challengeSet?.challenges.map(({ Type, Prompt }) => ({ Type, Prompt })),
      [{ Type: 'SmsCode', Prompt: SMS_PROMPT }],
    );
    assert.equal(state.challengeSet?.id, '1');

    const eventsBefore = (await handle.fetchHistory()).events?.length;
    const sentBefore = proxy.exchanges(tenant).length;
    assert.match(await refusedByValidator(handle, { [SMS_PROMPT]: [''] }), /the answer is empty/);
    assert.match(await refusedByValidator(handle, { [SMS_PROMPT]: ['   '] }), /the answer is empty/);
    assert.match(await refusedByValidator(handle, { [SMS_PROMPT]: ['246810', '135790'] }), /a SmsCode challenge needs exactly one answer/);
    assert.equal((await handle.fetchHistory()).events?.length, eventsBefore, 'no refused answer was recorded');
    assert.equal(proxy.exchanges(tenant).length, sentBefore, 'no refused answer was sent');

    const outcome = await handle.executeUpdate(submitAnswerUpdate, { args: [{ challengeSetId: '1', responses: { [SMS_PROMPT]: ['246810'] } }] });
    assert.equal(outcome.outcome, 'accepted');
    const result = await handle.result();
    kept(stack, handle.workflowId);
    assert.ok((result.accountsDetail?.Accounts.length ?? 0) >= 2, 'accounts retrieved');
    const answers = authorizes(tenant, 'answer');
    assert.equal(answers.length, 1, 'one answer sent');
    assert.deepEqual((JSON.parse(answers[0]?.requestBody ?? '{}') as Json).SecurityResponses, { [SMS_PROMPT]: ['246810'] });
    assert.deepEqual(await submissions(sandbox, tenant), { answers: 1, credentials: 1, duplicates: [] });
  });

  it('completes unknown_challenge_mixed with its QuestionAndAnswer and PlainQuestion answered in one call', async () => {
    const tenant = uniqueId('mixed');
    const city = 'What city were you born in?';
    const street = 'What is the name of the street you grew up on?';
    const handle = await stack.start(live(tenant, 'unknown_challenge_mixed'));
    const state = await stack.waitForState(handle.workflowId, (s) => s.status === 'AwaitingAnswer', 'the two challenges');
    assert.deepEqual(
      state.challengeSet?.challenges.map(({ Type, Prompt }) => ({ Type, Prompt })),
      [
        { Type: 'QuestionAndAnswer', Prompt: city },
        { Type: 'PlainQuestion', Prompt: street },
      ],
    );
    assert.match(await refusedByValidator(handle, { [city]: ['Montreal'] }), /is not answered \(all prompts must be answered in one call\)/);

    const outcome = await handle.executeUpdate(submitAnswerUpdate, {
      args: [{ challengeSetId: '1', responses: { [city]: ['Montreal'], [street]: ['Maple Avenue'] } }],
    });
    assert.equal(outcome.outcome, 'accepted');
    const result = await handle.result();
    kept(stack, handle.workflowId);
    assert.ok((result.accountsDetail?.Accounts.length ?? 0) >= 2, 'accounts retrieved');
    assert.deepEqual(await submissions(sandbox, tenant), { answers: 1, credentials: 1, duplicates: [] });
  });
});

// --- 4, 5. slow replies (and slow_authorize, the same for the first call) --------------------------------------------------------------------------

describe('an answer the service is slow to accept', () => {
  const prompt = 'What city were you born in?';

  it(`is waited for with the default Authorize timeout (the sandbox answers after ${SLOW_REPLY_MS} ms): the connection completes, credentials and answer each sent once`, async () => {
    const tenant = uniqueId('slow');
    const handle = await stack.start(live(tenant, 'slow_answer'));
    await stack.waitForState(handle.workflowId, (s) => s.status === 'AwaitingAnswer', 'the security question');
    const outcome = await handle.executeUpdate(submitAnswerUpdate, { args: [{ challengeSetId: '1', responses: { [prompt]: ['Montreal'] } }] });
    assert.equal(outcome.outcome, 'accepted');
    const result = await handle.result();
    kept(stack, handle.workflowId);
    assert.ok((result.accountsDetail?.Accounts.length ?? 0) >= 2, 'accounts retrieved');

    assert.deepEqual(await submissions(sandbox, tenant), { answers: 1, credentials: 1, duplicates: [] });
    assert.deepEqual(
      authorizes(tenant, 'answer').map((exchange) => exchange.status),
      [200],
      'the one answer got its 200',
    );
    const state = await handle.query(connectionStateQuery);
    assert.equal(state.status, 'Completed');
    assert.equal(state.sessionRestarts, 0);
  });

  it(`fails once as ServiceUnavailable when the client stops waiting (${IMPATIENT_AUTHORIZE_TIMEOUT_MS} ms) before the service answers (${SLOWER_REPLY_MS} ms), sending neither the credentials nor the answer again`, async () => {
    const tenant = uniqueId('too-slow');
    const handle = await impatient.start(live(tenant, 'slow_answer'));
    await impatient.waitForState(handle.workflowId, (s) => s.status === 'AwaitingAnswer', 'the security question');
    const outcome = await handle.executeUpdate(submitAnswerUpdate, { args: [{ challengeSetId: '1', responses: { [prompt]: ['Montreal'] } }] });
    assert.equal(outcome.outcome, 'ended', JSON.stringify(outcome));
    assert.equal(outcome.outcome === 'ended' && outcome.failure?.type, 'ServiceUnavailable');

    const failure = await failureOf(handle.result());
    kept(impatient, handle.workflowId);
    assert.equal(failure.type, 'ServiceUnavailable');
    assert.match(failure.message, /did not answer within 1 s/);
    assert.match(failure.message, /the credentials and answers were not sent again/);
    assert.deepEqual(await submissions(slowSandbox, tenant), { answers: 1, credentials: 1, duplicates: [] });
    const state = await handle.query(connectionStateQuery);
    assert.equal(state.status, 'Failed');
    assert.equal(state.sessionRestarts, 0, 'no new session was opened');
    assert.equal(state.lastRestart, undefined);
  });
});

describe('credentials the service is slow to accept (slow_authorize)', () => {
  it(`are waited for with the default Authorize timeout (the sandbox answers after ${SLOW_REPLY_MS} ms): the connection completes, the credentials sent once`, async () => {
    const tenant = uniqueId('slow-authorize');
    const handle = await stack.start(live(tenant, 'slow_authorize'));
    const result = await handle.result();
    kept(stack, handle.workflowId);
    assert.ok((result.accountsDetail?.Accounts.length ?? 0) >= 2, 'accounts retrieved');
    assert.deepEqual(await submissions(sandbox, tenant), { answers: 0, credentials: 1, duplicates: [] });
    assert.deepEqual(
      authorizes(tenant, 'credentials').map((exchange) => exchange.status),
      [200],
    );
    assert.equal((await handle.query(connectionStateQuery)).sessionRestarts, 0);
  });

  it(`fail once as ServiceUnavailable when the client stops waiting (${IMPATIENT_AUTHORIZE_TIMEOUT_MS} ms) before the service answers (${SLOWER_REPLY_MS} ms), the credentials not sent again`, async () => {
    const tenant = uniqueId('too-slow-authorize');
    const handle = await impatient.start(live(tenant, 'slow_authorize'));
    const failure = await failureOf(handle.result());
    kept(impatient, handle.workflowId);
    assert.equal(failure.type, 'ServiceUnavailable');
    assert.match(failure.message, /did not answer within 1 s; whether it acted is unknown, so the credentials and answers were not sent again/);
    assert.deepEqual(await submissions(slowSandbox, tenant), { answers: 0, credentials: 1, duplicates: [] });
    const state = await handle.query(connectionStateQuery);
    assert.equal(state.status, 'Failed');
    assert.equal(state.sessionRestarts, 0, 'no new session was opened');
  });
});

// --- 6. an Authorize whose reply cannot be read --------------------------------------------------

describe('an Authorize whose reply cannot be read', () => {
  const cut = (status: number, body: unknown): Rewrite => {
    const text = JSON.stringify(body);
    assert.ok(status >= 200 && status < 300);
    return { text: text.slice(0, Math.floor(text.length / 2)) };
  };
  const withoutRequestId = (body: unknown): Rewrite => {
    const { RequestId: _dropped, ...rest } = body as Json;
    return { json: rest };
  };
  const cases: {
    readonly name: string;
    readonly username: string;
    readonly on: AuthorizeKind;
    readonly rewrite: (status: number, body: unknown) => Rewrite;
    readonly message: RegExp;
  }[] = [
    {
      name: "the credentials' 200 without a RequestId",
      username: 'no_mfa',
      on: 'credentials',
      rewrite: (_, body) => withoutRequestId(body),
      message: /Authorize answered HTTP 200 with a body the product cannot act on: RequestId/,
    },
    {
      name: "the credentials' 203 with a challenge without a Prompt",
      username: 'security_question',
      on: 'credentials',
      rewrite: (_, body) => {
        const challenges = objects((body as Json).SecurityChallenges);
        assert.equal(challenges.length, 1);
        delete (challenges[0] as Json).Prompt;
        return { json: body };
      },
      message: /Authorize answered HTTP 203 with a body the product cannot act on: SecurityChallenges\[0\]\.Prompt/,
    },
    {
      name: "the credentials' 200 cut short (not JSON)",
      username: 'no_mfa',
      on: 'credentials',
      rewrite: cut,
      message: /the service's reply \(HTTP 200\) could not be read; the credentials and answers were not sent again/,
    },
    {
      name: "the answer's 200 without a RequestId",
      username: 'security_question',
      on: 'answer',
      rewrite: (_, body) => withoutRequestId(body),
      message: /Authorize answered HTTP 200 with a body the product cannot act on: RequestId/,
    },
    {
      name: "the answer's 200 cut short (not JSON)",
      username: 'security_question',
      on: 'answer',
      rewrite: cut,
      message: /the service's reply \(HTTP 200\) could not be read; the credentials and answers were not sent again/,
    },
  ];

  for (const { name, username, on, rewrite, message } of cases) {
    it(`fails the connection as UnexpectedResponse at once over ${name}, the credentials sent once and no new session`, async () => {
      const tenant = uniqueId('unreadable-authorize');
      let rewritten = 0;
      proxy.rule(tenant, {
        rewrite: ({ authorize, status, body }) => {
          if (authorize !== on || rewritten > 0) return undefined;
          rewritten += 1;
          return rewrite(status, body);
        },
      });
      const handle = await stack.start(live(tenant, username));
      if (on === 'answer') {
        await stack.waitForState(handle.workflowId, (s) => s.status === 'AwaitingAnswer', 'the security question');
        const outcome = await handle.executeUpdate(submitAnswerUpdate, {
          args: [{ challengeSetId: '1', responses: { 'What city were you born in?': ['Montreal'] } }],
        });
        assert.equal(outcome.outcome, 'ended', JSON.stringify(outcome));
        assert.equal(outcome.outcome === 'ended' && outcome.failure?.type, 'UnexpectedResponse');
      }
      const failure = await failureOf(handle.result());
      kept(stack, handle.workflowId);
      assert.equal(failure.type, 'UnexpectedResponse');
      assert.match(failure.message, message);
      assert.equal(rewritten, 1);

      assert.equal(authorizes(tenant, 'credentials').length, 1, 'the credentials were sent once');
      assert.equal(authorizes(tenant, 'answer').length, on === 'answer' ? 1 : 0, on === 'answer' ? 'the answer was sent once' : 'nothing was answered');
      assert.equal(authorizes(tenant, 'cached').length, 0);
      assert.equal(proxy.exchanges(tenant).filter(isData).length, 0, 'no data was asked for');
      assert.deepEqual(await submissions(sandbox, tenant), { answers: on === 'answer' ? 1 : 0, credentials: 1, duplicates: [] });
      const state = await handle.query(connectionStateQuery);
      assert.equal(state.status, 'Failed');
      assert.equal(state.sessionRestarts, 0, 'no new session was opened');
    });
  }
});

// --- 7. a data answer whose envelope is unusable -------------------------------------------------

describe('a data answer the product cannot act on', () => {
  async function savedLoginReadyAtOnce(tenant: string): Promise<string> {
    const response = await fetch(`${sandbox.url}/sandbox/${encodeURIComponent(tenant)}/logins`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'no_mfa', pendingPolls: 0 }),
    });
    assert.equal(response.status, 200, await response.clone().text());
    return ((await response.json()) as { LoginId: string }).LoginId;
  }

  const cases = [
    { name: 'a 200 without RequestId on GetAccountsDetail (a cached login whose data is ready)', cached: true, operation: 'GetAccountsDetail' },
    { name: 'a 200 without RequestId on the poll GetAccountsDetailAsync (a live login)', cached: false, operation: 'GetAccountsDetailAsync' },
  ] as const;

  for (const { name, cached, operation } of cases) {
    it(`fails the connection as UnexpectedResponse after exactly one such answer: ${name}`, async () => {
      const tenant = uniqueId('unusable-data');
      proxy.rule(tenant, {
        rewrite: ({ path, status, body }) => {
          if (status !== 200 || !isObject(body) || !/\/GetAccountsDetail(Async\/[^/]+)?$/.test(path)) return undefined;
          const { RequestId: _dropped, ...rest } = body;
          return { json: rest };
        },
      });
      const input: ConnectionInputArgs = cached
        ? { customerId: tenant, session: { kind: 'cached', loginId: await savedLoginReadyAtOnce(tenant) }, products: { accountsDetail: YEAR }, timing: FAST }
        : live(tenant, 'no_mfa');
      const handle = await stack.start(input);
      const failure = await failureOf(handle.result());
      kept(stack, handle.workflowId);
      assert.equal(failure.type, 'UnexpectedResponse');
      assert.match(failure.message, new RegExp(`${operation} answered HTTP 200 with a body the product cannot act on: RequestId`));

      const accountsExchanges = proxy.exchanges(tenant).filter(isAccountsDetail);
      const unusable = accountsExchanges.filter((exchange) => exchange.status === 200);
      assert.equal(unusable.length, 1, 'exactly one such answer: not read again');
      assert.equal(operationOf(unusable[0] as Exchange), operation);
      assert.deepEqual(
        accountsExchanges.map((exchange) => `${operationOf(exchange)} ${exchange.status}`),
        cached ? ['GetAccountsDetail 200'] : ['GetAccountsDetail 202', 'GetAccountsDetailAsync 200'],
      );
      const state = await handle.query(connectionStateQuery);
      assert.equal(state.status, 'Failed');
      assert.equal(state.failure?.type, 'UnexpectedResponse');
    });
  }
});

describe('replay', () => {
  it('replays the history of every connection above without nondeterminism', async () => {
    assert.ok(finished.length >= 15, `only ${finished.length} histories kept`);
    const histories = await Promise.all(
      finished.map(async ({ client, workflowId }) => ({ workflowId, history: await client.workflow.getHandle(workflowId).fetchHistory() })),
    );
    const failures: string[] = [];
    for await (const result of Worker.runReplayHistories(
      { ...productWorkflowCode(), dataConverter: workerDataConverterFor({ encryption: TEST_ENCRYPTION }), replayName: 'service-variations-test' },
      histories,
    )) {
      if (result.error) failures.push(`${result.workflowId}: ${String(result.error)}`);
    }
    assert.deepEqual(failures, []);
  });
});
