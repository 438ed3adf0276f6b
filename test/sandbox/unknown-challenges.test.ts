/**
 * Challenge types the spec does not name (unknown_challenge, unknown_challenge_mixed): asked as an
 * institution adds them, answered by the exact prompt with free text, refused like any wrong answer.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AuthorizeResponse } from '../../src/aggregator/schemas.js';
import { checkResponses } from '../../sandbox/challenges.js';
import type { ScenarioListing } from '../../sandbox/scenarios.js';
import { createSandbox, type Sandbox } from '../../sandbox/server.js';
import { assertError, authorizeLive, clientFor, freshTenant, listing, parsesWith, type Call } from './helpers.js';

let sandbox: Sandbox;
let call: Call;
let scenarios: ScenarioListing[];
before(async () => {
  sandbox = await createSandbox();
  call = clientFor(sandbox);
  scenarios = (await listing(call)).scenarios;
});
after(async () => sandbox.close());

const authorizePath = (tenant: string) => `/v3/${tenant}/BankingServices/Authorize`;
const SMS_PROMPT = 'Enter the code we sent by SMS to ***-***-1234';
const byName = (username: string) => scenarios.find((s) => s.username === username) ?? assert.fail(`${username} is listed`);

/** The first 203 of a live Authorize of `username`. */
async function firstChallenge(tenant: string, username: string) {
  const scenario = byName(username);
  const answer = await call('POST', authorizePath(tenant), {
    Institution: scenario.institution,
    Username: scenario.username,
    Password: scenario.password,
    MostRecentCached: false,
    Save: true,
  });
  assert.equal(answer.status, 203, answer.text);
  return parsesWith(AuthorizeResponse, answer.body);
}

describe('a challenge type the spec does not name', () => {
  it('is listed with its prompt and the free-text answer that passes it', () => {
    const [round] = byName('unknown_challenge').challengeSequence;
    assert.deepEqual(round?.challenges, [{ Type: 'SmsCode', Prompt: SMS_PROMPT }]);
    assert.deepEqual(round?.answer, { [SMS_PROMPT]: ['246810'] });
    assert.equal(byName('unknown_challenge').kind, 'variation');
  });

  it('asks unknown_challenge as one SmsCode round and opens the session on the listed answer', async () => {
    const tenant = freshTenant();
    const challenge = await firstChallenge(tenant, 'unknown_challenge');
    assert.deepEqual(challenge.SecurityChallenges, [{ Type: 'SmsCode', Prompt: SMS_PROMPT }]);
    const done = await authorizeLive(call, freshTenant(), byName('unknown_challenge'));
    assert.equal(done.HttpStatusCode, 200);
    assert.equal(done.Login?.Username, 'unknown_challenge');
  });

  it('refuses a wrong free-text answer with INVALID_SECURITY_RESPONSE and leaves the round to be answered again', async () => {
    const tenant = freshTenant();
    const challenge = await firstChallenge(tenant, 'unknown_challenge');
    const wrong = await call('POST', authorizePath(tenant), { RequestId: challenge.RequestId, SecurityResponses: { [SMS_PROMPT]: ['135790'] } });
    assertError(wrong, 401, 'INVALID_SECURITY_RESPONSE');
    // Free text is compared trimmed, as a QuestionAndAnswer answer is.
    const right = await call('POST', authorizePath(tenant), { RequestId: challenge.RequestId, SecurityResponses: { [SMS_PROMPT]: [' 246810 '] } });
    assert.equal(right.status, 200, right.text);
    assert.equal(parsesWith(AuthorizeResponse, right.body).RequestId, challenge.RequestId);
  });

  it('takes the answer only keyed by the exact prompt: another case is UNKNOWN_CHALLENGE_KEY', async () => {
    const tenant = freshTenant();
    const challenge = await firstChallenge(tenant, 'unknown_challenge');
    assertError(
      await call('POST', authorizePath(tenant), { RequestId: challenge.RequestId, SecurityResponses: { [SMS_PROMPT.toLowerCase()]: ['246810'] } }),
      401,
      'UNKNOWN_CHALLENGE_KEY',
    );
    assertError(
      await call('POST', authorizePath(tenant), { RequestId: challenge.RequestId, SecurityResponses: { [SMS_PROMPT]: ['246810', '246810'] } }),
      401,
      'INVALID_SECURITY_RESPONSE',
    );
    assert.equal((await call('POST', authorizePath(tenant), { RequestId: challenge.RequestId, SecurityResponses: { [SMS_PROMPT]: ['246810'] } })).status, 200);
  });

  it('asks a PlainQuestion beside a QuestionAndAnswer in one round of unknown_challenge_mixed and needs both answered in one call', async () => {
    const tenant = freshTenant();
    const challenge = await firstChallenge(tenant, 'unknown_challenge_mixed');
    assert.deepEqual(
      challenge.SecurityChallenges?.map((c) => c.Type),
      ['QuestionAndAnswer', 'PlainQuestion'],
    );
    const answer = byName('unknown_challenge_mixed').challengeSequence[0]?.answer ?? assert.fail();
    const plainPrompt = challenge.SecurityChallenges?.[1]?.Prompt ?? assert.fail();
    assertError(
      await call('POST', authorizePath(tenant), { RequestId: challenge.RequestId, SecurityResponses: { [plainPrompt]: answer[plainPrompt] } }),
      401,
      'SECURITYRESPONSES_INCOMPLETE',
    );
    assertError(
      await call('POST', authorizePath(tenant), { RequestId: challenge.RequestId, SecurityResponses: { ...answer, [plainPrompt]: ['Rue Sherbrooke'] } }),
      401,
      'INVALID_SECURITY_RESPONSE',
    );
    assert.equal((await call('POST', authorizePath(tenant), { RequestId: challenge.RequestId, SecurityResponses: answer })).status, 200);
  });

  it('compares free text case-insensitively but never changes the key (the check itself)', () => {
    const step = [{ Type: 'SmsCode', Prompt: SMS_PROMPT, answer: 'AB12' }] as const;
    assert.deepEqual(checkResponses(step, { [SMS_PROMPT]: ['ab12'] }), { ok: true });
    assert.equal(checkResponses(step, { [SMS_PROMPT]: [''] }).ok, false);
    assert.equal(checkResponses(step, { [`${SMS_PROMPT} `]: ['AB12'] }).ok, false);
  });
});
