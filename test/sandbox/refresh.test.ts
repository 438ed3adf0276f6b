/**
 * Live refresh of saved logins: only logins protected by two-step verification or a trusted device
 * need their end user again (the spec: they cannot be refreshed automatically); the listing says
 * which ones they are.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AuthorizeResponse } from '../../src/aggregator/schemas.js';
import { createSandbox, type Sandbox } from '../../sandbox/server.js';
import { authorizeLive, clientFor, freshTenant, listing, parsesWith, type Call } from './helpers.js';

let sandbox: Sandbox;
let call: Call;
before(async () => {
  sandbox = await createSandbox();
  call = clientFor(sandbox);
});
after(async () => sandbox.close());

const refresh = (tenant: string, loginId: string) =>
  call('POST', `/v3/${tenant}/BankingServices/Authorize`, { LoginId: loginId, MostRecentCached: false, Save: true });

describe('live refresh of a saved login', () => {
  it('lists the two-step and trusted-device logins as not refreshable unattended, and only them', async () => {
    const { scenarios } = await listing(call);
    const needEndUser = scenarios.filter((scenario) => !scenario.unattendedRefresh).map((scenario) => [scenario.username, scenario.endUserVerification]);
    assert.deepEqual(needEndUser, [
      ['two_step_code', 'two-step'],
      ['trusted_device', 'trusted-device'],
    ]);
    assert.ok(scenarios.filter((scenario) => scenario.unattendedRefresh).every((scenario) => scenario.endUserVerification === null));
  });

  it('asks a two-step login its TextOrCall and code again, as at the first connection', async () => {
    const { scenarios } = await listing(call);
    const twoStep = scenarios.find((scenario) => scenario.username === 'two_step_code');
    assert.ok(twoStep);
    const tenant = freshTenant();
    const saved = await authorizeLive(call, tenant, twoStep);
    const first = await refresh(tenant, saved.Login?.Id ?? '');
    assert.equal(first.status, 203, first.text.slice(0, 300));
    assert.deepEqual(
      parsesWith(AuthorizeResponse, first.body).SecurityChallenges?.map((c) => c.Type),
      ['TextOrCall'],
    );
  });

  it('opens a security-question login at once: the service answers from the answers it saved', async () => {
    const { scenarios } = await listing(call);
    for (const username of ['security_question', 'image_selection', 'token_code']) {
      const scenario = scenarios.find((entry) => entry.username === username);
      assert.ok(scenario, username);
      const tenant = freshTenant();
      const saved = await authorizeLive(call, tenant, scenario);
      const refreshed = await refresh(tenant, saved.Login?.Id ?? '');
      assert.equal(refreshed.status, 200, `${username}: ${refreshed.text.slice(0, 300)}`);
      assert.equal(parsesWith(AuthorizeResponse, refreshed.body).Login?.Id, saved.Login?.Id);
    }
  });
});
