/**
 * Slow replies (slow_answer, slow_authorize and their `_<n>` forms): the Authorize is processed only
 * after the sandbox's slowReplyMs, whether or not its caller still waits. Asserted by order and by
 * at-least times, never by an upper bound on the wall clock.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AuthorizeResponse } from '../../src/aggregator/schemas.js';
import { DEFAULT_OPTIONS } from '../../sandbox/options.js';
import { createSandbox, type Sandbox } from '../../sandbox/server.js';
import { assertError, clientFor, freshTenant, listing, parsesWith, waitUntil, type Answer, type Call } from './helpers.js';

/** Long enough for a client timeout well inside it, short enough for a test. */
const SLOW_MS = 600;
const ANSWER = { 'What city were you born in?': ['Montreal'] };

let sandbox: Sandbox;
let call: Call;
before(async () => {
  sandbox = await createSandbox({ slowReplyMs: SLOW_MS });
  call = clientFor(sandbox);
});
after(async () => sandbox.close());

const bank = (tenant: string, op: string) => `/v3/${tenant}/BankingServices/${op}`;
const credentials = (username: string) => ({ Institution: 'SandboxBank', Username: username, Password: 'Everyday', MostRecentCached: false, Save: true });

/** A live Authorize of `username` that answered its challenge round (not yet answered). */
async function challenged(tenant: string, username: string): Promise<string> {
  const answer = await call('POST', bank(tenant, 'Authorize'), credentials(username));
  assert.equal(answer.status, 203, answer.text);
  return parsesWith(AuthorizeResponse, answer.body).RequestId;
}

/** `ask` timed: its answer and how long it took (ms). */
async function timed(ask: () => Promise<Answer>): Promise<{ answer: Answer; ms: number }> {
  const started = performance.now();
  const answer = await ask();
  return { answer, ms: performance.now() - started };
}

/** Settles in the order the promises do: the labels, first settled first. */
async function settleOrder(entries: Record<string, Promise<unknown>>): Promise<string[]> {
  const order: string[] = [];
  await Promise.all(Object.entries(entries).map(([label, promise]) => promise.then(() => order.push(label))));
  return order;
}

describe('slow replies', () => {
  it("lists slowReplyMs in the limits: 75 s by default, past the client's 60 s timeout, and as configured here", async () => {
    assert.equal(DEFAULT_OPTIONS.slowReplyMs, 75_000);
    const defaults = await createSandbox();
    try {
      const body = (await clientFor(defaults)('GET', '/sandbox/scenarios')).body as { limits: { slowReplyMs: number } };
      assert.equal(body.limits.slowReplyMs, 75_000);
    } finally {
      await defaults.close();
    }
    const here = (await call('GET', '/sandbox/scenarios')).body as { limits: { slowReplyMs: number } };
    assert.equal(here.limits.slowReplyMs, SLOW_MS);
    const { scenarios } = await listing(call);
    assert.deepEqual(scenarios.find((s) => s.username === 'slow_answer')?.challengeSequence[0]?.answer, ANSWER);
  });

  it('answers a slow_answer answer only after slowReplyMs, with the session open', async () => {
    const tenant = freshTenant();
    const requestId = await challenged(tenant, 'slow_answer');
    const { answer, ms } = await timed(() => call('POST', bank(tenant, 'Authorize'), { RequestId: requestId, SecurityResponses: ANSWER }));
    assert.ok(ms >= SLOW_MS - 5, `answered after ${ms} ms`);
    assert.equal(answer.status, 200, answer.text);
    assert.equal(parsesWith(AuthorizeResponse, answer.body).RequestId, requestId);
    assert.equal((await call('POST', bank(tenant, 'GetAccountsDetail'), { RequestId: requestId })).status, 202);
  });

  it('accepts a slow answer whose caller gave up: the round stays pending until the delay ends, then the session is open', async () => {
    const tenant = freshTenant();
    const requestId = await challenged(tenant, 'slow_answer');
    const sent = performance.now();
    const gaveUp = fetch(`${sandbox.url}${bank(tenant, 'Authorize')}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ RequestId: requestId, SecurityResponses: ANSWER }),
      signal: AbortSignal.timeout(SLOW_MS / 6),
    });
    await assert.rejects(gaveUp, { name: 'TimeoutError' });
    const early = await call('POST', bank(tenant, 'GetAccountsDetail'), { RequestId: requestId });
    // Only meaningful if it was answered before the delay could end (a slow machine may be later).
    if (performance.now() - sent < SLOW_MS - 50) assertError(early, 400, 'INVALID_REQUEST');
    await waitUntil(
      async () => (await call('POST', bank(tenant, 'GetAccountsDetail'), { RequestId: requestId })).status === 202,
      'the abandoned answer to open the session',
      10_000,
    );
    assert.ok(performance.now() - sent >= SLOW_MS - 5);
    // It reached the service once, when it arrived.
    const counts = sandbox.authorizeSubmissions(tenant);
    assert.equal(counts.answers, 1);
    assert.deepEqual(counts.duplicates, []);
  });

  it('slows only the first n answers of slow_answer_<n>: a later answer on a new session is answered before it', async () => {
    const tenant = freshTenant();
    const first = await challenged(tenant, 'slow_answer_1');
    const second = await challenged(tenant, 'slow_answer_1');
    const slow = call('POST', bank(tenant, 'Authorize'), { RequestId: first, SecurityResponses: ANSWER });
    // The first answer to arrive is the one counted first.
    await waitUntil(() => Promise.resolve(sandbox.authorizeSubmissions(tenant).answers === 1), 'the first answer to arrive');
    const quick = call('POST', bank(tenant, 'Authorize'), { RequestId: second, SecurityResponses: ANSWER });
    assert.deepEqual(await settleOrder({ slow, quick }), ['quick', 'slow']);
    assert.equal((await slow).status, 200);
    assert.equal((await quick).status, 200);
  });

  it('answers a slow_authorize live Authorize only after slowReplyMs, with the session open', async () => {
    const tenant = freshTenant();
    const { answer, ms } = await timed(() => call('POST', bank(tenant, 'Authorize'), credentials('slow_authorize')));
    assert.ok(ms >= SLOW_MS - 5, `answered after ${ms} ms`);
    assert.equal(answer.status, 200, answer.text);
    assert.equal(parsesWith(AuthorizeResponse, answer.body).Login?.Username, 'slow_authorize');
  });

  it('slows only the first live Authorize of slow_authorize_1: the next is answered before it', async () => {
    const tenant = freshTenant();
    const slow = call('POST', bank(tenant, 'Authorize'), credentials('slow_authorize_1'));
    // The first to arrive is the one counted first: the second is sent once it has.
    await waitUntil(() => Promise.resolve(sandbox.authorizeSubmissions(tenant).credentials === 1), 'the first Authorize to arrive');
    const quick = call('POST', bank(tenant, 'Authorize'), credentials('slow_authorize_1'));
    assert.deepEqual(await settleOrder({ slow, quick }), ['quick', 'slow']);
    assert.equal((await slow).status, 200);
    assert.equal((await quick).status, 200);
  });

  it('keeps a cached Authorize of a slow_authorize login at its usual pace: answered before a slow live one', async () => {
    const tenant = freshTenant();
    const created = await call('POST', `/sandbox/${tenant}/logins`, { username: 'slow_authorize', pendingPolls: 0 });
    const { LoginId } = created.body as { LoginId: string };
    const slow = call('POST', bank(tenant, 'Authorize'), credentials('slow_authorize'));
    await waitUntil(() => Promise.resolve(sandbox.authorizeSubmissions(tenant).credentials === 1), 'the live Authorize to arrive');
    const cached = call('POST', bank(tenant, 'Authorize'), { LoginId, MostRecentCached: true });
    assert.deepEqual(await settleOrder({ slow, cached }), ['cached', 'slow']);
  });
});
