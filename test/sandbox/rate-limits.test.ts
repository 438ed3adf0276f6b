/**
 * The per-tenant request limit: 429 TOO_MANY_REQUESTS with Retry-After, nothing changed by a refused
 * request, limits set and cleared at run time, and the per-second counts. Every sandbox here runs on
 * a fake clock, so "the same second" and "the next second" are set, never waited for.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AuthorizeResponse, ErrorResponse } from '../../src/aggregator/schemas.js';
import { ConfigError } from '../../src/settings/load.js';
import { loadSandboxConfig } from '../../sandbox/settings.js';
import { FAULT_HEADER } from '../../sandbox/faults.js';
import type { RateLimitSettings, RequestRates } from '../../sandbox/rate-limits.js';
import { createSandbox, type Sandbox } from '../../sandbox/server.js';
import { assertError, cachedSession, clientFor, freshTenant, listing, parsesWith, type Call } from './helpers.js';

/** 10:00:00.250 on a fixed day: a quarter into a whole second. */
const START = Date.parse('2026-11-02T10:00:00.250Z');
const START_SECOND = Math.floor(START / 1000);

let clock = START;
let sandbox: Sandbox;
let call: Call;
before(async () => {
  sandbox = await createSandbox({ now: () => clock });
  call = clientFor(sandbox);
});
after(async () => sandbox.close());

const authorizePath = (tenant: string) => `/v3/${tenant}/BankingServices/Authorize`;
const detailPath = (tenant: string) => `/v3/${tenant}/BankingServices/GetAccountsDetail`;
const asyncPath = (tenant: string, requestId: string) => `/v3/${tenant}/BankingServices/GetAccountsDetailAsync/${requestId}`;
/** A cheap /v3 request: 400 SESSION_NONEXISTENT when admitted, 429 when refused. */
const probe = (tenant: string) => call('POST', detailPath(tenant), { RequestId: '00000000-0000-4000-8000-000000000000' });

async function setLimits(body: unknown): Promise<RateLimitSettings> {
  const answer = await call('POST', '/sandbox/rate-limits', body);
  assert.equal(answer.status, 200, answer.text);
  return answer.body as RateLimitSettings;
}

async function rates(query = ''): Promise<RequestRates> {
  const answer = await call('GET', `/sandbox/request-rates${query}`);
  assert.equal(answer.status, 200, answer.text);
  return answer.body as RequestRates;
}

/** Moves the fake clock to `offsetMs` after the start of whole second START_SECOND + `seconds`. */
function atSecond(seconds: number, offsetMs = 250): void {
  clock = (START_SECOND + seconds) * 1000 + offsetMs;
}

describe('per-tenant request limit', () => {
  it('answers 429 TOO_MANY_REQUESTS with Retry-After and the error body once a second used its limit', async () => {
    atSecond(0);
    const tenant = freshTenant('rl');
    await setLimits({ tenants: { [tenant]: 2 } });
    assertError(await probe(tenant), 400, 'SESSION_NONEXISTENT');
    assertError(await probe(tenant), 400, 'SESSION_NONEXISTENT');
    clock += 700; // 950 ms into the same second
    const refused = await probe(tenant);
    assertError(refused, 429, 'TOO_MANY_REQUESTS');
    assert.equal(refused.headers.get('retry-after'), '1');
    const body = parsesWith(ErrorResponse, refused.body);
    assert.equal(body.HttpStatusCode, 429);
    assert.match(body.Message ?? '', /limit is 2 per second/);
    // Another tenant has its own (here: no) limit.
    assertError(await probe(freshTenant('rl')), 400, 'SESSION_NONEXISTENT');
    // The next whole second has room again.
    atSecond(1, 0);
    assertError(await probe(tenant), 400, 'SESSION_NONEXISTENT');
  });

  it('refuses before faults are injected, and says the configured Retry-After when longer', async () => {
    atSecond(10);
    const tenant = freshTenant('rl');
    await setLimits({ tenants: { [tenant]: 1 }, retryAfterSeconds: 30 });
    try {
      assertError(await probe(tenant), 400, 'SESSION_NONEXISTENT');
      const refused = await call('POST', detailPath(tenant), {}, { [FAULT_HEADER]: 'reset' });
      assertError(refused, 429, 'TOO_MANY_REQUESTS');
      assert.equal(refused.headers.get('retry-after'), '30');
    } finally {
      await setLimits({ retryAfterSeconds: null });
    }
  });

  it('leaves a challenge pending and counts no answer when the answering Authorize is refused', async () => {
    atSecond(20);
    const tenant = freshTenant('rl');
    await setLimits({ tenants: { [tenant]: 1 } });
    const scenario = (await listing(call)).scenarios.find((s) => s.username === 'security_question');
    assert.ok(scenario);
    const first = await call('POST', authorizePath(tenant), {
      Institution: scenario.institution,
      Username: scenario.username,
      Password: scenario.password,
      MostRecentCached: false,
    });
    assert.equal(first.status, 203, first.text);
    const { RequestId } = parsesWith(AuthorizeResponse, first.body);
    const session = sandbox.state.tenants.get(tenant)?.sessions.get(RequestId);
    assert.ok(session);
    const before = {
      phase: session.phase,
      stepIndex: session.stepIndex,
      lastSeenAt: session.lastSeenAt,
      sessions: sandbox.state.tenants.get(tenant)?.sessions.size,
    };

    clock += 500;
    const answer = { RequestId, SecurityResponses: scenario.challengeSequence[0]?.answer };
    assertError(await call('POST', authorizePath(tenant), answer), 429, 'TOO_MANY_REQUESTS');
    assert.deepEqual(
      { phase: session.phase, stepIndex: session.stepIndex, lastSeenAt: session.lastSeenAt, sessions: sandbox.state.tenants.get(tenant)?.sessions.size },
      before,
    );
    assert.deepEqual(sandbox.authorizeSubmissions(tenant), { answers: 0, credentials: 1, duplicates: [] });

    // The same answer, sent again once the window has room, is the first the sandbox sees.
    atSecond(21);
    const done = await call('POST', authorizePath(tenant), answer);
    assert.equal(done.status, 200, done.text);
    assert.deepEqual(sandbox.authorizeSubmissions(tenant), { answers: 1, credentials: 1, duplicates: [] });
  });

  it('opens no session on a refused cached Authorize and advances no operation on a refused data request', async () => {
    atSecond(30);
    const tenant = freshTenant('rl');
    const { loginId, requestId } = await cachedSession(call, tenant, 'no_mfa', 1);
    await setLimits({ tenants: { [tenant]: 1 } });
    const sessions = () => sandbox.state.tenants.get(tenant)?.sessions.size;
    const before = sessions();
    assertError(await call('POST', authorizePath(tenant), { LoginId: loginId, MostRecentCached: true }), 429, 'TOO_MANY_REQUESTS'); // cachedSession's Authorize used the second
    assert.equal(sessions(), before);

    atSecond(31);
    assert.equal((await call('POST', detailPath(tenant), { RequestId: requestId })).status, 202);
    const session = sandbox.state.tenants.get(tenant)?.sessions.get(requestId);
    const operation = session?.operations.get('accounts');
    assert.ok(session && operation);
    const seen = { answers: operation.answers, done: operation.done, lastSeenAt: session.lastSeenAt, dataRequests: session.dataRequests };
    clock += 100;
    assertError(await call('GET', asyncPath(tenant, requestId)), 429, 'TOO_MANY_REQUESTS');
    assert.deepEqual({ answers: operation.answers, done: operation.done, lastSeenAt: session.lastSeenAt, dataRequests: session.dataRequests }, seen);

    // pendingPolls 1: the refused poll did not count, so the next admitted one is the one that delivers.
    atSecond(32);
    assert.equal((await call('GET', asyncPath(tenant, requestId))).status, 200);
    assert.equal(operation.answers, 2);
  });

  it('applies limits changed at run time to the next request, default and per tenant, and clears them', async () => {
    clock = START;
    const local = await createSandbox({ now: () => clock, rateLimitPerSecond: 1 });
    try {
      const localCall = clientFor(local);
      const tenant = freshTenant('rl');
      const localProbe = () => localCall('POST', detailPath(tenant), { RequestId: '00000000-0000-4000-8000-000000000000' });
      const post = async (body: unknown) => {
        const answer = await localCall('POST', '/sandbox/rate-limits', body);
        assert.equal(answer.status, 200, answer.text);
        return answer.body as RateLimitSettings;
      };
      assert.deepEqual((await localCall('GET', '/sandbox/rate-limits')).body, {
        mode: 'window',
        burst: null,
        defaultPerSecond: 1,
        tenants: {},
        retryAfterSeconds: null,
        windowMs: 1000,
      });
      assert.equal(((await listing(localCall)) as unknown as { rateLimit: { initialDefaultPerSecond: number } }).rateLimit.initialDefaultPerSecond, 1);

      assertError(await localProbe(), 400, 'SESSION_NONEXISTENT');
      assertError(await localProbe(), 429, 'TOO_MANY_REQUESTS');
      // Raised within the same second: judged against the one already accepted in it.
      assert.equal((await post({ defaultPerSecond: 3 })).defaultPerSecond, 3);
      assertError(await localProbe(), 400, 'SESSION_NONEXISTENT');
      assertError(await localProbe(), 400, 'SESSION_NONEXISTENT');
      assertError(await localProbe(), 429, 'TOO_MANY_REQUESTS');

      // A tenant's own limit replaces the default; null takes it away again.
      clock += 1000;
      assert.deepEqual((await post({ tenants: { [tenant]: 1 } })).tenants, { [tenant]: 1 });
      assertError(await localProbe(), 400, 'SESSION_NONEXISTENT');
      assertError(await localProbe(), 429, 'TOO_MANY_REQUESTS');
      assert.deepEqual(await post({ tenants: { [tenant]: null } }), {
        mode: 'window',
        burst: null,
        defaultPerSecond: 3,
        tenants: {},
        retryAfterSeconds: null,
        windowMs: 1000,
      });
      assertError(await localProbe(), 400, 'SESSION_NONEXISTENT');

      // No default: unlimited.
      assert.equal((await post({ defaultPerSecond: null })).defaultPerSecond, null);
      for (let i = 0; i < 20; i++) assertError(await localProbe(), 400, 'SESSION_NONEXISTENT');
      const counted = local.requestRates(tenant).tenants[tenant];
      assert.equal(counted?.limitPerSecond, null);
      assert.deepEqual(counted?.perSecond, [
        { second: START_SECOND, accepted: 3, refused: 2 },
        { second: START_SECOND + 1, accepted: 22, refused: 1 },
      ]);
    } finally {
      await local.close();
    }
  });

  it('counts accepted and refused requests per whole second per tenant, over the seconds asked for', async () => {
    atSecond(100);
    const tenant = freshTenant('rl');
    const other = freshTenant('rl');
    await setLimits({ tenants: { [tenant]: 2 } });
    for (let i = 0; i < 3; i++) await probe(tenant); // 2 accepted, 1 refused
    await probe(other);
    atSecond(100, 999); // the last millisecond of the same second
    await probe(tenant); // refused
    atSecond(101, 0);
    await probe(tenant);
    atSecond(106);
    for (let i = 0; i < 4; i++) await probe(tenant); // 2 accepted, 2 refused

    const all = await rates();
    assert.equal(all.windowMs, 1000);
    assert.equal(all.now, clock);
    assert.equal(all.currentSecond, START_SECOND + 106);
    assert.equal(all.seconds, 600);
    assert.deepEqual(all.tenants[tenant], {
      limitPerSecond: 2,
      accepted: 5,
      refused: 4,
      maxAcceptedPerSecond: 2,
      maxRefusedPerSecond: 2,
      maxRequestsPerSecond: 4,
      perSecond: [
        { second: START_SECOND + 100, accepted: 2, refused: 2 },
        { second: START_SECOND + 101, accepted: 1, refused: 0 },
        { second: START_SECOND + 106, accepted: 2, refused: 2 },
      ],
    });
    assert.deepEqual(all.tenants[other]?.perSecond, [{ second: START_SECOND + 100, accepted: 1, refused: 0 }]);
    assert.equal(all.tenants[other]?.limitPerSecond, null);

    // One tenant, the last 6 seconds (101..106); the in-process reader answers the same.
    const recent = await rates(`?customerId=${tenant}&seconds=6`);
    assert.deepEqual(Object.keys(recent.tenants), [tenant]);
    assert.deepEqual(
      recent.tenants[tenant]?.perSecond.map((count) => count.second),
      [START_SECOND + 101, START_SECOND + 106],
    );
    assert.deepEqual(sandbox.requestRates(tenant, 6), recent);
    // A tenant without requests reads as zeros.
    const quiet = freshTenant('rl');
    assert.deepEqual((await rates(`?customerId=${quiet}`)).tenants[quiet], {
      limitPerSecond: null,
      accepted: 0,
      refused: 0,
      maxAcceptedPerSecond: 0,
      maxRefusedPerSecond: 0,
      maxRequestsPerSecond: 0,
      perSecond: [],
    });

    // Counts older than 600 seconds are gone; a tenant reset forgets its counts but keeps its limit.
    atSecond(100 + 600);
    await probe(tenant);
    assert.deepEqual(
      (await rates(`?customerId=${tenant}`)).tenants[tenant]?.perSecond.map((count) => count.second),
      [START_SECOND + 101, START_SECOND + 106, START_SECOND + 700],
    );
    assert.equal((await call('DELETE', `/sandbox/${tenant}`)).status, 200);
    assert.deepEqual((await rates(`?customerId=${tenant}`)).tenants[tenant]?.perSecond, []);
    assert.equal((await rates(`?customerId=${tenant}`)).tenants[tenant]?.limitPerSecond, 2);
  });

  it('takes a token bucket: a burst at once, then the rate, refusing what overflows it, whatever the whole seconds', async () => {
    clock = START;
    const local = await createSandbox({ now: () => clock });
    try {
      const localCall = clientFor(local);
      const tenant = freshTenant('rl');
      const localProbe = () => localCall('POST', detailPath(tenant), { RequestId: '00000000-0000-4000-8000-000000000000' });
      const post = async (body: unknown) => {
        const answer = await localCall('POST', '/sandbox/rate-limits', body);
        assert.equal(answer.status, 200, answer.text);
        return answer.body as RateLimitSettings;
      };
      // 4 a second holding one second's worth (burst null): 4 at once, then one every 250 ms.
      assert.deepEqual(await post({ mode: 'bucket', tenants: { [tenant]: 4 } }), {
        mode: 'bucket',
        burst: null,
        defaultPerSecond: null,
        tenants: { [tenant]: 4 },
        retryAfterSeconds: null,
        windowMs: 1000,
      });
      for (let i = 0; i < 4; i++) assertError(await localProbe(), 400, 'SESSION_NONEXISTENT');
      const refused = await localProbe();
      assertError(refused, 429, 'TOO_MANY_REQUESTS');
      assert.equal(refused.headers.get('retry-after'), '1');
      clock += 249;
      assertError(await localProbe(), 429, 'TOO_MANY_REQUESTS');
      clock += 1; // 250 ms after the burst: one token
      assertError(await localProbe(), 400, 'SESSION_NONEXISTENT');
      assertError(await localProbe(), 429, 'TOO_MANY_REQUESTS');
      // Across the whole second's end (START is 250 ms into one): no new room but the refill.
      clock = (START_SECOND + 1) * 1000 + 1;
      assertError(await localProbe(), 400, 'SESSION_NONEXISTENT');
      assertError(await localProbe(), 400, 'SESSION_NONEXISTENT');
      assertError(await localProbe(), 429, 'TOO_MANY_REQUESTS');

      // A burst larger than the rate: 8 at once at 4 a second; a change fills the bucket again.
      assert.equal((await post({ burst: 8 })).burst, 8);
      for (let i = 0; i < 8; i++) assertError(await localProbe(), 400, 'SESSION_NONEXISTENT');
      assertError(await localProbe(), 429, 'TOO_MANY_REQUESTS');
      clock += 2000; // 8 tokens again, no more
      for (let i = 0; i < 8; i++) assertError(await localProbe(), 400, 'SESSION_NONEXISTENT');
      assertError(await localProbe(), 429, 'TOO_MANY_REQUESTS');

      const counted = local.requestRates(tenant).tenants[tenant];
      assert.equal(counted?.accepted, 4 + 1 + 2 + 8 + 8);
      assert.equal(counted?.refused, 3 + 1 + 1 + 1);
      // Back to whole seconds.
      assert.deepEqual(await post({ mode: 'window', burst: null }), {
        mode: 'window',
        burst: null,
        defaultPerSecond: null,
        tenants: { [tenant]: 4 },
        retryAfterSeconds: null,
        windowMs: 1000,
      });
    } finally {
      await local.close();
    }
  });

  it('refuses a bad admin request with 400 INVALID_REQUEST naming the field', async () => {
    const cases: [unknown, RegExp][] = [
      [{ defaultPerSecond: 0 }, /defaultPerSecond/],
      [{ defaultPerSecond: 1.5 }, /defaultPerSecond/],
      [{ defaultPerSecond: '5' }, /defaultPerSecond/],
      [{ tenants: { 'not a customer id!': 1 } }, /tenants/],
      [{ tenants: { ok: -1 } }, /tenants\.ok/],
      [{ tenants: [1] }, /tenants/],
      [{ retryAfterSeconds: 3601 }, /retryAfterSeconds/],
      [{ perSecond: 5 }, /perSecond/],
      [{ mode: 'sliding' }, /mode/],
      [{ burst: 0 }, /burst/],
      [{ burst: 2.5 }, /burst/],
      ['not json', /not valid JSON/],
    ];
    for (const [body, field] of cases) {
      const answer = await call('POST', '/sandbox/rate-limits', body);
      assertError(answer, 400, 'INVALID_REQUEST');
      assert.match(parsesWith(ErrorResponse, answer.body).Message ?? '', field, JSON.stringify(body));
    }
    assertError(await call('POST', '/sandbox/rate-limits'), 400, 'INVALID_REQUEST');
    for (const query of ['?seconds=0', '?seconds=601', '?seconds=abc', '?customerId=bad%20id']) {
      const answer = await call('GET', `/sandbox/request-rates${query}`);
      assertError(answer, 400, 'INVALID_REQUEST');
      assert.match(parsesWith(ErrorResponse, answer.body).Message ?? '', query.includes('seconds') ? /seconds/ : /customerId/);
    }
    assert.equal((await call('PUT', '/sandbox/rate-limits', {})).status, 405);
    assert.equal((await call('POST', '/sandbox/request-rates', {})).status, 405);
    // Nothing was changed by the refusals.
    assert.equal((await call('GET', '/sandbox/rate-limits')).status, 200);
  });

  it('takes its initial default from SANDBOX_RATE_LIMIT_PER_SECOND', () => {
    assert.equal(loadSandboxConfig({ SANDBOX_RATE_LIMIT_PER_SECOND: '25' }).rateLimitPerSecond, 25);
    assert.equal(loadSandboxConfig({}).rateLimitPerSecond, undefined);
    for (const bad of ['0', '2.5', 'many']) {
      assert.throws(
        () => loadSandboxConfig({ SANDBOX_RATE_LIMIT_PER_SECOND: bad }),
        (error: unknown) => error instanceof ConfigError && /SANDBOX_RATE_LIMIT_PER_SECOND/.test(error.message),
      );
    }
  });
});
