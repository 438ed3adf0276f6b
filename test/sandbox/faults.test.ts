import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { createAggregatorClient } from '../../src/aggregator/client.js';
import { UnexpectedResponseError } from '../../src/aggregator/errors.js';
import { AccountsDetailResponse, AuthorizeResponse, ErrorResponse, PendingResponse } from '../../src/aggregator/schemas.js';
import { FAULT_HEADER, UNUSABLE_BODY, UNUSABLE_REPLY_MARKERS } from '../../sandbox/faults.js';
import { MAX_BODY_BYTES } from '../../sandbox/http.js';
import { createSandbox, type Sandbox } from '../../sandbox/server.js';
import { assertError, cachedSession, clientFor, freshTenant, parsesWith, type Call } from './helpers.js';

let sandbox: Sandbox;
let call: Call;
before(async () => {
  sandbox = await createSandbox();
  call = clientFor(sandbox);
});
after(async () => sandbox.close());

const detail = (tenant: string) => `/v3/${tenant}/BankingServices/GetAccountsDetail`;

/** An `unusable` answer: accounts detail with the markers in its holder and transactions, and no RequestId. */
function assertUnusable(body: unknown): void {
  const answer = body as {
    HttpStatusCode?: unknown;
    RequestId?: unknown;
    Accounts?: { Holder?: { Name?: unknown; Email?: unknown }; Transactions?: { Description?: unknown }[] }[];
  };
  assert.equal(answer.HttpStatusCode, 200);
  assert.equal(Object.hasOwn(answer, 'RequestId'), false, 'no RequestId');
  const [account] = answer.Accounts ?? [];
  assert.equal(account?.Holder?.Name, UNUSABLE_REPLY_MARKERS.holderName);
  assert.equal(account.Holder.Email, UNUSABLE_REPLY_MARKERS.email);
  assert.equal(account.Transactions?.[0]?.Description, UNUSABLE_REPLY_MARKERS.transactionDescription);
  assert.equal(AccountsDetailResponse.safeParse(body).success, false, 'the contract refuses it');
}

describe('fault injection by header', () => {
  it('delays the answer by latency=<ms> and answers normally', async () => {
    const tenant = freshTenant();
    const { requestId } = await cachedSession(call, tenant, 'no_mfa');
    const started = performance.now();
    const answer = await call('POST', detail(tenant), { RequestId: requestId }, { [FAULT_HEADER]: 'latency=150' });
    assert.ok(performance.now() - started >= 140);
    parsesWith(PendingResponse, answer.body);
  });

  it('answers status=<code> without touching the session', async () => {
    const tenant = freshTenant();
    const { requestId } = await cachedSession(call, tenant, 'pending_polls_1');
    assertError(await call('POST', detail(tenant), { RequestId: requestId }, { [FAULT_HEADER]: 'status=503' }), 503);
    assert.equal((await call('POST', detail(tenant), { RequestId: requestId })).status, 202);
  });

  it('destroys the socket on reset', async () => {
    const tenant = freshTenant();
    await assert.rejects(call('POST', detail(tenant), { RequestId: '00000000-0000-4000-8000-000000000000' }, { [FAULT_HEADER]: 'reset' }));
  });

  it('answers TOO_MANY_REQUESTS with Retry-After on rate-limit', async () => {
    const answer = await call('POST', detail(freshTenant()), {}, { [FAULT_HEADER]: 'rate-limit' });
    assertError(answer, 429, 'TOO_MANY_REQUESTS');
    assert.equal(answer.headers.get('retry-after'), '1');
    assertError(await call('POST', detail(freshTenant()), {}, { [FAULT_HEADER]: 'rate-limit=403' }), 403, 'TOO_MANY_REQUESTS');
  });

  it('answers a truncated JSON body on malformed', async () => {
    const answer = await call('POST', detail(freshTenant()), {}, { [FAULT_HEADER]: 'malformed' });
    assert.equal(answer.status, 200);
    assert.equal(answer.body, undefined);
    assert.throws(() => JSON.parse(answer.text) as unknown);
  });

  it("answers a 200 echoing an applicant's data without RequestId on unusable, without touching the session", async () => {
    const tenant = freshTenant();
    const { requestId } = await cachedSession(call, tenant, 'pending_polls_1');
    const answer = await call('POST', detail(tenant), { RequestId: requestId }, { [FAULT_HEADER]: 'unusable' });
    assert.equal(answer.status, 200);
    assert.equal(answer.text, UNUSABLE_BODY);
    assertUnusable(answer.body);
    assert.equal((await call('POST', detail(tenant), { RequestId: requestId })).status, 202, 'the operation was not started by the faulted request');
  });

  it('refuses an unknown directive with INVALID_REQUEST', async () => {
    assertError(await call('POST', detail(freshTenant()), {}, { [FAULT_HEADER]: 'explode' }), 400, 'INVALID_REQUEST');
  });
});

describe('fault injection by scenario', () => {
  it('answers 503 twice for flaky_503, then behaves normally', async () => {
    const tenant = freshTenant();
    const { requestId } = await cachedSession(call, tenant, 'flaky_503', 0);
    assertError(await call('POST', detail(tenant), { RequestId: requestId }), 503);
    assertError(await call('POST', detail(tenant), { RequestId: requestId }), 503);
    parsesWith(AccountsDetailResponse, (await call('POST', detail(tenant), { RequestId: requestId })).body);
  });

  it('resets the connection twice for flaky_reset, then behaves normally', async () => {
    const tenant = freshTenant();
    const { requestId } = await cachedSession(call, tenant, 'flaky_reset', 0);
    await assert.rejects(call('POST', detail(tenant), { RequestId: requestId }));
    await assert.rejects(call('POST', detail(tenant), { RequestId: requestId }));
    assert.equal((await call('POST', detail(tenant), { RequestId: requestId })).status, 200);
  });

  it('rate-limits twice for rate_limited and garbles once for flaky_malformed', async () => {
    const tenant = freshTenant();
    const limited = await cachedSession(call, tenant, 'rate_limited', 0);
    assertError(await call('POST', detail(tenant), { RequestId: limited.requestId }), 429, 'TOO_MANY_REQUESTS');
    assertError(await call('POST', detail(tenant), { RequestId: limited.requestId }), 429, 'TOO_MANY_REQUESTS');
    assert.equal((await call('POST', detail(tenant), { RequestId: limited.requestId })).status, 200);
    const garbled = await cachedSession(call, tenant, 'flaky_malformed', 0);
    assert.equal((await call('POST', detail(tenant), { RequestId: garbled.requestId })).body, undefined);
    assert.equal((await call('POST', detail(tenant), { RequestId: garbled.requestId })).status, 200);
  });
});

describe('unusable_reply', () => {
  it('answers every data request of its sessions with the unusable body, and the product refuses it as UnexpectedResponse, its values kept out of the message', async () => {
    const tenant = freshTenant();
    const { requestId } = await cachedSession(call, tenant, 'unusable_reply', 0);
    const requests: [string, string][] = [
      ['POST', detail(tenant)],
      ['GET', `/v3/${tenant}/BankingServices/GetAccountsDetailAsync/${requestId}`],
      ['POST', `/v3/${tenant}/BankingServices/GetAccountsSummary`],
      ['POST', detail(tenant)],
    ];
    for (const [method, path] of requests) {
      const answer = await call(method, path, method === 'POST' ? { RequestId: requestId } : undefined);
      assert.equal(answer.status, 200, `${method} ${path}: ${answer.text.slice(0, 200)}`);
      assertUnusable(answer.body);
    }
    const client = createAggregatorClient({ baseUrl: sandbox.url, customerId: tenant });
    const error = await client.getAccountsDetail(requestId).then(
      () => assert.fail('the unusable answer was accepted'),
      (caught: unknown) => caught,
    );
    assert.ok(error instanceof UnexpectedResponseError, String(error));
    assert.match(error.message, /^GetAccountsDetail answered HTTP 200 with a body the product cannot act on: .*RequestId/);
    assert.equal(error.replyExcerpt, UNUSABLE_BODY, 'the whole body is kept for diagnosis (it is under 4 KiB)');
    for (const marker of Object.values(UNUSABLE_REPLY_MARKERS)) assert.ok(!error.message.includes(marker), `${marker} in the message`);
  });
});

describe('routing and calling-application auth', () => {
  it('answers 404 with an error body for an unknown path and 405 for a wrong method', async () => {
    const missing = await call('GET', '/v3/demo-lender/BankingServices/Nothing');
    assert.equal(missing.status, 404);
    parsesWith(ErrorResponse, missing.body);
    const wrong = await call('GET', '/v3/demo-lender/BankingServices/Authorize');
    assert.equal(wrong.status, 405);
    assert.equal(wrong.headers.get('allow'), 'POST');
    parsesWith(ErrorResponse, wrong.body);
  });

  it('answers ACCESS_DENIED without the configured secret header', async () => {
    const guarded = await createSandbox({ authSecret: 's3cret' });
    try {
      const guardedCall = clientFor(guarded);
      const body = { Institution: 'SandboxBank', Username: 'no_mfa', Password: 'Everyday', MostRecentCached: false };
      assertError(await guardedCall('POST', '/v3/demo-lender/BankingServices/Authorize', body), 401, 'ACCESS_DENIED');
      assertError(await guardedCall('POST', '/v3/demo-lender/BankingServices/Authorize', body, { 'x-api-key': 'wrong' }), 401, 'ACCESS_DENIED');
      const ok = await guardedCall('POST', '/v3/demo-lender/BankingServices/Authorize', body, { 'x-api-key': 's3cret' });
      parsesWith(AuthorizeResponse, ok.body);
    } finally {
      await guarded.close();
    }
  });
});

/**
 * Sends a POST over a raw socket, the whole body at once without reading meanwhile (as a simple
 * client does), and resolves with everything received once the server closes the connection.
 */
function postRaw(port: number, path: string, body: Buffer, framing: 'content-length' | 'chunked'): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let received = '';
    socket.on('data', (chunk: Buffer) => (received += chunk.toString('utf8')));
    // Writing into a connection the server closed fails (EPIPE/ECONNRESET): expected here.
    socket.on('error', () => undefined);
    socket.on('close', () => resolve(received));
    const length = framing === 'content-length' ? `Content-Length: ${body.length}` : 'Transfer-Encoding: chunked';
    socket.write(`POST ${path} HTTP/1.1\r\nHost: sandbox\r\nContent-Type: application/json\r\n${length}\r\n\r\n`);
    if (framing === 'content-length') socket.end(body);
    else socket.end(Buffer.concat([Buffer.from(`${body.length.toString(16)}\r\n`), body, Buffer.from('\r\n0\r\n\r\n')]));
  });
}

describe('request size limit', () => {
  // Without Connection: close the server stopped reading and kept the socket: the sender blocked
  // until the 30 s keep-alive timeout. The test timeout bounds the wait for the close.
  for (const framing of ['content-length', 'chunked'] as const) {
    it(`answers a 5 MB body (${framing}) with 413 REQUEST_TOO_LARGE and Connection: close, then closes the connection`, { timeout: 10_000 }, async () => {
      const received = await postRaw(sandbox.port, `/v3/${freshTenant()}/BankingServices/Authorize`, Buffer.alloc(5 * 1024 * 1024, 'a'), framing);
      const [head = '', text = ''] = received.split('\r\n\r\n', 2);
      assert.match(head, /^HTTP\/1\.1 413 /);
      assert.match(head, /\r\nconnection: close\r\n/i);
      const answer = { status: 413, body: JSON.parse(text) as unknown, text, headers: new Headers() };
      assertError(answer, 413, 'REQUEST_TOO_LARGE');
      assert.match(text, new RegExp(`${MAX_BODY_BYTES} bytes`));
      // The server is not stuck: a request on a fresh connection is answered.
      assert.equal((await call('GET', '/sandbox/health')).status, 200);
    });
  }
});
