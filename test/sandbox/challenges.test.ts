import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AuthorizeResponse } from '../../src/aggregator/schemas.js';
import { UNLISTED_CHALLENGE_TYPES } from '../../sandbox/challenges.js';
import { SCENARIOS, describeScenario } from '../../sandbox/scenarios.js';
import { createSandbox, type Sandbox } from '../../sandbox/server.js';
import { assertError, authorizeLive, clientFor, freshTenant, listing, parsesWith, type Call } from './helpers.js';

let sandbox: Sandbox;
let call: Call;
before(async () => {
  sandbox = await createSandbox();
  call = clientFor(sandbox);
});
after(async () => sandbox.close());

const authorizePath = (tenant: string) => `/v3/${tenant}/BankingServices/Authorize`;
const byName = (username: string) => {
  const entry = SCENARIOS.find((s) => s.username === username);
  assert.ok(entry, username);
  return describeScenario(entry);
};

describe('challenge sequences', () => {
  it('lists every scenario with its answers at /sandbox/scenarios', async () => {
    const { scenarios } = await listing(call);
    assert.equal(scenarios.length, SCENARIOS.length);
    const kinds = new Set(scenarios.flatMap((s) => s.challengeSequence.flatMap((step) => step.challenges.map((c) => c.Type))));
    // The spec's six, and the types it does not name that the unknown_challenge scenarios add.
    assert.deepEqual(
      [...kinds].sort(),
      [
        'ImageSelection',
        'MultipleChoice',
        'MultipleChoiceMultipleAnswers',
        'QuestionAndAnswer',
        'TextOrCall',
        'WaitUntilEUAccept',
        ...UNLISTED_CHALLENGE_TYPES,
      ].sort(),
    );
  });

  for (const scenario of SCENARIOS.filter((s) => s.kind === 'challenge' || s.kind === 'no-mfa').map(describeScenario)) {
    it(`answers the ${scenario.username} sequence as listed and ends at 200 with a LoginId`, async () => {
      const tenant = freshTenant();
      const done = await authorizeLive(call, tenant, scenario);
      assert.equal(done.HttpStatusCode, 200);
      assert.ok(done.Login?.Id);
      assert.equal(done.Login?.Username, scenario.username);
      assert.deepEqual(
        done.Links?.map((l) => l.href),
        ['/Authorize', '/GetAccountsDetail', '/GetAccountsSummary', '/GetStatements', '/Investments'],
      );
    });
  }

  it('serves 16 distinct PNG images of about 4,000 base64 characters for image selection', async () => {
    const tenant = freshTenant();
    const scenario = byName('image_selection');
    let answer = await call('POST', authorizePath(tenant), {
      Institution: scenario.institution,
      Username: scenario.username,
      Password: scenario.password,
      MostRecentCached: false,
    });
    const first = parsesWith(AuthorizeResponse, answer.body);
    answer = await call('POST', authorizePath(tenant), { RequestId: first.RequestId, SecurityResponses: scenario.challengeSequence[0]?.answer });
    const images = parsesWith(AuthorizeResponse, answer.body).SecurityChallenges?.[0]?.Iterables ?? [];
    assert.equal(images.length, 16);
    assert.equal(new Set(images).size, 16);
    for (const image of images) {
      assert.ok(image.length > 3000 && image.length < 5500, `length ${image.length}`);
      assert.deepEqual([...Buffer.from(image, 'base64').subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    }
  });

  it('accepts TextOrCall keyed by either listed phone with Call as well as Text', async () => {
    const tenant = freshTenant();
    const scenario = byName('two_step_code');
    const first = parsesWith(
      AuthorizeResponse,
      (
        await call('POST', authorizePath(tenant), {
          Institution: scenario.institution,
          Username: scenario.username,
          Password: scenario.password,
          MostRecentCached: false,
        })
      ).body,
    );
    const phone = first.SecurityChallenges?.[0]?.Iterables?.[1] ?? '';
    const next = await call('POST', authorizePath(tenant), { RequestId: first.RequestId, SecurityResponses: { [phone]: ['Call'] } });
    assert.equal(next.status, 203);
    assert.equal(parsesWith(AuthorizeResponse, next.body).SecurityChallenges?.[0]?.Prompt, 'Enter the security code we sent you');
  });
});

describe('wrong answers', () => {
  async function startTriple(tenant: string) {
    const scenario = byName('triple_question');
    const answer = await call('POST', authorizePath(tenant), {
      Institution: scenario.institution,
      Username: scenario.username,
      Password: scenario.password,
      MostRecentCached: false,
      Save: true,
    });
    return { scenario, requestId: parsesWith(AuthorizeResponse, answer.body).RequestId, answers: scenario.challengeSequence[0]?.answer ?? {} };
  }

  it('answers INVALID_SECURITY_RESPONSE to a wrong answer and keeps the challenge answerable', async () => {
    const tenant = freshTenant();
    const { requestId, answers } = await startTriple(tenant);
    const wrong = { ...answers, "What is your mother's maiden name?": ['Nobody'] };
    assertError(await call('POST', authorizePath(tenant), { RequestId: requestId, SecurityResponses: wrong }), 401, 'INVALID_SECURITY_RESPONSE');
    const retry = await call('POST', authorizePath(tenant), { RequestId: requestId, SecurityResponses: answers });
    assert.equal(retry.status, 200, retry.text);
  });

  it('answers SECURITYRESPONSES_INCOMPLETE when a prompt is missing and keeps the challenge answerable', async () => {
    const tenant = freshTenant();
    const { requestId, answers } = await startTriple(tenant);
    const partial = Object.fromEntries(Object.entries(answers).slice(0, 2));
    assertError(await call('POST', authorizePath(tenant), { RequestId: requestId, SecurityResponses: partial }), 401, 'SECURITYRESPONSES_INCOMPLETE');
    assert.equal((await call('POST', authorizePath(tenant), { RequestId: requestId, SecurityResponses: answers })).status, 200);
  });

  it('answers UNKNOWN_CHALLENGE_KEY when a key was not asked, including a case-changed prompt', async () => {
    const tenant = freshTenant();
    const { requestId, answers } = await startTriple(tenant);
    const [firstKey = '', firstValue = []] = Object.entries(answers)[0] ?? [];
    const rest = Object.fromEntries(Object.entries(answers).slice(1));
    const shouted = { ...rest, [firstKey.toUpperCase()]: firstValue };
    assertError(await call('POST', authorizePath(tenant), { RequestId: requestId, SecurityResponses: shouted }), 401, 'UNKNOWN_CHALLENGE_KEY');
    assert.equal((await call('POST', authorizePath(tenant), { RequestId: requestId, SecurityResponses: answers })).status, 200);
  });

  it('answers SESSION_NONEXISTENT when no challenge is pending or the RequestId is unknown', async () => {
    const tenant = freshTenant();
    const { requestId, answers } = await startTriple(tenant);
    assert.equal((await call('POST', authorizePath(tenant), { RequestId: requestId, SecurityResponses: answers })).status, 200);
    assertError(await call('POST', authorizePath(tenant), { RequestId: requestId, SecurityResponses: answers }), 400, 'SESSION_NONEXISTENT');
    assertError(
      await call('POST', authorizePath(tenant), { RequestId: '00000000-0000-4000-8000-000000000000', SecurityResponses: answers }),
      400,
      'SESSION_NONEXISTENT',
    );
  });

  it('refuses a RequestId of another customer with SESSION_NONEXISTENT', async () => {
    const tenant = freshTenant();
    const { requestId, answers } = await startTriple(tenant);
    assertError(await call('POST', authorizePath(freshTenant()), { RequestId: requestId, SecurityResponses: answers }), 400, 'SESSION_NONEXISTENT');
    assert.equal((await call('POST', authorizePath(tenant), { RequestId: requestId, SecurityResponses: answers })).status, 200);
  });

  it('rejects a MultipleChoice answer that is not the correct option and an incomplete multiple-answer set', async () => {
    const tenant = freshTenant();
    const scenario = byName('reset_questions');
    const first = parsesWith(
      AuthorizeResponse,
      (
        await call('POST', authorizePath(tenant), {
          Institution: scenario.institution,
          Username: scenario.username,
          Password: scenario.password,
          MostRecentCached: false,
        })
      ).body,
    );
    const correct = scenario.challengeSequence[0]?.answer ?? {};
    const [mcPrompt = '', mcmaPrompt = ''] = Object.keys(correct);
    assertError(
      await call('POST', authorizePath(tenant), { RequestId: first.RequestId, SecurityResponses: { ...correct, [mcPrompt]: ['None of the above'] } }),
      401,
      'INVALID_SECURITY_RESPONSE',
    );
    assertError(
      await call('POST', authorizePath(tenant), {
        RequestId: first.RequestId,
        SecurityResponses: { ...correct, [mcmaPrompt]: [correct[mcmaPrompt]?.[0] ?? ''] },
      }),
      401,
      'INVALID_SECURITY_RESPONSE',
    );
    assert.equal((await call('POST', authorizePath(tenant), { RequestId: first.RequestId, SecurityResponses: correct })).status, 203);
  });

  it('answers INVALID_PASSWORD, INVALID_USERNAME and INVALID_LOGIN for bad credentials and institution', async () => {
    const tenant = freshTenant();
    assertError(
      await call('POST', authorizePath(tenant), { Institution: 'SandboxBank', Username: 'no_mfa', Password: 'nope', MostRecentCached: false }),
      401,
      'INVALID_PASSWORD',
    );
    assertError(
      await call('POST', authorizePath(tenant), { Institution: 'SandboxBank', Username: 'nobody_here', Password: 'Everyday', MostRecentCached: false }),
      401,
      'INVALID_USERNAME',
    );
    assertError(
      await call('POST', authorizePath(tenant), { Institution: 'SandboxTrust', Username: 'no_mfa', Password: 'Everyday', MostRecentCached: false }),
      401,
      'INVALID_LOGIN',
    );
  });
});

describe('Authorize-time errors', () => {
  for (const scenario of SCENARIOS.filter((s) => s.kind === 'authorize-error').map(describeScenario)) {
    it(`answers ${scenario.username} with its listed code and status on every attempt`, async () => {
      assert.ok('error' in scenario.outcome);
      const tenant = freshTenant();
      for (let attempt = 0; attempt < 2; attempt++) {
        const answer = await call('POST', authorizePath(tenant), {
          Institution: scenario.institution,
          Username: scenario.username,
          Password: scenario.password,
          MostRecentCached: false,
        });
        assertError(answer, scenario.outcome.httpStatus, scenario.outcome.error);
      }
    });
  }

  it('fails retry_later_twice twice with RETRY_LATER and then succeeds', async () => {
    const tenant = freshTenant();
    const body = { Institution: 'SandboxBank', Username: 'retry_later_twice', Password: 'Everyday', MostRecentCached: false };
    assertError(await call('POST', authorizePath(tenant), body), 401, 'RETRY_LATER');
    assertError(await call('POST', authorizePath(tenant), body), 401, 'RETRY_LATER');
    assert.equal((await call('POST', authorizePath(tenant), body)).status, 200);
  });

  it('reads the failure count from a <code>_<n> username', async () => {
    const tenant = freshTenant();
    const body = { Institution: 'SandboxBank', Username: 'aggregation_error_3', Password: 'Everyday', MostRecentCached: false };
    for (let i = 0; i < 3; i++) assertError(await call('POST', authorizePath(tenant), body), 500, 'AGGREGATION_ERROR');
    assert.equal((await call('POST', authorizePath(tenant), body)).status, 200);
  });
});

describe('saved logins', () => {
  it('opens a cached session for a saved login and refuses it to another customer', async () => {
    const tenant = freshTenant();
    const done = await authorizeLive(call, tenant, byName('security_question'));
    const loginId = done.Login?.Id ?? '';
    const cached = await call('POST', authorizePath(tenant), { LoginId: loginId, MostRecentCached: true });
    assert.equal(cached.status, 200);
    const parsed = parsesWith(AuthorizeResponse, cached.body);
    assert.notEqual(parsed.RequestId, done.RequestId);
    assert.equal(parsed.Login?.Id, loginId);
    assertError(await call('POST', authorizePath(freshTenant()), { LoginId: loginId, MostRecentCached: true }), 401, 'INVALID_LOGIN');
  });

  it('does not save a login authorized without Save', async () => {
    const tenant = freshTenant();
    const done = await authorizeLive(call, tenant, byName('no_mfa'), false);
    assertError(await call('POST', authorizePath(tenant), { LoginId: done.Login?.Id, MostRecentCached: true }), 401, 'INVALID_LOGIN');
  });

  it('re-runs the challenge sequence on a live refresh of a saved login and refreshes LastRefresh', async () => {
    let clock = Date.parse('2026-11-01T10:00:00Z');
    const local = await createSandbox({ now: () => clock });
    try {
      const localCall = clientFor(local);
      const tenant = freshTenant();
      const scenario = byName('trusted_device');
      const done = await authorizeLive(localCall, tenant, scenario);
      assert.equal(done.Login?.LastRefresh, '2026-11-01T10:00:00.000');
      clock += 3_600_000;
      const refresh = await localCall('POST', authorizePath(tenant), { LoginId: done.Login?.Id, MostRecentCached: false, Save: true });
      assert.equal(refresh.status, 203);
      const challenge = parsesWith(AuthorizeResponse, refresh.body);
      assert.equal(challenge.SecurityChallenges?.[0]?.Type, 'WaitUntilEUAccept');
      const finished = await localCall('POST', authorizePath(tenant), {
        RequestId: challenge.RequestId,
        SecurityResponses: scenario.challengeSequence[0]?.answer,
      });
      assert.equal(finished.status, 200);
      assert.equal(parsesWith(AuthorizeResponse, finished.body).Login?.LastRefresh, '2026-11-01T11:00:00.000');
      assert.equal(parsesWith(AuthorizeResponse, finished.body).Login?.Id, done.Login?.Id);
    } finally {
      await local.close();
    }
  });

  it('expires a challenge left idle past the idle limit with SESSION_NONEXISTENT', async () => {
    let clock = 1_000_000;
    const local = await createSandbox({ now: () => clock, sessionIdleMs: 1000 });
    try {
      const localCall = clientFor(local);
      const tenant = freshTenant();
      const scenario = byName('security_question');
      const first = parsesWith(
        AuthorizeResponse,
        (
          await localCall('POST', authorizePath(tenant), {
            Institution: scenario.institution,
            Username: scenario.username,
            Password: scenario.password,
            MostRecentCached: false,
          })
        ).body,
      );
      clock += 1001;
      assertError(
        await localCall('POST', authorizePath(tenant), { RequestId: first.RequestId, SecurityResponses: scenario.challengeSequence[0]?.answer }),
        400,
        'SESSION_NONEXISTENT',
      );
    } finally {
      await local.close();
    }
  });
});

describe('Authorize submissions', () => {
  const submissions = async (tenant?: string) => {
    const answer = await call('GET', `/sandbox/authorize-submissions${tenant === undefined ? '' : `?customerId=${tenant}`}`);
    assert.equal(answer.status, 200, answer.text);
    return answer;
  };

  it('counts credential calls and answers of a clean flow and reports no duplicate', async () => {
    const tenant = freshTenant();
    const done = await authorizeLive(call, tenant, byName('image_selection'));
    assert.equal((await call('POST', authorizePath(tenant), { LoginId: done.Login?.Id, MostRecentCached: true })).status, 200);
    // A live refresh of a saved login without two-step verification opens at once (test/sandbox/refresh.test.ts).
    const refresh = await call('POST', authorizePath(tenant), { LoginId: done.Login?.Id, MostRecentCached: false, Save: true });
    assert.equal(refresh.status, 200);
    // Two rounds answered once each; the live call and the refresh carried credentials; cached mode counts as neither.
    assert.deepEqual((await submissions(tenant)).body, { answers: 2, credentials: 2, duplicates: [] });
    assert.deepEqual(sandbox.authorizeSubmissions(tenant), { answers: 2, credentials: 2, duplicates: [] });
  });

  it('reports the same answer sent twice on one RequestId as a duplicate, whatever its key order, without exposing it', async () => {
    const tenant = freshTenant();
    const scenario = byName('triple_question');
    const first = await call('POST', authorizePath(tenant), {
      Institution: scenario.institution,
      Username: scenario.username,
      Password: scenario.password,
      MostRecentCached: false,
    });
    const { RequestId: requestId } = parsesWith(AuthorizeResponse, first.body);
    const answers = scenario.challengeSequence[0]?.answer ?? assert.fail('answer');
    const reversed = Object.fromEntries(Object.entries(answers).reverse());
    assert.equal((await call('POST', authorizePath(tenant), { RequestId: requestId, SecurityResponses: answers })).status, 200);
    // A retry of an answer that was already accepted: refused, but it reached the service again.
    assertError(await call('POST', authorizePath(tenant), { RequestId: requestId, SecurityResponses: reversed }), 400, 'SESSION_NONEXISTENT');
    // Another value under the same keys is another answer.
    assertError(
      await call('POST', authorizePath(tenant), { RequestId: requestId, SecurityResponses: { ...answers, 'What is your favourite colour?': ['blue'] } }),
      400,
      'SESSION_NONEXISTENT',
    );

    const report = await submissions(tenant);
    assert.deepEqual(report.body, { answers: 3, credentials: 1, duplicates: [{ customerId: tenant, requestId, count: 2 }] });
    for (const value of Object.values(answers).flat()) assert.ok(!report.text.includes(value), `the report exposes "${value}"`);
  });

  it('sums every tenant without customerId, knows nothing of an unknown one, and forgets a reset tenant', async () => {
    const local = await createSandbox();
    try {
      const localCall = clientFor(local);
      const [one, two] = [freshTenant(), freshTenant()];
      await authorizeLive(localCall, one, byName('security_question'));
      await authorizeLive(localCall, two, byName('no_mfa'));
      assert.deepEqual((await localCall('GET', '/sandbox/authorize-submissions')).body, { answers: 1, credentials: 2, duplicates: [] });
      assert.deepEqual(local.authorizeSubmissions(), { answers: 1, credentials: 2, duplicates: [] });
      assert.deepEqual((await localCall('GET', `/sandbox/authorize-submissions?customerId=${freshTenant()}`)).body, {
        answers: 0,
        credentials: 0,
        duplicates: [],
      });
      assert.equal((await localCall('DELETE', `/sandbox/${one}`)).status, 200);
      assert.deepEqual(local.authorizeSubmissions(), { answers: 0, credentials: 1, duplicates: [] });
      assertError(await localCall('GET', '/sandbox/authorize-submissions?customerId=not%20valid'), 400, 'INVALID_REQUEST');
      assert.equal((await localCall('POST', '/sandbox/authorize-submissions')).status, 405);
    } finally {
      await local.close();
    }
  });
});
