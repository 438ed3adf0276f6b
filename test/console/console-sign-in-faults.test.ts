/**
 * The console's OpenID Connect relying party refuses a bad answer by name and leaves no session:
 * driven through the console's real /auth/* routes (redirects followed by hand, cookies carried)
 * against a rogue issuer (test/helpers/rogue-oidc-issuer.ts) whose ID token each test writes:
 * another audience, another issuer, issued in the future or expired beyond the clock tolerance, a
 * key the provider does not publish, a forged signature, another sign-in's nonce; and a sign-in or
 * session cookie with one byte changed, or sealed by another console's secret. An honest answer
 * from the same issuer signs in (so each refusal is of the lie, not of the double), and so do
 * times skewed within the tolerance. Every refused sign-in is in the audit trail. The happy path
 * against a real, certified provider is test/console/console-sign-in.test.ts.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { createConsoleServer, type ConsoleServer } from '../../src/console/app.js';
import { consoleSignIn, SESSION_COOKIE } from '../../src/console/sign-in.js';
import type { ConnectionsClient } from '../../src/client/index.js';
import { OidcSignIn } from '../../src/identity/oidc-sign-in.js';
import { parseRoleMap } from '../../src/identity/roles.js';
import { SEAL_CLOCK_TOLERANCE_S, SealedCookies } from '../../src/identity/sealed-cookie.js';
import { freePort } from '../../scripts/lib/free-port.js';
import { HttpBrowser, type Visit } from '../../scripts/lib/http-browser.js';
import { tempAuditTrail } from '../helpers/audit.js';
import { RogueOidcIssuer, type RogueIdTokenPlan } from '../helpers/rogue-oidc-issuer.js';

const CLIENT_ID = 'console';
const CLIENT_SECRET = 'console-secret-for-rogue-tests';
const SIGN_IN_COOKIE = 'console_sign_in';
const TENANT = 'lender-rogue';
const within = Math.floor((SEAL_CLOCK_TOLERANCE_S * 2) / 3);
const beyond = SEAL_CLOCK_TOLERANCE_S * 4;

let rogue: RogueOidcIssuer;
let consoleServer: ConsoleServer;
let consoleUrl: string;
let sessionKey: Uint8Array;
const audit = tempAuditTrail();

/** Sign-in never reaches Temporal: any use of the console's client fails the test, naming what reached it. */
function unreachableConnections(path = 'connections'): ConnectionsClient {
  const refuse = (): never => {
    throw new Error(`sign-in reached the console's Temporal client (${path})`);
  };
  return new Proxy(refuse, { get: (_target, key) => unreachableConnections(`${path}.${String(key)}`) }) as unknown as ConnectionsClient;
}

/** One sign-in through the console and the rogue issuer, each redirect followed by hand: the console's answer at its callback. */
async function signIn(
  plan: RogueIdTokenPlan,
  browser = new HttpBrowser(),
  beforeCallback?: (browser: HttpBrowser) => void | Promise<void>,
): Promise<{ browser: HttpBrowser; callback: Visit }> {
  rogue.answerNextWith(plan);
  const login = await browser.request(`${consoleUrl}/auth/login?return=%2Fconnections`);
  assert.equal(login.status, 303, login.body);
  const toIssuer = login.location ?? assert.fail('a redirect to the issuer');
  assert.ok(toIssuer.startsWith(`${rogue.issuer}/authorize?`), `to the issuer: ${toIssuer}`);
  assert.ok(browser.cookies.has(SIGN_IN_COOKIE), 'the sign-in under way is sealed in a cookie');
  const back = await browser.request(toIssuer);
  assert.equal(back.status, 303, back.body);
  const toCallback = back.location ?? assert.fail('a redirect back to the console');
  assert.ok(toCallback.startsWith(`${consoleUrl}/auth/callback?`), `back to the console: ${toCallback}`);
  await beforeCallback?.(browser);
  return { browser, callback: await browser.request(toCallback) };
}

/** The text of the console's sign-in failure page. */
function messageOf(visit: Visit): string {
  const text = /<p id="message">([\s\S]*?)<\/p>/.exec(visit.body)?.[1] ?? assert.fail(`no message on the page: ${visit.body.slice(0, 300)}`);
  return text.replace(/&#(\d+);/g, (_all, code: string) => String.fromCharCode(Number(code)));
}

/** Sessions this answer set (a cleared cookie is none). */
function sessionsSet(visit: Visit): string[] {
  return visit.headers.getSetCookie().filter((line) => line.startsWith(`${SESSION_COOKIE}=`) && !/^[^=]+=;/.test(line) && !/max-age=0\b/i.test(line));
}

/** The refused sign-in's entries in the audit trail since `since`. */
async function refusalsSince(since: Date): Promise<{ subject: string; detail: string }[]> {
  const trail = await audit.query({ from: since, limit: 100 });
  return trail
    .filter((entry) => entry.action === 'sign-in' && entry.outcome === 'refused')
    .map((entry) => ({ subject: entry.actor.subject, detail: entry.outcomeDetail ?? '' }));
}

/** A sign-in page that names `reason`, a clean page (no stack, no token), no session after it, and the refusal in the audit trail. */
async function assertRefused({ browser, callback }: { browser: HttpBrowser; callback: Visit }, since: Date, status: number, reason: RegExp): Promise<void> {
  assert.equal(callback.status, status, callback.body.slice(0, 500));
  assert.match(callback.headers.get('content-type') ?? '', /^text\/html/);
  const message = messageOf(callback);
  assert.match(message, reason);
  assert.doesNotMatch(callback.body, /\n\s+at |node_modules|\bstack\b/, 'no stack trace on the page');
  for (const token of rogue.issuedIdTokens) assert.ok(!callback.body.includes(token), 'the ID token is not on the page');
  assert.deepEqual(sessionsSet(callback), [], 'no session cookie is set');
  assert.equal(browser.cookies.has(SESSION_COOKIE), false);
  const me = await browser.request(`${consoleUrl}/api/me`);
  assert.deepEqual([me.status, (JSON.parse(me.body) as { error?: string }).error], [401, 'SignInRequired'], 'and the API knows nobody');
  const refusals = await refusalsSince(since);
  assert.ok(
    refusals.some(({ subject, detail }) => subject === 'unknown' && reason.test(detail)),
    `the refusal is in the audit trail: ${JSON.stringify(refusals)}`,
  );
}

/** `sealed` with one byte of its ciphertext changed (a JWE's fourth part). */
function oneByteChanged(sealed: string): string {
  const parts = sealed.split('.');
  const ciphertext = Buffer.from(parts[3] ?? assert.fail('a compact JWE'), 'base64url');
  const at = Math.floor(ciphertext.length / 2);
  ciphertext[at] = (ciphertext[at] ?? 0) ^ 0x01;
  parts[3] = ciphertext.toString('base64url');
  return parts.join('.');
}

before(async () => {
  rogue = await RogueOidcIssuer.start({ clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, identity: { sub: 'olga', name: 'Olga Operator', groups: ['ops'] } });
  const port = await freePort();
  consoleUrl = `http://127.0.0.1:${port}`;
  sessionKey = randomBytes(32);
  const oidc = new OidcSignIn({
    issuer: new URL(rogue.issuer),
    clientId: CLIENT_ID,
    clientSecret: CLIENT_SECRET,
    redirectUri: `${consoleUrl}/auth/callback`,
    groupsClaim: 'groups',
    roleMap: parseRoleMap(`ops=operator@${TENANT}`),
    timeoutMs: 2_000,
    recheckMs: 60_000,
    sessionMaxMs: 3_600_000,
    allowHttp: true,
  });
  const signInRoutes = consoleSignIn(oidc, new SealedCookies(sessionKey), { audit });
  consoleServer = createConsoleServer({ audit, connections: unreachableConnections(), token: undefined, signIn: signInRoutes, defaultCustomerId: TENANT });
  await consoleServer.listen(port);
});

after(async () => {
  await consoleServer?.close();
  await rogue?.stop();
});

describe("the console's sign-in against a rogue issuer", () => {
  it("signs in on the issuer's honest answer (the double works), and records the sign-in", async () => {
    const since = new Date();
    const { browser, callback } = await signIn({});
    assert.equal(callback.status, 303, callback.body);
    assert.equal(callback.location, `${consoleUrl}/connections`);
    assert.equal(sessionsSet(callback).length, 1);
    const me = await browser.request(`${consoleUrl}/api/me`);
    assert.equal(me.status, 200, me.body);
    assert.deepEqual(JSON.parse(me.body), { subject: 'olga', name: 'Olga Operator', via: 'oidc', roles: `operator@${TENANT}` });
    const trail = await audit.query({ from: since, limit: 100 });
    assert.deepEqual(
      trail.filter((entry) => entry.action === 'sign-in').map((entry) => [entry.actor.subject, entry.outcome]),
      [['olga', 'ok']],
    );
  });

  it(`accepts an ID token issued ${within} s in the future, or expired ${within} s ago: within the ${SEAL_CLOCK_TOLERANCE_S} s clock tolerance`, async () => {
    for (const plan of [{ iatOffsetS: within }, { expInS: -within }]) {
      const { browser, callback } = await signIn(plan);
      assert.equal(callback.status, 303, `${JSON.stringify(plan)}: ${callback.body.slice(0, 300)}`);
      assert.equal(sessionsSet(callback).length, 1, JSON.stringify(plan));
      assert.equal((await browser.request(`${consoleUrl}/api/me`)).status, 200, JSON.stringify(plan));
    }
  });

  it('refuses an ID token for another audience, by name', async () => {
    const since = new Date();
    await assertRefused(
      await signIn({ aud: 'another-console' }),
      since,
      403,
      /^sign-in refused: the ID token is for another audience \(another-console, not console\)/,
    );
  });

  it('refuses an ID token from another issuer, by name', async () => {
    const since = new Date();
    await assertRefused(
      await signIn({ iss: 'https://idp.elsewhere.example' }),
      since,
      403,
      /^sign-in refused: the ID token is from another issuer \(https:\/\/idp\.elsewhere\.example, not http:\/\/127\.0\.0\.1:\d+\)/,
    );
  });

  it(`refuses an ID token issued ${beyond} s in the future: beyond the clock tolerance`, async () => {
    const since = new Date();
    await assertRefused(
      await signIn({ iatOffsetS: beyond }),
      since,
      403,
      new RegExp(`^sign-in refused: the ID token was issued in the future \\(at [^)]+, beyond ${SEAL_CLOCK_TOLERANCE_S} s of clock tolerance\\)`),
    );
  });

  it(`refuses an ID token that expired ${beyond} s ago: beyond the clock tolerance`, async () => {
    const since = new Date();
    await assertRefused(
      await signIn({ expInS: -beyond }),
      since,
      403,
      new RegExp(`^sign-in refused: the ID token has expired \\(at [^)]+, beyond ${SEAL_CLOCK_TOLERANCE_S} s of clock tolerance\\)`),
    );
  });

  it('refuses an ID token signed with a key the issuer does not publish, by name', async () => {
    const since = new Date();
    await assertRefused(
      await signIn({ signWith: 'unpublished' }),
      since,
      403,
      /^sign-in refused: the ID token is signed with a key the provider does not publish \(kid rogue-unpublished\)/,
    );
  });

  it("refuses an ID token whose signature does not verify under the published key's kid, by name", async () => {
    const since = new Date();
    await assertRefused(
      await signIn({ signWith: 'forged-under-published-kid' }),
      since,
      403,
      /^sign-in refused: the ID token's signature does not verify under the provider's published keys/,
    );
  });

  it("refuses an ID token carrying another sign-in's nonce, by name", async () => {
    const since = new Date();
    await assertRefused(await signIn({ nonce: 'the-nonce-of-another-sign-in' }), since, 403, /^sign-in refused: the ID token's nonce is not this sign-in's/);
  });

  it('refuses a sign-in cookie with one byte changed, and one sealed by another console, by name', async () => {
    const since = new Date();
    const changed = await signIn({}, new HttpBrowser(), (browser) => {
      browser.cookies.set(SIGN_IN_COOKIE, oneByteChanged(browser.cookies.get(SIGN_IN_COOKIE) ?? assert.fail('a sign-in cookie')));
    });
    await assertRefused(
      changed,
      since,
      400,
      /^the sign-in cookie is not one this console sealed \(ERR_JWE_DECRYPTION_FAILED\): it was changed, or comes from another console/,
    );

    const foreign = await signIn({}, new HttpBrowser(), async (browser) => {
      // The same sign-in under way (its state, nonce and verifier), sealed with another console's secret.
      const pending = await new SealedCookies(sessionKey).open('sign-in', browser.cookies.get(SIGN_IN_COOKIE) ?? assert.fail('a sign-in cookie'));
      browser.cookies.set(SIGN_IN_COOKIE, await new SealedCookies(randomBytes(32)).seal('sign-in', pending, Date.now() + 60_000));
    });
    await assertRefused(foreign, since, 400, /^the sign-in cookie is not one this console sealed \(ERR_JWE_DECRYPTION_FAILED\)/);
  });

  it('refuses a session cookie with one byte changed, and one sealed by another console, by name (401), and sends a page to sign in', async () => {
    const alterations: ((sealed: string) => string | Promise<string>)[] = [
      (sealed) => oneByteChanged(sealed),
      // The same session's claims, sealed with another console's secret.
      async (sealed) => new SealedCookies(randomBytes(32)).seal('session', await new SealedCookies(sessionKey).open('session', sealed), Date.now() + 60_000),
    ];
    for (const alter of alterations) {
      const { browser, callback } = await signIn({});
      assert.equal(callback.status, 303, callback.body);
      browser.cookies.set(SESSION_COOKIE, await alter(browser.cookies.get(SESSION_COOKIE) ?? assert.fail('a session cookie')));
      const me = await browser.request(`${consoleUrl}/api/me`);
      const body = JSON.parse(me.body) as { error?: string; message?: string };
      assert.deepEqual([me.status, body.error], [401, 'SessionInvalid'], me.body);
      assert.match(
        body.message ?? '',
        /^the session cookie is not one this console sealed \(ERR_JWE_DECRYPTION_FAILED\): it was changed, or comes from another console; sign in again \(\/auth\/login\)$/,
      );
      assert.deepEqual(sessionsSet(me), [], 'no session is set in its place');
      const page = await browser.request(`${consoleUrl}/connections`, { headers: { accept: 'text/html' } });
      assert.deepEqual([page.status, page.location], [303, `${consoleUrl}/auth/login?return=%2Fconnections`]);
    }
  });
});
