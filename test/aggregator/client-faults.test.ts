/**
 * Contract tests of how the aggregation client classifies failures: injected transport faults
 * (the sandbox's x-sandbox-fault header), cancellation, input refused before sending, and answers
 * that break the contract (served by a tiny local node:http server).
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { createAggregatorClient, type AggregatorClient, type AggregatorClientOptions } from '../../src/aggregator/client.js';
import {
  type AggregatorError,
  AggregatorAbortedError,
  AggregatorNetworkError,
  AggregatorRequestError,
  AggregatorResponseError,
  UnexpectedResponseError,
  AggregatorServiceError,
} from '../../src/aggregator/errors.js';
import type { AttributesRequest, AuthorizeRequest } from '../../src/aggregator/schemas.js';
import { FAULT_HEADER } from '../../sandbox/faults.js';
import { createSandbox, type Sandbox } from '../../sandbox/server.js';

const VALID_UUID = '00000000-0000-4000-8000-000000000000';

let sandbox: Sandbox;
before(async () => {
  sandbox = await createSandbox({ port: 0 });
});
after(async () => sandbox.close());

let tenantCounter = 0;
function freshTenant(): string {
  tenantCounter += 1;
  return `faults-${process.pid}-${tenantCounter}`;
}

/** A client over a fetch that counts the requests it lets through. */
function countingClient(options: Partial<AggregatorClientOptions> = {}) {
  const counter = { requests: 0 };
  const counting: typeof fetch = (input, init) => {
    counter.requests += 1;
    return fetch(input, init);
  };
  const customerId = options.customerId ?? freshTenant();
  const client = createAggregatorClient({ baseUrl: sandbox.url, customerId, timeoutMs: 10_000, ...options, fetch: counting });
  return { client, counter, customerId };
}

/** A cached session on a saved login (admin API), so data calls have a real RequestId. */
async function cachedSession(client: AggregatorClient, customerId: string, username = 'no_mfa') {
  const created = await fetch(`${sandbox.url}/sandbox/${customerId}/logins`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username, pendingPolls: 1 }),
  });
  const { LoginId } = (await created.json()) as { LoginId: string };
  const authorized = await client.authorizeCached(LoginId);
  assert.equal(authorized.kind, 'ready');
  return { loginId: LoginId, requestId: authorized.requestId };
}

/** Awaits the rejection and returns the error, asserting its class. */
async function caught<E extends AggregatorError>(promise: Promise<unknown>, type: abstract new (...args: never[]) => E): Promise<E> {
  let error: unknown;
  await assert.rejects(promise, (e: unknown) => ((error = e), true));
  assert.ok(error instanceof type, `expected ${type.name}, got ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`);
  return error;
}

describe('faults injected by the sandbox header', () => {
  it('throws a retryable AggregatorNetworkError naming the timeout when latency exceeds timeoutMs', async () => {
    const { client, customerId } = countingClient({ timeoutMs: 10_000 });
    const { requestId } = await cachedSession(client, customerId);
    const slow = createAggregatorClient({ baseUrl: sandbox.url, customerId, timeoutMs: 50 });
    const error = await caught(slow.getAccountsDetail(requestId, {}, { headers: { [FAULT_HEADER]: 'latency=600' } }), AggregatorNetworkError);
    assert.equal(error.retryable, true);
    assert.equal(error.remedy, 'retry');
    assert.equal(error.operation, 'GetAccountsDetail');
    assert.match(error.message, /within 50 ms/);
  });

  it('honours a per-call timeoutMs over the client default', async () => {
    const { client, customerId } = countingClient({ timeoutMs: 10_000 });
    const { requestId } = await cachedSession(client, customerId);
    const error = await caught(client.getAccountsDetail(requestId, {}, { timeoutMs: 40, headers: { [FAULT_HEADER]: 'latency=600' } }), AggregatorNetworkError);
    assert.match(error.message, /within 40 ms/);
  });

  it('answers normally when the latency stays under the timeout', async () => {
    const { client, customerId } = countingClient();
    const { requestId } = await cachedSession(client, customerId);
    const result = await client.getAccountsDetail(requestId, {}, { headers: { [FAULT_HEADER]: 'latency=5' } });
    assert.equal(result.kind, 'pending');
  });

  it('throws a retryable AggregatorServiceError without a service code for status=503, leaving the session untouched', async () => {
    const { client, customerId } = countingClient();
    const { requestId } = await cachedSession(client, customerId);
    const error = await caught(client.getAccountsDetail(requestId, {}, { headers: { [FAULT_HEADER]: 'status=503' } }), AggregatorServiceError);
    assert.equal(error.httpStatus, 503);
    assert.equal(error.serviceCode, undefined);
    assert.equal(error.retryable, true);
    assert.equal(error.remedy, 'retry');
    assert.equal((await client.getAccountsDetail(requestId)).kind, 'pending');
  });

  it('throws a non-retryable AggregatorServiceError for status=404 without a code', async () => {
    const { client, customerId } = countingClient();
    const { requestId } = await cachedSession(client, customerId);
    const error = await caught(client.getAccountsDetail(requestId, {}, { headers: { [FAULT_HEADER]: 'status=404' } }), AggregatorServiceError);
    assert.equal(error.httpStatus, 404);
    assert.equal(error.retryable, false);
  });

  it('throws a retryable AggregatorNetworkError when the connection is reset', async () => {
    const { client } = countingClient();
    const error = await caught(client.getAccountsDetail(VALID_UUID, {}, { headers: { [FAULT_HEADER]: 'reset' } }), AggregatorNetworkError);
    assert.equal(error.retryable, true);
    assert.equal(error.httpStatus, undefined);
  });

  it('throws retryable TOO_MANY_REQUESTS for rate-limit (429 and 403)', async () => {
    const { client } = countingClient();
    for (const [directive, status] of [
      ['rate-limit', 429],
      ['rate-limit=403', 403],
    ] as const) {
      const error = await caught(client.getAccountsDetail(VALID_UUID, {}, { headers: { [FAULT_HEADER]: directive } }), AggregatorServiceError);
      assert.equal(error.serviceCode, 'TOO_MANY_REQUESTS');
      assert.equal(error.httpStatus, status);
      assert.equal(error.retryable, true);
    }
  });

  it('throws a retryable AggregatorResponseError for a malformed body', async () => {
    const { client } = countingClient();
    const error = await caught(client.getAccountsDetail(VALID_UUID, {}, { headers: { [FAULT_HEADER]: 'malformed' } }), AggregatorResponseError);
    assert.equal(error.httpStatus, 200);
    assert.equal(error.retryable, true);
    assert.match(error.message, /malformed JSON/);
  });

  it('classifies the scenario faults of flaky sessions the same way, then answers', async () => {
    const { client, customerId } = countingClient();
    const rateLimited = await cachedSession(client, customerId, 'rate_limited');
    assert.equal((await caught(client.getAccountsDetail(rateLimited.requestId), AggregatorServiceError)).serviceCode, 'TOO_MANY_REQUESTS');
    const flaky = await cachedSession(client, customerId, 'flaky_malformed');
    await caught(client.getAccountsDetail(flaky.requestId), AggregatorResponseError);
    assert.equal((await client.getAccountsDetail(flaky.requestId)).kind, 'pending');
  });
});

// --- a tiny local server for answers the sandbox never gives -----------------------------------

type Handler = (request: IncomingMessage, response: ServerResponse) => void;
let local: Server;
let localUrl: string;
let handler: Handler = (_request, response) => response.end();
before(async () => {
  local = createServer((request, response) => {
    request.resume();
    request.on('end', () => handler(request, response));
  });
  await new Promise<void>((resolve) => local.listen(0, '127.0.0.1', resolve));
  localUrl = `http://127.0.0.1:${(local.address() as AddressInfo).port}`;
});
after(async () => {
  local.closeAllConnections();
  await new Promise<void>((resolve) => local.close(() => resolve()));
});

function serve(status: number, body: unknown): void {
  handler = (_request, response) => {
    const text = typeof body === 'string' ? body : JSON.stringify(body);
    response.writeHead(status, { 'content-type': 'application/json' });
    response.end(text);
  };
}
const localClient = (options: Partial<AggregatorClientOptions> = {}) =>
  createAggregatorClient({ baseUrl: localUrl, customerId: 'local', timeoutMs: 10_000, ...options });

describe('cancellation', () => {
  it('throws a non-retryable AggregatorAbortedError when the signal aborts mid-request', async () => {
    const controller = new AbortController();
    // The server aborts the caller once it holds the request, and never answers.
    handler = () => controller.abort(new Error('caller gave up'));
    const error = await caught(localClient().getAccountsDetailAsync(VALID_UUID, { signal: controller.signal }), AggregatorAbortedError);
    assert.equal(error.retryable, false);
    assert.equal(error.remedy, 'give-up');
    assert.equal(error.operation, 'GetAccountsDetailAsync');
  });

  it('throws AggregatorAbortedError for a signal aborted before the call', async () => {
    const error = await caught(localClient().getAccountsDetailAsync(VALID_UUID, { signal: AbortSignal.abort() }), AggregatorAbortedError);
    assert.equal(error.retryable, false);
  });

  it('throws AggregatorAbortedError when a sandbox call held by latency is aborted after it was sent', async () => {
    const controller = new AbortController();
    let sent = 0;
    const abortAfterSending: typeof fetch = (input, init) => {
      sent += 1;
      const answer = fetch(input, init);
      setImmediate(() => controller.abort());
      return answer;
    };
    const client = createAggregatorClient({ baseUrl: sandbox.url, customerId: freshTenant(), fetch: abortAfterSending });
    const error = await caught(
      client.getAccountsDetail(VALID_UUID, {}, { signal: controller.signal, headers: { [FAULT_HEADER]: 'latency=300' } }),
      AggregatorAbortedError,
    );
    assert.equal(sent, 1);
    assert.equal(error.retryable, false);
  });
});

describe('input refused before sending', () => {
  const cases: { name: string; field: RegExp; call: (client: AggregatorClient) => Promise<unknown> }[] = [
    { name: 'a non-UUID RequestId to poll', field: /RequestId/, call: (c) => c.getAccountsDetailAsync('not-a-uuid') },
    { name: 'a non-UUID RequestId for accounts detail', field: /RequestId/, call: (c) => c.getAccountsDetail('1234') },
    {
      name: 'an unknown DaysOfTransactions',
      field: /DaysOfTransactions/,
      call: (c) => c.getAccountsDetail(VALID_UUID, { DaysOfTransactions: 'Days30' as never }),
    },
    { name: 'a non-UUID in AccountsFilter', field: /AccountsFilter\[1\]/, call: (c) => c.getAccountsDetail(VALID_UUID, { AccountsFilter: [VALID_UUID, 'x'] }) },
    { name: 'empty SecurityResponses', field: /SecurityResponses/, call: (c) => c.answerChallenge(VALID_UUID, {}) },
    { name: 'a prompt without answers', field: /SecurityResponses\.What city\?/, call: (c) => c.answerChallenge(VALID_UUID, { 'What city?': [] }) },
    { name: 'a non-UUID RequestId answering a challenge', field: /RequestId/, call: (c) => c.answerChallenge('abc', { Prompt: ['x'] }) },
    {
      name: 'a live Authorize without Password',
      field: /Password/,
      call: (c) => c.authorize({ Institution: 'SandboxBank', Username: 'no_mfa', MostRecentCached: false }),
    },
    {
      name: 'an unknown Authorize field',
      field: /Passwort/,
      call: (c) => c.authorize({ Institution: 'SandboxBank', Username: 'no_mfa', Password: 'x', Passwort: 'x', MostRecentCached: false } as AuthorizeRequest),
    },
    { name: 'a non-UUID LoginId in cached mode', field: /LoginId/, call: (c) => c.authorizeCached('login-1') },
    {
      name: 'an AttributesRequest without Attributes',
      field: /Attributes/,
      call: (c) => c.getCustomAttributes(VALID_UUID, VALID_UUID, { MostRecentCached: true } as AttributesRequest),
    },
    {
      name: 'an attribute group without names',
      field: /Attributes\.Card/,
      call: (c) => c.getCustomAttributes(VALID_UUID, VALID_UUID, { MostRecentCached: true, Attributes: { Card: [] } }),
    },
    { name: 'a non-UUID LoginId for attributes', field: /LoginId/, call: (c) => c.getPackageAttributes('me', VALID_UUID, 'GetAllAttributes') },
    {
      name: 'an unknown attributes package',
      field: /attributes operation/,
      call: (c) => c.getPackageAttributes(VALID_UUID, VALID_UUID, 'GetEverything' as never),
    },
    { name: 'an unknown NumberOfStatements', field: /NumberOfStatements/, call: (c) => c.getStatements(VALID_UUID, 'Months6' as never) },
    { name: 'a non-UUID LoginId for investments', field: /LoginId/, call: (c) => c.getInvestments('nope', VALID_UUID) },
    { name: 'a non-UUID LoginId to delete', field: /LoginId/, call: (c) => c.deleteCard('nope') },
  ];

  for (const entry of cases) {
    it(`refuses ${entry.name} with a rejected AggregatorRequestError naming the field, sending nothing`, async () => {
      const { client, counter, customerId } = countingClient();
      // The refusal is a rejected promise, never a synchronous throw (callers may chain .catch or Promise.all).
      let pending: Promise<unknown> = Promise.resolve();
      assert.doesNotThrow(() => {
        pending = entry.call(client);
      });
      const error = await caught(pending, AggregatorRequestError);
      assert.match(error.message, entry.field);
      assert.equal(error.retryable, false);
      assert.equal(error.remedy, 'fix-request');
      assert.equal(counter.requests, 0, 'the client sent a request');
      assert.equal(sandbox.state.tenants.has(customerId), false, 'the sandbox saw the tenant');
    });
  }
});

describe('answers that break the contract', () => {
  it('throws a non-retryable UnexpectedResponseError, naming the fields, when what the product acts on is missing', async () => {
    const body = { HttpStatusCode: 200, Accounts: [{ Id: 'x' }] };
    serve(200, body);
    const error = await caught(localClient().getAccountsDetail(VALID_UUID), UnexpectedResponseError);
    assert.equal(error.retryable, false, 'the service answered: asking again gets the same answer');
    assert.equal(error.delivery, 'answered');
    assert.equal(error.httpStatus, 200);
    assert.match(error.message, /GetAccountsDetail answered HTTP 200/);
    assert.match(error.message, /RequestId/);
    assert.match(error.message, /Login/);
    assert.equal(error.replyExcerpt, JSON.stringify(body), 'the body is kept for diagnosis');
  });

  it('keeps a record its view cannot read as sent, with a warning naming the field, and never refuses the answer for it', async () => {
    const login = { Username: 'u', IsScheduledRefresh: false, LastRefresh: '2026-10-31T00:00:00.000', Type: 'Personal', Id: VALID_UUID };
    const transaction = { Id: VALID_UUID, Date: '31.10.2026', Code: null, Description: 'x', Debit: null, Credit: 1, Balance: '1.00', Memo: 'kept' };
    const account = {
      Id: VALID_UUID,
      Title: 'T',
      AccountNumber: '1',
      Category: 'Operations',
      Type: 'Chequing',
      Currency: 'CAD',
      Balance: { Available: 1, Current: 1, Limit: null },
      Transactions: [transaction],
    };
    serve(200, { HttpStatusCode: 200, Accounts: [account], Login: login, RequestId: VALID_UUID });
    const ready = await localClient().getAccountsDetail(VALID_UUID);
    assert.equal(ready.kind, 'ready');
    if (ready.kind !== 'ready') return;
    assert.deepEqual(ready.data.Accounts[0]?.Transactions?.[0], transaction, 'the transaction as the service sent it');
    assert.deepEqual(
      ready.warnings.map((warning) => `${warning.operation} ${warning.path}`),
      ['GetAccountsDetail Accounts[0].Transactions[0].Date', 'GetAccountsDetail Accounts[0].Transactions[0].Balance'],
    );
    assert.ok(
      ready.warnings.every((warning) => !warning.problem.includes('31.10.2026') && !warning.problem.includes('1.00')),
      'a warning never quotes the value',
    );
  });

  it('throws UnexpectedResponseError for a pending answer without a RequestId', async () => {
    serve(202, { HttpStatusCode: 202, ServiceCode: 'OPERATION_PENDING', Message: 'wait' });
    const error = await caught(localClient().getAccountsDetailAsync(VALID_UUID), UnexpectedResponseError);
    assert.equal(error.httpStatus, 202);
    assert.match(error.message, /RequestId/);
  });

  it('throws UnexpectedResponseError for a 203 without SecurityChallenges, and for a challenge from a data endpoint', async () => {
    serve(203, { HttpStatusCode: 203, RequestId: VALID_UUID });
    const error = await caught(localClient().authorizeCached(VALID_UUID), UnexpectedResponseError);
    assert.match(error.message, /SecurityChallenges/);
    serve(203, { HttpStatusCode: 203, RequestId: VALID_UUID, SecurityChallenges: [{ Type: 'QuestionAndAnswer', Prompt: 'Q?' }] });
    await caught(localClient().getAccountsDetail(VALID_UUID), UnexpectedResponseError);
  });

  it('reads a challenge of a type the spec does not name, as it came', async () => {
    const challenge = { Type: 'SmsCode', Prompt: 'Enter the code we sent by SMS', Iterables: null, Hint: 'kept' };
    serve(203, { HttpStatusCode: 203, RequestId: VALID_UUID, SecurityChallenges: [challenge] });
    const result = await localClient().authorizeCached(VALID_UUID);
    assert.equal(result.kind, 'challenge');
    if (result.kind === 'challenge') assert.deepEqual(result.challenges, [challenge]);
  });

  it('throws AggregatorServiceError for an error status whose body is not JSON', async () => {
    serve(502, '<html>Bad gateway</html>');
    const error = await caught(localClient().getAccountsDetail(VALID_UUID), AggregatorServiceError);
    assert.equal(error.httpStatus, 502);
    assert.equal(error.retryable, true);
  });

  it('reads a brand-prefixed FlinksCode as the service code of an error', async () => {
    serve(401, { HttpStatusCode: 401, Message: 'Try later', FlinksCode: 'RETRY_LATER', RequestId: VALID_UUID });
    const error = await caught(localClient().authorizeCached(VALID_UUID), AggregatorServiceError);
    assert.equal(error.serviceCode, 'RETRY_LATER');
    assert.equal(error.retryable, true);
    assert.equal(error.requestId, VALID_UUID);
    assert.match(error.message, /Try later/);

    serve(400, { HttpStatusCode: 400, Message: 'Card busy', FlinksCode: 'CARD_IN_USE' });
    const busy = await caught(localClient().deleteCard(VALID_UUID), AggregatorServiceError);
    assert.equal(busy.serviceCode, 'CARD_IN_USE');
    assert.equal(busy.retryable, true);
  });

  it('reads a brand-prefixed FlinksCode in a pending answer', async () => {
    serve(202, { HttpStatusCode: 202, FlinksCode: 'OPERATION_DISPATCHED', Message: 'dispatched', RequestId: VALID_UUID, Links: [] });
    const result = await localClient().getAccountsDetailAsync(VALID_UUID);
    assert.deepEqual(result, { kind: 'pending', requestId: VALID_UUID, code: 'OPERATION_DISPATCHED', message: 'dispatched' });
  });

  it('treats an unknown code with a 4xx as not retryable and with a 5xx as retryable', async () => {
    serve(400, { HttpStatusCode: 400, Message: 'odd', FlinksCode: 'SOMETHING_NEW' });
    const client = localClient();
    const odd = await caught(client.getAccountsDetail(VALID_UUID), AggregatorServiceError);
    assert.equal(odd.serviceCode, 'SOMETHING_NEW');
    assert.equal(odd.retryable, false);
    serve(503, { HttpStatusCode: 503, Message: 'busy', FlinksCode: 'SOMETHING_NEW' });
    assert.equal((await caught(client.getAccountsDetail(VALID_UUID), AggregatorServiceError)).retryable, true);
  });

  it('sends the configured auth header to any base URL and strips a trailing slash from it', async () => {
    const seen: { url: string; key: string | undefined }[] = [];
    handler = (request, response) => {
      seen.push({ url: request.url ?? '', key: request.headers['x-token'] as string | undefined });
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ HttpStatusCode: 200, Message: 'deleted', LoginId: VALID_UUID }));
    };
    const client = createAggregatorClient({ baseUrl: `${localUrl}/`, customerId: 'cust 1', auth: { header: 'x-token', value: 't0k' } });
    await client.deleteCard(VALID_UUID);
    assert.deepEqual(seen, [{ url: `/v3/cust%201/BankingServices/DeleteCard/${VALID_UUID}`, key: 't0k' }]);
  });
});
