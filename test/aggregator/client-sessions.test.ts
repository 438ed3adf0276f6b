/**
 * Contract tests of the aggregation client's session operations (Authorize in its four modes and the
 * challenge round trips) against the in-process sandbox over real HTTP. The sandbox requires the
 * calling-application secret, so every client here also proves the auth header is sent.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createAggregatorClient, type AggregatorClient } from '../../src/aggregator/client.js';
import type { Challenge, Ready } from '../../src/aggregator/exchange.js';
import type { AuthorizeResult } from '../../src/aggregator/session-endpoints.js';
import { AggregatorServiceError } from '../../src/aggregator/errors.js';
import { SERVICE_CODES, isServiceCode } from '../../src/aggregator/failure-table.js';
import type { AuthorizeRequest, AuthorizeResponse } from '../../src/aggregator/schemas.js';
import { SCENARIOS, describeScenario, resolveScenario, type ScenarioListing } from '../../sandbox/scenarios.js';
import { createSandbox, type Sandbox } from '../../sandbox/server.js';

const SECRET = 'contract-secret';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

let sandbox: Sandbox;
before(async () => {
  sandbox = await createSandbox({ port: 0, authSecret: SECRET });
});
after(async () => sandbox.close());

let tenantCounter = 0;
function freshTenant(): string {
  tenantCounter += 1;
  return `sessions-${process.pid}-${tenantCounter}`;
}

interface ClientFor {
  customerId?: string;
  auth?: { header: string; value: string } | undefined | null;
  fetch?: typeof fetch;
}
function clientFor(options: ClientFor = {}): AggregatorClient {
  const auth = options.auth === null ? undefined : (options.auth ?? { header: sandbox.options.authHeader, value: SECRET });
  return createAggregatorClient({ baseUrl: sandbox.url, customerId: options.customerId ?? freshTenant(), auth, timeoutMs: 10_000, fetch: options.fetch });
}

function byName(username: string): ScenarioListing {
  const scenario = resolveScenario(username);
  assert.ok(scenario, `no scenario ${username}`);
  return describeScenario(scenario);
}

function assertReady(result: AuthorizeResult): asserts result is Ready<AuthorizeResponse> {
  assert.equal(result.kind, 'ready', `expected ready, got ${JSON.stringify(result).slice(0, 300)}`);
}
function assertChallenge(result: AuthorizeResult): asserts result is Challenge {
  assert.equal(result.kind, 'challenge', `expected a challenge, got ${JSON.stringify(result).slice(0, 300)}`);
}

/** Asserts the promise rejects with an AggregatorServiceError carrying this code (and its table entry). */
async function rejectsWithCode(promise: Promise<unknown>, code: string, httpStatus?: number): Promise<AggregatorServiceError> {
  let caught: unknown;
  await assert.rejects(promise, (error: unknown) => {
    caught = error;
    return true;
  });
  assert.ok(caught instanceof AggregatorServiceError, `expected AggregatorServiceError, got ${String(caught)}`);
  assert.equal(caught.serviceCode, code, caught.message);
  assert.ok(isServiceCode(code));
  const info = SERVICE_CODES[code];
  if (httpStatus !== undefined) assert.equal(caught.httpStatus, httpStatus, caught.message);
  assert.ok((info.httpStatus as readonly number[]).includes(caught.httpStatus ?? -1), `HTTP ${caught.httpStatus} is not listed for ${code}`);
  assert.equal(caught.retryable, info.retryable, `retryable of ${code}`);
  assert.equal(caught.remedy, info.remedy, `remedy of ${code}`);
  return caught;
}

/** Drives a live flow with the catalogue's answers; asserts each round's prompts; returns the 200. */
async function driveLive(client: AggregatorClient, scenario: ScenarioListing, save = true): Promise<Ready<AuthorizeResponse>> {
  let result = await client.authorizeLive({ institution: scenario.institution, username: scenario.username, password: scenario.password, save });
  const requestIds = new Set<string>();
  for (const [round, step] of scenario.challengeSequence.entries()) {
    assertChallenge(result);
    requestIds.add(result.requestId);
    assert.deepEqual(
      result.challenges.map((c) => [c.Type, c.Prompt]),
      step.challenges.map((c) => [c.Type, c.Prompt]),
      `round ${round + 1} of ${scenario.username}`,
    );
    result = await client.answerChallenge(result.requestId, step.answer);
  }
  assertReady(result);
  requestIds.add(result.requestId);
  assert.equal(requestIds.size, 1, 'every round of one session keeps the same RequestId');
  return result;
}

describe('live Authorize with challenges', () => {
  const challengeScenarios = SCENARIOS.filter((s) => s.kind === 'challenge').map(describeScenario);

  it('covers at least the six challenge sequences of the spec', () => {
    assert.ok(challengeScenarios.length >= 6, `only ${challengeScenarios.length} challenge scenarios`);
    const types = new Set(challengeScenarios.flatMap((s) => s.challengeSequence.flatMap((step) => step.challenges.map((c) => c.Type))));
    for (const type of ['QuestionAndAnswer', 'ImageSelection', 'MultipleChoice', 'MultipleChoiceMultipleAnswers', 'TextOrCall', 'WaitUntilEUAccept']) {
      assert.ok(types.has(type), `no scenario asks ${type}`);
    }
  });

  for (const scenario of challengeScenarios) {
    it(`drives ${scenario.username} through ${scenario.challengeSequence.length} challenge round(s) to ready with a Login`, async () => {
      const done = await driveLive(clientFor(), scenario);
      assert.match(done.data.Login?.Id ?? '', UUID);
      assert.equal(done.data.Login?.Username, scenario.username);
      assert.equal(done.data.HttpStatusCode, 200);
      assert.equal(done.requestId, done.data.RequestId);
      assert.ok(done.data.Links?.some((l) => l.rel === 'AccountsDetail'));
    });
  }

  it('opens a session at once for the no-MFA user', async () => {
    const scenario = byName('no_mfa');
    assert.equal(scenario.challengeSequence.length, 0);
    const result = await clientFor().authorizeLive({ institution: scenario.institution, username: scenario.username, password: scenario.password });
    assertReady(result);
    assert.match(result.data.Login?.Id ?? '', UUID);
    assert.equal(result.data.Institution, scenario.institution);
  });
});

describe('cached Authorize and live refresh', () => {
  it('opens a cached session with a new RequestId for a login saved by a live Authorize', async () => {
    const client = clientFor();
    const live = await driveLive(client, byName('security_question'), true);
    const loginId = live.data.Login?.Id ?? assert.fail('no LoginId');
    const cached = await client.authorizeCached(loginId);
    assertReady(cached);
    assert.equal(cached.data.Login?.Id, loginId);
    assert.notEqual(cached.requestId, live.requestId);
  });

  it('refuses a cached Authorize of a login that was not saved with INVALID_LOGIN', async () => {
    const client = clientFor();
    const live = await driveLive(client, byName('no_mfa'), false);
    await rejectsWithCode(client.authorizeCached(live.data.Login?.Id ?? ''), 'INVALID_LOGIN', 401);
  });

  it('refreshes a saved no-MFA login live and answers ready', async () => {
    const client = clientFor();
    const live = await driveLive(client, byName('no_mfa'), true);
    const refreshed = await client.authorizeRefresh(live.data.Login?.Id ?? '');
    assertReady(refreshed);
    assert.equal(refreshed.data.Login?.Id, live.data.Login?.Id);
  });

  it('refreshes a saved trusted-device login through WaitUntilEUAccept, then ready', async () => {
    const client = clientFor();
    const scenario = byName('trusted_device');
    const live = await driveLive(client, scenario, true);
    const loginId = live.data.Login?.Id ?? assert.fail('no LoginId');
    const refresh = await client.authorizeRefresh(loginId);
    assertChallenge(refresh);
    assert.deepEqual(
      refresh.challenges.map((c) => c.Type),
      ['WaitUntilEUAccept'],
    );
    const step = scenario.challengeSequence[0] ?? assert.fail('no step');
    const done = await client.answerChallenge(refresh.requestId, step.answer);
    assertReady(done);
    assert.equal(done.data.Login?.Id, loginId);
    // The refreshed login is still saved: cached mode keeps working.
    assertReady(await client.authorizeCached(loginId));
  });
});

describe('Authorize errors', () => {
  for (const scenario of SCENARIOS.filter((s) => s.kind === 'authorize-error').map(describeScenario)) {
    const outcome = scenario.outcome;
    if (!('error' in outcome)) continue;
    it(`throws an AggregatorServiceError ${outcome.error} (HTTP ${outcome.httpStatus}) for ${scenario.username}, retryable as the table says`, async () => {
      const client = clientFor();
      const login = { institution: scenario.institution, username: scenario.username, password: scenario.password };
      const error = await rejectsWithCode(client.authorizeLive(login), outcome.error, outcome.httpStatus);
      assert.equal(error.operation, 'Authorize');
      // Every attempt fails the same way.
      await rejectsWithCode(client.authorizeLive(login), outcome.error, outcome.httpStatus);
    });
  }

  for (const scenario of SCENARIOS.filter((s) => s.kind === 'transient-error').map(describeScenario)) {
    const outcome = scenario.outcome;
    if (!('ok' in outcome) || !outcome.failuresFirst) continue;
    const { error, httpStatus, times } = outcome.failuresFirst;
    it(`fails ${scenario.username} ${times} time(s) with retryable ${error}, then answers ready`, async () => {
      const client = clientFor();
      const login = { institution: scenario.institution, username: scenario.username, password: scenario.password };
      for (let attempt = 0; attempt < times; attempt++) {
        const caught = await rejectsWithCode(client.authorizeLive(login), error, httpStatus);
        assert.equal(caught.retryable, true);
      }
      assertReady(await client.authorizeLive(login));
    });
  }

  it('throws INVALID_PASSWORD for a wrong password, not retryable, remedy end-user', async () => {
    const error = await rejectsWithCode(
      clientFor().authorizeLive({ institution: 'SandboxBank', username: 'no_mfa', password: 'wrong' }),
      'INVALID_PASSWORD',
      401,
    );
    assert.equal(error.remedy, 'end-user');
  });
});

describe('answering challenges', () => {
  it('throws INVALID_SECURITY_RESPONSE for a wrong answer, and the right answer still works', async () => {
    const client = clientFor();
    const scenario = byName('security_question');
    const first = await client.authorizeLive({ institution: scenario.institution, username: scenario.username, password: scenario.password, save: true });
    assertChallenge(first);
    const answer = scenario.challengeSequence[0]?.answer ?? assert.fail('no answer');
    const wrong = Object.fromEntries(Object.keys(answer).map((prompt) => [prompt, ['Not the answer']]));
    const error = await rejectsWithCode(client.answerChallenge(first.requestId, wrong), 'INVALID_SECURITY_RESPONSE', 401);
    assert.equal(error.requestId, first.requestId);
    assertReady(await client.answerChallenge(first.requestId, answer));
  });

  it('throws SECURITYRESPONSES_INCOMPLETE when one of three prompts is unanswered, then accepts all three', async () => {
    const client = clientFor();
    const scenario = byName('triple_question');
    const first = await client.authorizeLive({ institution: scenario.institution, username: scenario.username, password: scenario.password });
    assertChallenge(first);
    assert.equal(first.challenges.length, 3);
    const answer = scenario.challengeSequence[0]?.answer ?? assert.fail('no answer');
    const partial = Object.fromEntries(Object.entries(answer).slice(0, 2));
    await rejectsWithCode(client.answerChallenge(first.requestId, partial), 'SECURITYRESPONSES_INCOMPLETE', 401);
    assertReady(await client.answerChallenge(first.requestId, answer));
  });

  it('throws UNKNOWN_CHALLENGE_KEY for a prompt that was not asked, and sends prompt keys without case changes', async () => {
    const client = clientFor();
    const scenario = byName('security_question');
    const first = await client.authorizeLive({ institution: scenario.institution, username: scenario.username, password: scenario.password });
    assertChallenge(first);
    const answer = scenario.challengeSequence[0]?.answer ?? assert.fail('no answer');
    await rejectsWithCode(client.answerChallenge(first.requestId, { 'What is the airspeed of an unladen swallow?': ['42'] }), 'UNKNOWN_CHALLENGE_KEY', 401);
    const shouted = Object.fromEntries(Object.entries(answer).map(([prompt, values]) => [prompt.toUpperCase(), values]));
    await rejectsWithCode(client.answerChallenge(first.requestId, shouted), 'UNKNOWN_CHALLENGE_KEY', 401);
    assertReady(await client.answerChallenge(first.requestId, answer));
  });

  it('throws SESSION_NONEXISTENT when answering a RequestId that has no challenge pending', async () => {
    const client = clientFor();
    const scenario = byName('security_question');
    const done = await driveLive(client, scenario);
    const answer = scenario.challengeSequence[0]?.answer ?? assert.fail('no answer');
    await rejectsWithCode(client.answerChallenge(done.requestId, answer), 'SESSION_NONEXISTENT', 400);
  });
});

describe('tenant isolation', () => {
  it("refuses another customer's LoginId with INVALID_LOGIN and its RequestIds with SESSION_NONEXISTENT", async () => {
    const owner = clientFor();
    const stranger = clientFor();
    const saved = await driveLive(owner, byName('no_mfa'), true);
    const loginId = saved.data.Login?.Id ?? assert.fail('no LoginId');
    await rejectsWithCode(stranger.authorizeCached(loginId), 'INVALID_LOGIN');
    await rejectsWithCode(stranger.authorizeRefresh(loginId), 'INVALID_LOGIN');
    await rejectsWithCode(stranger.deleteCard(loginId), 'INVALID_LOGIN');
    await rejectsWithCode(stranger.getAccountsDetail(saved.requestId), 'SESSION_NONEXISTENT', 400);

    const scenario = byName('security_question');
    const pending = await owner.authorizeLive({ institution: scenario.institution, username: scenario.username, password: scenario.password });
    assertChallenge(pending);
    const answer = scenario.challengeSequence[0]?.answer ?? assert.fail('no answer');
    await rejectsWithCode(stranger.answerChallenge(pending.requestId, answer), 'SESSION_NONEXISTENT', 400);
    // The owner's session is untouched by the stranger's attempts.
    assertReady(await owner.answerChallenge(pending.requestId, answer));
    assertReady(await owner.authorizeCached(loginId));
  });

  it('gives the same username a different LoginId in another tenant', async () => {
    const a = await driveLive(clientFor(), byName('no_mfa'), true);
    const b = await driveLive(clientFor(), byName('no_mfa'), true);
    assert.notEqual(a.data.Login?.Id, b.data.Login?.Id);
  });
});

describe('calling-application auth header', () => {
  const login = { institution: 'SandboxBank', username: 'no_mfa', password: 'Everyday' };

  it('throws ACCESS_DENIED (401, not retryable) without the header', async () => {
    const error = await rejectsWithCode(clientFor({ auth: null }).authorizeLive(login), 'ACCESS_DENIED', 401);
    assert.equal(error.retryable, false);
  });

  it('throws ACCESS_DENIED (401, not retryable) with a wrong secret or the secret under another header name', async () => {
    await rejectsWithCode(clientFor({ auth: { header: sandbox.options.authHeader, value: 'not-the-secret' } }).authorizeLive(login), 'ACCESS_DENIED', 401);
    await rejectsWithCode(clientFor({ auth: { header: 'x-other-key', value: SECRET } }).authorizeLive(login), 'ACCESS_DENIED', 401);
  });

  it('works with auth { header, value } and sends exactly that header', async () => {
    const seen: string[] = [];
    const spy: typeof fetch = (input, init) => {
      const headers = new Headers(input instanceof Request ? input.headers : init?.headers);
      seen.push(headers.get(sandbox.options.authHeader) ?? '');
      return fetch(input, init);
    };
    assertReady(await clientFor({ fetch: spy }).authorizeLive(login));
    assert.deepEqual(seen, [SECRET]);
  });
});

describe('request spellings accepted by authorize()', () => {
  /** A fetch that records the JSON bodies sent. */
  function recorder() {
    const bodies: unknown[] = [];
    const spy: typeof fetch = async (input, init) => {
      const request = input instanceof Request ? input.clone() : new Request(input, init);
      const text = await request.text();
      bodies.push(text === '' ? undefined : JSON.parse(text));
      return fetch(input, init);
    };
    return { bodies, spy };
  }

  it('accepts lower-case username and save, sends the canonical Username and Save, and saves the login', async () => {
    const { bodies, spy } = recorder();
    const client = clientFor({ fetch: spy });
    const lowerCase = {
      Institution: 'SandboxBank',
      username: 'no_mfa',
      Password: 'Everyday',
      MostRecentCached: false,
      save: true,
    } as unknown as AuthorizeRequest;
    const result = await client.authorize(lowerCase);
    assertReady(result);
    assert.equal(result.data.Login?.Username, 'no_mfa');
    assert.deepEqual(bodies[0], { Institution: 'SandboxBank', Username: 'no_mfa', Password: 'Everyday', MostRecentCached: false, Save: true });
    // save: true took effect: the login can be opened in cached mode.
    assertReady(await client.authorizeCached(result.data.Login?.Id ?? ''));
  });

  it('accepts the canonical Username and Save spellings', async () => {
    const client = clientFor();
    const result = await client.authorize({ Institution: 'SandboxBank', Username: 'no_mfa', Password: 'Everyday', MostRecentCached: false, Save: true });
    assertReady(result);
    assertReady(await client.authorizeCached(result.data.Login?.Id ?? ''));
  });

  it('prefers the canonical spelling when both are present', async () => {
    const { bodies, spy } = recorder();
    const both = {
      Institution: 'SandboxBank',
      Username: 'no_mfa',
      username: 'someone_else',
      Password: 'Everyday',
      MostRecentCached: false,
      Save: false,
      save: true,
    } as unknown as AuthorizeRequest;
    const result = await clientFor({ fetch: spy }).authorize(both);
    assertReady(result);
    assert.deepEqual(bodies[0], { Institution: 'SandboxBank', Username: 'no_mfa', Password: 'Everyday', MostRecentCached: false, Save: false });
  });
});
