/**
 * Operators sign in to the console through OpenID Connect, against a real provider (oidc-provider,
 * scripts/lib/oidc-dev-provider.ts) and a real dev server, worker and sandbox, with no shared token
 * (as in production): a page without a session goes to sign in and comes back; each identity's
 * groups become roles per tenant, which every route checks (tenant A's operator lists only A's
 * connections and is refused B's, a viewer may look and not answer); a session that is changed,
 * expired or of a revoked identity is refused by name, and one signed out of is refused everywhere,
 * a copy of its cookie too; a provider that is down fails sign-in with a
 * page that says so while signed-in operators carry on; a wrong password signs nobody in.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { createConsoleServer, type ConsoleServer } from '../../src/console/app.js';
import { consoleSignIn, SESSION_COOKIE } from '../../src/console/sign-in.js';
import { ConnectionsClient, connectionKey } from '../../src/client/index.js';
import { loadClientConfig } from '../../src/settings/client.js';
import { TEST_ENCRYPTION_ENV } from '../helpers/connection-stack.js';
import { OidcSignIn, type OidcSettings } from '../../src/identity/oidc-sign-in.js';
import { parseRoleMap } from '../../src/identity/roles.js';
import { SealedCookies } from '../../src/identity/sealed-cookie.js';
import { describeScenario, SCENARIOS } from '../../sandbox/scenarios.js';
import { freePort } from '../../scripts/lib/free-port.js';
import { DevOidcProvider } from '../../scripts/lib/oidc-dev-provider.js';
import { HttpBrowser } from '../../scripts/lib/http-browser.js';
import { uniqueId } from '../helpers/temporal.js';
import { liveInput, startClientStack, stopClientStack, type ClientStack } from '../client/client-stack.js';
import { tempAuditTrail } from '../helpers/audit.js';

const tenantA = `lender-a-${uniqueId('t').slice(-6)}`;
const tenantB = `lender-b-${uniqueId('t').slice(-6)}`;
const PASSWORD = 'correct horse battery staple';
const scenario = SCENARIOS.find((entry) => entry.username === 'security_question') ?? assert.fail('the security_question scenario');
const RIGHT_ANSWER = { challengeSetId: '1', responses: describeScenario(scenario).challengeSequence[0]?.answer ?? assert.fail('its first answer') };

let shared: ClientStack | undefined;
let provider: DevOidcProvider;
let consoleServer: ConsoleServer;
let consoleUrl: string;
let sessionKey: Uint8Array;
let ofA: string;
let ofB: string;
const audit = tempAuditTrail();

function settings(issuer: string, redirectUri: string): OidcSettings {
  return {
    issuer: new URL(issuer),
    clientId: 'console',
    clientSecret: 'console-secret-for-tests',
    redirectUri,
    groupsClaim: 'groups',
    roleMap: parseRoleMap(`a-ops=operator@${tenantA},a-viewers=viewer@${tenantA},platform=admin@*`),
    timeoutMs: 2_000,
    // Every request asks the provider again: a revocation shows at once.
    recheckMs: 0,
    sessionMaxMs: 3_600_000,
    allowHttp: true,
  };
}

/** A browser signed in as `username` (the provider's login form filled in), back on the console's page. */
async function signedIn(username: string): Promise<HttpBrowser> {
  const browser = new HttpBrowser();
  const login = await browser.open(`${consoleUrl}/`);
  assert.match(login.body, /<form method="post" action="\/interaction\/[^"]+\/login"/, 'the provider asks who is signing in');
  const back = await browser.submit(login, { username, password: PASSWORD });
  assert.equal(back.status, 200, back.body.slice(0, 300));
  assert.ok(browser.cookies.has(SESSION_COOKIE), 'a session cookie');
  return browser;
}

const api = (browser: HttpBrowser, path: string, body?: unknown) =>
  browser.request(
    `${consoleUrl}${path}`,
    body === undefined ? {} : { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json', origin: consoleUrl } },
  );
const json = (visit: { body: string }) => JSON.parse(visit.body) as Record<string, unknown>;

before(async () => {
  shared = await startClientStack();
  const consolePort = await freePort();
  consoleUrl = `http://127.0.0.1:${consolePort}`;
  provider = await DevOidcProvider.start({
    identities: [
      { username: 'alice', password: PASSWORD, name: 'Alice Operator', groups: ['a-ops'] },
      { username: 'vera', password: PASSWORD, name: 'Vera Viewer', groups: ['a-viewers'] },
      { username: 'pat', password: PASSWORD, name: 'Pat Platform', groups: ['platform'] },
      { username: 'nora', password: PASSWORD, name: 'Nora Nobody', groups: ['unmapped'] },
    ],
    clients: [{ clientId: 'console', clientSecret: 'console-secret-for-tests', redirectUris: [`${consoleUrl}/auth/callback`] }],
  });
  sessionKey = randomBytes(32);
  const signIn = consoleSignIn(new OidcSignIn(settings(provider.issuer, `${consoleUrl}/auth/callback`)), new SealedCookies(sessionKey), { audit });
  consoleServer = createConsoleServer({ audit, connections: shared.client, token: undefined, signIn, defaultCustomerId: tenantA });
  await consoleServer.listen(consolePort);
  ofA = connectionKey(tenantA, uniqueId('app'));
  ofB = connectionKey(tenantB, uniqueId('app'));
  await shared.client.startAndAwaitFirstStep(ofA, liveInput(tenantA, 'security_question', scenario.institution));
  await shared.client.startAndAwaitFirstStep(ofB, liveInput(tenantB, 'security_question', scenario.institution));
});

after(async () => {
  await consoleServer?.close();
  await provider?.stop();
  await stopClientStack({ stack: shared?.stack, env: shared?.env });
});

describe('signing in to the console', () => {
  it('sends a page without a session to the provider and back; the API answers 401 naming where to sign in; no shared token is taken', async () => {
    const browser = new HttpBrowser();
    const page = await browser.request(`${consoleUrl}/`);
    assert.equal(page.status, 303);
    assert.equal(page.location, `${consoleUrl}/auth/login?return=%2F`);
    const call = await api(browser, '/api/connections');
    assert.equal(call.status, 401);
    assert.deepEqual([json(call).error, json(call).message], ['SignInRequired', 'the console needs you signed in: sign in at /auth/login']);
    const token = await browser.request(`${consoleUrl}/?token=${'x'.repeat(32)}`);
    assert.equal(token.status, 401);
    assert.match(json(token).message as string, /this console takes no shared token/);
  });

  it("gives tenant A's operator A's connections only, and refuses B's by route, naming the role it takes", async () => {
    const alice = await signedIn('alice');
    const me = json(await api(alice, '/api/me'));
    assert.deepEqual([me.name, me.roles, me.via], ['Alice Operator', `operator@${tenantA}`, 'oidc']);
    const listed = json(await api(alice, '/api/connections?status=any')).connections as { workflowId: string }[];
    assert.ok(
      listed.some((c) => c.workflowId === ofA),
      "A's connection is listed",
    );
    assert.ok(!listed.some((c) => c.workflowId === ofB), "B's is not");
    for (const [path, body] of [
      [`/api/connections/${encodeURIComponent(ofB)}`, undefined],
      [`/api/connections/${encodeURIComponent(ofB)}/answer`, RIGHT_ANSWER],
      [`/api/connections/${encodeURIComponent(ofB)}/cancel`, {}],
      [`/api/connections?customer=${tenantB}`, undefined],
      [`/api/books/refreshes?customer=${tenantB}`, undefined],
      [`/api/schedules?customer=${tenantB}`, undefined],
    ] as const) {
      const refused = await api(alice, path, body);
      assert.equal(refused.status, 403, `${path}: ${refused.body}`);
      assert.match(json(refused).message as string, new RegExp(`Alice Operator may not \\w+ here: it takes the \\w+ role on tenant ${tenantB}`), path);
    }
    assert.equal((await shared!.client.getState(ofB)).status, 'AwaitingAnswer', "B's connection was not answered");
    const answered = await api(alice, `/api/connections/${encodeURIComponent(ofA)}/answer`, RIGHT_ANSWER);
    assert.equal(answered.status, 200, answered.body);
    assert.equal((json(answered).outcome as { outcome?: string }).outcome, 'accepted');
    // Who answered: the operator's identity, recorded by Temporal with the update in the connection's history.
    const activity = json(await api(alice, `/api/connections/${encodeURIComponent(ofA)}/activity`)).activity as {
      who: string;
      action: string;
      name?: string;
      outcome?: string;
    }[];
    const answer = activity.find((entry) => entry.name === 'submitAnswer');
    assert.deepEqual([answer?.who, answer?.name, answer?.outcome], ['console:Alice Operator <alice>', 'submitAnswer', 'accepted'], JSON.stringify(activity));
    assert.equal(activity[0]?.action, 'started');
    assert.equal((await api(alice, `/api/connections/${encodeURIComponent(ofB)}/activity`)).status, 403, "nor B's activity");
    const admin = await api(alice, `/api/books/refreshes/${encodeURIComponent(`refresh-${tenantA}:nightly-1`)}/pause`, {});
    assert.equal(admin.status, 403, 'an operator does not run books');
  });

  it('lets a viewer look and not answer; an identity with no mapped group may do nothing', async () => {
    const vera = await signedIn('vera');
    assert.equal((await api(vera, `/api/connections/${encodeURIComponent(ofB)}`)).status, 403);
    const answer = await api(vera, `/api/connections/${encodeURIComponent(ofB)}/answer`, RIGHT_ANSWER);
    assert.equal(answer.status, 403);
    const fresh = connectionKey(tenantA, uniqueId('app'));
    await shared!.client.startAndAwaitFirstStep(fresh, liveInput(tenantA, 'security_question', scenario.institution));
    assert.equal((await api(vera, `/api/connections/${encodeURIComponent(fresh)}`)).status, 200);
    const refused = await api(vera, `/api/connections/${encodeURIComponent(fresh)}/answer`, RIGHT_ANSWER);
    assert.equal(refused.status, 403);
    assert.match(json(refused).message as string, new RegExp(`it takes the operator role on tenant ${tenantA} \\(Vera Viewer has viewer@${tenantA}\\)`));
    assert.equal((await shared!.client.getState(fresh)).status, 'AwaitingAnswer');

    const nora = await signedIn('nora');
    const nothing = await api(nora, '/api/connections');
    assert.equal(nothing.status, 403);
    assert.match(
      json(nothing).message as string,
      /Nora Nobody may not read here: it takes the viewer role on every tenant \(\*\) \(Nora Nobody has no roles\)/,
    );
  });

  it("attributes a pipeline's start and answer to the identity it is configured with (TEMPORAL_CLIENT_IDENTITY)", async () => {
    const env = shared!.env;
    const pipeline = await ConnectionsClient.connect(
      loadClientConfig({
        TEMPORAL_ADDRESS: env.address,
        TEMPORAL_NAMESPACE: env.namespace ?? 'default',
        TEMPORAL_TASK_QUEUE: shared!.stack.taskQueue,
        ...TEST_ENCRYPTION_ENV,
        TEMPORAL_CLIENT_IDENTITY: 'pipeline:loan-origination',
      }),
    );
    try {
      const id = connectionKey(tenantA, uniqueId('app'));
      await pipeline.startAndAwaitFirstStep(id, liveInput(tenantA, 'security_question', scenario.institution));
      assert.equal((await pipeline.answer(id, RIGHT_ANSWER)).outcome, 'accepted');
      const activity = await pipeline.activity(id);
      assert.deepEqual(
        activity.filter((entry) => entry.action === 'started' || entry.name === 'submitAnswer').map((entry) => [entry.action, entry.who]),
        [
          ['started', 'pipeline:loan-origination'],
          ['update', 'pipeline:loan-origination'],
        ],
      );
    } finally {
      await pipeline.close();
    }
  });

  it('records who signed in, answered and was refused, per tenant; an admin reads it back (JSON and JSON lines), an operator may not', async () => {
    const since = new Date();
    const alice = await signedIn('alice');
    const id = connectionKey(tenantA, uniqueId('app'));
    await shared!.client.startAndAwaitFirstStep(id, liveInput(tenantA, 'security_question', scenario.institution));
    assert.equal((await api(alice, `/api/connections/${encodeURIComponent(id)}/answer`, RIGHT_ANSWER)).status, 200);
    assert.equal((await api(alice, `/api/connections/${encodeURIComponent(ofB)}/cancel`, {})).status, 403);
    const refusedRead = await api(alice, `/api/audit?customer=${tenantA}`);
    assert.equal(refusedRead.status, 403, 'reading the trail takes the admin role');

    const trail = await audit.query({ from: since, limit: 100 });
    const line = (entry: (typeof trail)[number]) => [entry.actor.name, entry.action, entry.tenant, entry.target, entry.outcome, entry.outcomeDetail];
    assert.deepEqual(trail.filter((entry) => entry.actor.subject === 'alice').map(line), [
      ['Alice Operator', 'sign-in', tenantA, null, 'ok', null],
      ['Alice Operator', 'answer', tenantA, id, 'ok', 'accepted'],
      ['Alice Operator', 'cancel', tenantB, ofB, 'refused', 'Forbidden'],
      ['Alice Operator', 'audit.read', tenantA, null, 'refused', 'Forbidden'],
    ]);
    const answered = JSON.stringify(RIGHT_ANSWER.responses).match(/"[^"]{4,}"/g) ?? [];
    assert.ok(answered.length > 0 && answered.every((text) => !JSON.stringify(trail).includes(text)), 'the answer itself is never recorded');

    const pat = await signedIn('pat');
    const ofTenantA = json(await api(pat, `/api/audit?customer=${tenantA}&from=${encodeURIComponent(since.toISOString())}`));
    const entries = ofTenantA.entries as { action: string; tenant: string; actor: { name: string } }[];
    assert.ok(entries.length >= 2 && entries.every((entry) => entry.tenant === tenantA), JSON.stringify(entries));
    assert.ok(entries.some((entry) => entry.action === 'answer' && entry.actor.name === 'Alice Operator'));
    assert.ok(
      entries.some((entry) => entry.action === 'sign-in' && entry.actor.name === 'Alice Operator'),
      "tenant A's admin reads who signed in to work on A",
    );
    // The console's default tenant is A: without ?customer= the same entries, sign-ins among them.
    const ofDefault = json(await api(pat, `/api/audit?from=${encodeURIComponent(since.toISOString())}`)).entries as {
      action: string;
      actor: { name: string };
    }[];
    assert.ok(
      ofDefault.some((entry) => entry.action === 'sign-in' && entry.actor.name === 'Alice Operator'),
      JSON.stringify(ofDefault),
    );
    const patSignIns = (await audit.query({ from: since, limit: 100 })).filter((entry) => entry.actor.subject === 'pat' && entry.action === 'sign-in');
    assert.deepEqual(
      patSignIns.map((entry) => entry.tenant),
      [null],
      'an admin of every tenant signs in to none in particular',
    );
    const exported = await api(pat, `/api/audit?customer=${tenantB}&format=jsonl`);
    assert.match(exported.headers.get('content-type') ?? '', /^application\/x-ndjson/);
    const lines = exported.body
      .trimEnd()
      .split('\n')
      .map((text) => JSON.parse(text) as { action: string; tenant: string });
    assert.ok(
      lines.some((entry) => entry.action === 'cancel' && entry.tenant === tenantB),
      exported.body,
    );
    const bad = await api(pat, '/api/audit?from=yesterday');
    assert.deepEqual([bad.status, json(bad).error], [400, 'InvalidRequest']);
    assert.match(json(bad).message as string, /from: must be an ISO 8601 time/);
  });

  it('refuses an answer it cannot record (503 AuditUnavailable) and leaves the connection unanswered', async () => {
    const token = randomBytes(24).toString('hex');
    // The store's directory is a file: every write fails, as with a database that is down.
    const broken = tempAuditTrail(`${process.execPath}/audit.jsonl`);
    const unrecorded = createConsoleServer({ audit: broken, connections: shared!.client, token });
    const { url } = await unrecorded.listen(0);
    try {
      const id = connectionKey(tenantA, uniqueId('app'));
      await shared!.client.startAndAwaitFirstStep(id, liveInput(tenantA, 'security_question', scenario.institution));
      const answer = await fetch(`${url}/api/connections/${encodeURIComponent(id)}/answer`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', origin: url },
        body: JSON.stringify(RIGHT_ANSWER),
      });
      const body = (await answer.json()) as { error?: string; message?: string };
      assert.deepEqual([answer.status, body.error], [503, 'AuditUnavailable'], JSON.stringify(body));
      assert.match(body.message ?? '', /nothing was done, as nothing can be recorded/);
      assert.equal((await shared!.client.getState(id)).status, 'AwaitingAnswer');
    } finally {
      await unrecorded.close();
    }
  });

  it('signs nobody in with a wrong password', async () => {
    const browser = new HttpBrowser();
    const login = await browser.open(`${consoleUrl}/`);
    const wrong = await browser.submit(login, { username: 'alice', password: 'wrong' });
    assert.equal(wrong.status, 401);
    assert.match(wrong.body, /Wrong username or password/);
    assert.equal(browser.cookies.has(SESSION_COOKIE), false);
  });

  it('refuses a changed session, a session sealed by another console and an expired one, by name', async () => {
    const pat = await signedIn('pat');
    const session = pat.cookies.get(SESSION_COOKIE) ?? assert.fail('session');
    const tampered = `${session.slice(0, -6)}${session.slice(-6) === 'AAAAAA' ? 'BBBBBB' : 'AAAAAA'}`;
    pat.cookies.set(SESSION_COOKIE, tampered);
    const changed = await api(pat, '/api/me');
    assert.equal(changed.status, 401);
    assert.equal(json(changed).error, 'SessionInvalid');
    pat.cookies.set(
      SESSION_COOKIE,
      await new SealedCookies(randomBytes(32)).seal('session', { sub: 'pat', name: 'Pat Platform', roles: [['*', ['admin']]] }, Date.now() + 60_000),
    );
    assert.equal(json(await api(pat, '/api/me')).error, 'SessionInvalid', "another console's key");
    pat.cookies.set(
      SESSION_COOKIE,
      await new SealedCookies(sessionKey).seal('session', { sub: 'pat', name: 'Pat Platform', roles: [['*', ['admin']]] }, Date.now() - 120_000),
    );
    const expired = await api(pat, '/api/me');
    assert.deepEqual([expired.status, json(expired).error], [401, 'SessionExpired']);
    const page = await pat.request(`${consoleUrl}/`);
    assert.equal(page.status, 303, 'a page with an expired session goes to sign in again');
  });

  it('ends the session on the server at sign-out: a copy of its cookie is refused here at once and by another console at its recheck; both recorded', async () => {
    const since = new Date();
    const alice = await signedIn('alice');
    const copied = alice.cookies.get(SESSION_COOKIE) ?? assert.fail('session');
    // Another replica of the console: the same session key, its own memory.
    const replicaPort = await freePort();
    const replica = createConsoleServer({
      audit,
      connections: shared!.client,
      token: undefined,
      signIn: consoleSignIn(new OidcSignIn(settings(provider.issuer, `${consoleUrl}/auth/callback`)), new SealedCookies(sessionKey), { audit }),
      defaultCustomerId: tenantA,
    });
    await replica.listen(replicaPort);
    try {
      const onReplica = (cookie: string) => fetch(`http://127.0.0.1:${replicaPort}/api/me`, { headers: { cookie: `${SESSION_COOKIE}=${cookie}` } });
      assert.equal((await onReplica(copied)).status, 200, 'the session works on every replica');
      const out = await alice.request(`${consoleUrl}/auth/logout`);
      assert.equal(out.status, 303);
      const thief = new HttpBrowser();
      thief.cookies.set(SESSION_COOKIE, copied);
      const refused = await api(thief, '/api/me');
      assert.deepEqual([refused.status, json(refused).error], [401, 'SessionEnded'], refused.body);
      assert.equal((await api(thief, `/api/connections/${encodeURIComponent(ofA)}`)).status, 401, 'nor any route');
      const elsewhere = await onReplica(copied);
      assert.deepEqual(
        [elsewhere.status, ((await elsewhere.json()) as { error?: string }).error],
        [401, 'SessionRevoked'],
        'the provider revoked its token: the other console ends it at its recheck',
      );
    } finally {
      await replica.close();
    }
    const trail = (await audit.query({ from: since, limit: 100 })).filter((entry) => entry.actor.subject === 'alice');
    assert.deepEqual(
      trail.map((entry) => [entry.action, entry.tenant, entry.outcome, entry.outcomeDetail]),
      [
        ['sign-in', tenantA, 'ok', null],
        ['sign-out', tenantA, 'ok', 'access token revoked at the provider'],
      ],
    );
  });

  it('ends the session of an identity the provider disables, at the next request', async () => {
    const vera = await signedIn('vera');
    assert.equal((await api(vera, '/api/me')).status, 200);
    provider.disable('vera');
    const revoked = await api(vera, '/api/me');
    assert.deepEqual([revoked.status, json(revoked).error], [401, 'SessionRevoked']);
    const again = await new HttpBrowser().open(`${consoleUrl}/`).then((login) => new HttpBrowser().submit(login, { username: 'vera', password: PASSWORD }));
    assert.notEqual(again.status, 200, 'nor can it sign in again');
  });

  it('fails sign-in with a page naming the provider while it is down, and keeps signed-in operators working', async () => {
    const pat = await signedIn('pat');
    await provider.stop();
    const down = await new HttpBrowser().open(`${consoleUrl}/`);
    assert.equal(down.status, 502);
    assert.match(down.body, new RegExp(`the identity provider at ${provider.issuer.replace(/[.]/g, '\\.')}/ did not answer`));
    const still = await api(pat, '/api/me');
    assert.equal(still.status, 200, 'a signed-in session carries on until it expires');
    assert.equal((await api(pat, `/api/connections/${encodeURIComponent(ofB)}`)).status, 200, 'an admin of every tenant reads B');
  });
});
