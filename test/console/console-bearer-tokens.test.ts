/**
 * A person's access token on the console's API (issue 44): the token the CLI's `login` got from the
 * provider operators sign in with is taken as `Authorization: Bearer`, vouched for by the provider
 * (introspection, then userinfo), with that person's roles per tenant, and recorded in the audit trail
 * as that person. Against a real provider (oidc-provider) and a real dev server, worker and sandbox.
 * Refused by name: a token of a client the console does not take, one the provider does not know, a
 * revoked one, a disabled identity's; a viewer's token may not answer; a provider that is down leaves
 * a token it vouched for working and refuses one it never saw (503), never taking it on trust.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createConsoleServer, type ConsoleServer } from '../../src/console/app.js';
import { consoleSignIn } from '../../src/console/sign-in.js';
import { connectionKey } from '../../src/client/index.js';
import { BearerIdentities } from '../../src/identity/bearer-identities.js';
import { OidcSignIn } from '../../src/identity/oidc-sign-in.js';
import { parseRoleMap } from '../../src/identity/roles.js';
import { SealedCookies } from '../../src/identity/sealed-cookie.js';
import { describeScenario, SCENARIOS } from '../../sandbox/scenarios.js';
import { freePort } from '../../scripts/lib/free-port.js';
import { cliAs } from '../../scripts/lib/cli-as.js';
import { DevOidcProvider } from '../../scripts/lib/oidc-dev-provider.js';
import { tempAuditTrail } from '../helpers/audit.js';
import { uniqueId } from '../helpers/temporal.js';
import { liveInput, startClientStack, stopClientStack, type ClientStack } from '../client/client-stack.js';

const tenantA = `lender-a-${uniqueId('t').slice(-6)}`;
const tenantB = `lender-b-${uniqueId('t').slice(-6)}`;
const PASSWORD = 'correct horse battery staple';
const scenario = SCENARIOS.find((entry) => entry.username === 'security_question') ?? assert.fail('the security_question scenario');
const RIGHT_ANSWER = { challengeSetId: '1', responses: describeScenario(scenario).challengeSequence[0]?.answer ?? assert.fail('its first answer') };

let shared: ClientStack | undefined;
let provider: DevOidcProvider;
let consoleServer: ConsoleServer;
let consoleUrl: string;
let dir: string;
let ofA: string;
let ofB: string;
const audit = tempAuditTrail();

/** An access token of `username`, got as the CLI gets one (`login`, the browser signing in), as client `clientId`. */
async function accessTokenOf(username: string, clientId = 'aggregation-cli'): Promise<string> {
  const credentials = join(dir, `${username}-${clientId}.json`);
  const cli = cliAs({
    env: {
      CLI_OIDC_ISSUER: provider.issuer,
      CLI_OIDC_CLIENT_ID: clientId,
      CLI_CREDENTIALS_FILE: credentials,
      AUDIT_STORE: `file:${join(dir, 'cli-audit.jsonl')}`,
    },
    username,
    password: PASSWORD,
    connect: () => Promise.reject(new Error('no Temporal for login')),
  });
  assert.equal((await cli.run(['login'])).code, 0, `${username} signed in through the CLI as ${clientId}`);
  return (JSON.parse(readFileSync(credentials, 'utf8')) as { accessToken: string }).accessToken;
}

function call(token: string, path: string, body?: unknown): Promise<Response> {
  return fetch(`${consoleUrl}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

async function json(response: Response): Promise<Record<string, unknown>> {
  return (await response.json()) as Record<string, unknown>;
}

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'console-bearer-'));
  shared = await startClientStack();
  const consolePort = await freePort();
  consoleUrl = `http://127.0.0.1:${consolePort}`;
  provider = await DevOidcProvider.start({
    identities: [
      { username: 'alice', password: PASSWORD, name: 'Alice Operator', groups: ['a-ops'] },
      { username: 'vera', password: PASSWORD, name: 'Vera Viewer', groups: ['a-viewers'] },
      { username: 'kim', password: PASSWORD, name: 'Kim Leaver', groups: ['a-ops'] },
    ],
    clients: [
      { clientId: 'console', clientSecret: 'console-secret-for-tests', redirectUris: [`${consoleUrl}/auth/callback`] },
      { clientId: 'aggregation-cli', redirectUris: ['http://127.0.0.1/callback'] },
      // Another application of the same provider: its tokens are not for the console.
      { clientId: 'expense-app', redirectUris: ['http://127.0.0.1/callback'] },
    ],
  });
  const oidc = new OidcSignIn({
    issuer: new URL(provider.issuer),
    clientId: 'console',
    clientSecret: 'console-secret-for-tests',
    redirectUri: `${consoleUrl}/auth/callback`,
    groupsClaim: 'groups',
    roleMap: parseRoleMap(`a-ops=operator@${tenantA},a-viewers=viewer@${tenantA}`),
    timeoutMs: 2_000,
    // Every request asks the provider again: a revocation shows at once.
    recheckMs: 0,
    sessionMaxMs: 3_600_000,
    allowHttp: true,
  });
  const signIn = consoleSignIn(oidc, new SealedCookies(randomBytes(32)), { audit });
  const bearerIdentities = new BearerIdentities(oidc, { acceptedClients: ['aggregation-cli'] });
  consoleServer = createConsoleServer({ audit, connections: shared.client, token: undefined, signIn, bearerIdentities, defaultCustomerId: tenantA });
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
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("a person's access token on the console's API", () => {
  it("acts as that person with that person's roles, refused on another tenant's work, and is recorded as that person", async () => {
    const alice = await accessTokenOf('alice');
    const me = await json(await call(alice, '/api/me'));
    assert.deepEqual([me.subject, me.name, me.via, me.roles], ['alice', 'Alice Operator', 'oidc-bearer', `operator@${tenantA}`]);
    const listed = (await json(await call(alice, '/api/connections?status=any'))).connections as { workflowId: string }[];
    assert.ok(
      listed.some((c) => c.workflowId === ofA),
      "A's connection is listed",
    );
    assert.ok(!listed.some((c) => c.workflowId === ofB), "B's is not");
    const refused = await call(alice, `/api/connections/${encodeURIComponent(ofB)}/answer`, RIGHT_ANSWER);
    assert.equal(refused.status, 403);
    assert.equal((await shared!.client.getState(ofB)).status, 'AwaitingAnswer', "B's connection was not answered");
    const answered = await call(alice, `/api/connections/${encodeURIComponent(ofA)}/answer`, RIGHT_ANSWER);
    assert.equal(answered.status, 200);
    assert.equal(((await json(answered)).outcome as { outcome?: string }).outcome, 'accepted');
    const entries = await audit.store.query({ limit: 100 });
    const answer = entries.find((entry) => entry.action === 'answer' && entry.target === ofA);
    assert.deepEqual([answer?.actor.subject, answer?.actor.via, answer?.outcome], ['alice', 'oidc-bearer', 'ok']);
    const probe = entries.find((entry) => entry.action === 'answer' && entry.target === ofB);
    assert.deepEqual([probe?.actor.subject, probe?.outcome], ['alice', 'refused'], "the refused answer on B's connection is recorded as Alice's");
  });

  it("lets a viewer's token look and not answer", async () => {
    const vera = await accessTokenOf('vera');
    assert.equal((await call(vera, `/api/connections/${encodeURIComponent(ofA)}`)).status, 200);
    const answer = await call(vera, `/api/connections/${encodeURIComponent(ofA)}/cancel`, {});
    assert.equal(answer.status, 403);
    assert.match((await json(answer)).message as string, /Vera Viewer may not cancel here: it takes the operator role/);
  });

  it('refuses a token of another client, one the provider never issued, a revoked one and a disabled identity’s, each by name', async () => {
    const foreign = await accessTokenOf('alice', 'expense-app');
    const other = await call(foreign, '/api/connections');
    assert.equal(other.status, 401);
    const otherBody = await json(other);
    assert.equal(otherBody.error, 'BearerTokenRefused');
    assert.match(
      otherBody.message as string,
      /issued to client "expense-app", whose tokens this console does not take \(CONSOLE_BEARER_CLIENTS: aggregation-cli\)/,
    );

    const forged = await json(await call(randomBytes(32).toString('base64url'), '/api/connections'));
    assert.deepEqual(
      [forged.error, forged.message],
      ['BearerTokenRefused', 'bearer token refused: the provider says it is not active (expired, revoked, or not one of its tokens)'],
    );

    const revoked = await accessTokenOf('alice');
    assert.equal((await call(revoked, '/api/me')).status, 200, 'good before its revocation');
    const revocation = await fetch(`${provider.issuer}/token/revocation`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: revoked, client_id: 'aggregation-cli' }),
    });
    assert.equal(revocation.status, 200, await revocation.text());
    const afterRevocation = await call(revoked, '/api/me');
    assert.equal(afterRevocation.status, 401);
    assert.match((await json(afterRevocation)).message as string, /not active/);

    const kim = await accessTokenOf('kim');
    assert.equal((await call(kim, '/api/me')).status, 200);
    provider.disable('kim');
    const disabled = await call(kim, `/api/connections/${encodeURIComponent(ofA)}/cancel`, {});
    assert.equal(disabled.status, 401);
    assert.equal((await json(disabled)).error, 'BearerTokenRefused');
    assert.equal((await shared!.client.getState(ofA)).status !== 'Cancelled', true, 'nothing was cancelled');
  });

  it('keeps a token the provider vouched for working while the provider is down, and refuses one it never saw with 503', async () => {
    const vouched = await accessTokenOf('vera');
    const unseen = await accessTokenOf('alice');
    assert.equal((await call(vouched, '/api/me')).status, 200);
    await provider.stop();
    assert.equal((await call(vouched, `/api/connections/${encodeURIComponent(ofA)}`)).status, 200, 'a vouched token carries on');
    const down = await call(unseen, '/api/me');
    assert.equal(down.status, 503);
    const body = await json(down);
    assert.equal(body.error, 'IdentityProviderUnavailable');
    assert.match(body.message as string, /did not answer .*a bearer token it has not vouched for yet cannot be checked/);
  });
});
