/**
 * No person reads an applicant's credentials: every sealed payload of an answered connection's
 * history (its input with the bank password, the operator's answer, the Authorize activity's inputs)
 * through the console's codec endpoint, as each role an operator can sign in with (a real
 * oidc-provider) and with the shared tokens, comes back without the password or an answer's value,
 * each shown as given, while the worker (which decodes in process) used them to complete the
 * connection. And the redaction itself, on the shapes it must find.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { createConsoleServer, type ConsoleServer } from '../../src/console/app.js';
import { toJson } from '../../src/console/codec.js';
import { consoleSignIn, SESSION_COOKIE } from '../../src/console/sign-in.js';
import { connectionKey } from '../../src/client/index.js';
import { dataConverterFor } from '../../src/codec/data-converter.js';
import { REDACTED, redactCredentials } from '../../src/contract/connection/credential-fields.js';
import { OidcSignIn } from '../../src/identity/oidc-sign-in.js';
import { parseRoleMap } from '../../src/identity/roles.js';
import { SealedCookies } from '../../src/identity/sealed-cookie.js';
import { describeScenario, SANDBOX_PASSWORD, SCENARIOS } from '../../sandbox/scenarios.js';
import { freePort } from '../../scripts/lib/free-port.js';
import { HttpBrowser } from '../../scripts/lib/http-browser.js';
import { DevOidcProvider } from '../../scripts/lib/oidc-dev-provider.js';
import { sealedPayloadsOf } from '../../scripts/security-check/tenant-attacks.js';
import { tempAuditTrail } from '../helpers/audit.js';
import { TEST_ENCRYPTION } from '../helpers/connection-stack.js';
import { uniqueId } from '../helpers/temporal.js';
import { liveInput, startClientStack, stopClientStack, type ClientStack } from '../client/client-stack.js';

const tenant = `lender-r-${uniqueId('t').slice(-6)}`;
const PASSWORD = 'correct horse battery staple';
const CONSOLE_TOKEN = `redaction-${uniqueId('token')}`;
const CODEC_TOKEN = `codec-${uniqueId('token')}`;
// The triple question's answers are in no holder's data (security_question's, Montreal, is also a city of the sandbox's addresses).
const scenario = SCENARIOS.find((entry) => entry.username === 'triple_question') ?? assert.fail('the triple_question scenario');
const ANSWER = { challengeSetId: '1', responses: describeScenario(scenario).challengeSequence[0]?.answer ?? assert.fail('its first answer') };
const ROLES = ['viewer', 'operator', 'analyst', 'admin'] as const;

let shared: ClientStack | undefined;
let provider: DevOidcProvider;
let signedInConsole: ConsoleServer;
let tokenConsole: ConsoleServer;
let signedInUrl: string;
let tokenUrl: string;
let payloads: ReturnType<typeof toJson>[];

before(async () => {
  shared = await startClientStack();
  const codecs = dataConverterFor({ encryption: TEST_ENCRYPTION })?.payloadCodecs;
  const [signedInPort, tokenPort] = [await freePort(), await freePort()];
  signedInUrl = `http://127.0.0.1:${signedInPort}`;
  tokenUrl = `http://127.0.0.1:${tokenPort}`;
  provider = await DevOidcProvider.start({
    identities: ROLES.map((role) => ({ username: role, password: PASSWORD, name: `The ${role}`, groups: [role] })),
    clients: [{ clientId: 'console', clientSecret: 'console-secret-for-tests', redirectUris: [`${signedInUrl}/auth/callback`] }],
  });
  const oidc = new OidcSignIn({
    issuer: new URL(provider.issuer),
    clientId: 'console',
    clientSecret: 'console-secret-for-tests',
    redirectUri: `${signedInUrl}/auth/callback`,
    groupsClaim: 'groups',
    // The stack's payloads are sealed under the product's key, so they name no tenant: reading them takes a role on every tenant.
    roleMap: parseRoleMap(ROLES.map((role) => `${role}=${role}@${role === 'analyst' || role === 'admin' ? '*' : tenant}`).join(',')),
    timeoutMs: 2_000,
    recheckMs: 60_000,
    sessionMaxMs: 3_600_000,
    allowHttp: true,
  });
  const audit = tempAuditTrail();
  signedInConsole = createConsoleServer({
    audit,
    connections: shared.client,
    token: undefined,
    signIn: consoleSignIn(oidc, new SealedCookies(randomBytes(32)), { audit }),
    payloadCodecs: codecs,
  });
  await signedInConsole.listen(signedInPort, '127.0.0.1');
  tokenConsole = createConsoleServer({ audit, connections: shared.client, token: CONSOLE_TOKEN, codecToken: CODEC_TOKEN, payloadCodecs: codecs });
  await tokenConsole.listen(tokenPort, '127.0.0.1');

  // A connection answered by its operator and completed: every payload it wrote is in its history.
  const workflowId = connectionKey(tenant, uniqueId('app'));
  await shared.client.startAndAwaitFirstStep(workflowId, liveInput(tenant, scenario.username, scenario.institution));
  await shared.client.answer(workflowId, ANSWER);
  assert.ok((await shared.client.result(workflowId)).accountsDetail, 'the worker read the password and the answer, and completed');
  payloads = (await sealedPayloadsOf(shared.stack.client, workflowId)).map(toJson);
});

after(async () => {
  await signedInConsole?.close();
  await tokenConsole?.close();
  await provider?.stop();
  await stopClientStack({ stack: shared?.stack, env: shared?.env });
});

/** What the codec endpoint answers `headers` for the connection's payloads: its status, and the decoded payloads' text. */
async function decodeAs(url: string, headers: Record<string, string>): Promise<{ status: number; texts: string[] }> {
  const response = await fetch(`${url}/codec/decode`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ payloads }),
  });
  const body = (await response.json()) as { payloads?: { data?: string }[] };
  return { status: response.status, texts: (body.payloads ?? []).map((payload) => Buffer.from(payload.data ?? '', 'base64').toString('utf8')) };
}

async function sessionOf(username: string): Promise<string> {
  const browser = new HttpBrowser();
  const login = await browser.open(`${signedInUrl}/`);
  await browser.submit(login, { username, password: PASSWORD });
  return browser.cookies.get(SESSION_COOKIE) ?? assert.fail(`${username} signed in`);
}

describe('credentials through the codec endpoint', () => {
  it('shows no password and no answer to any role or token, only that they were given', async () => {
    const secrets = [SANDBOX_PASSWORD, ...Object.values(ANSWER.responses).flat()];
    assert.ok(payloads.length >= 4, `the history holds the input, the answer and the activities' payloads (${payloads.length})`);
    const callers: [string, string, Record<string, string>][] = [
      ...(await Promise.all(
        ROLES.map(async (role) => [role, signedInUrl, { cookie: `${SESSION_COOKIE}=${await sessionOf(role)}` }] as [string, string, Record<string, string>]),
      )),
      ['the console token', tokenUrl, { authorization: `Bearer ${CONSOLE_TOKEN}` }],
      ['the codec token', tokenUrl, { authorization: `Bearer ${CODEC_TOKEN}` }],
    ];
    for (const [who, url, headers] of callers) {
      const { status, texts } = await decodeAs(url, headers);
      assert.equal(status, 200, who);
      assert.equal(texts.length, payloads.length, who);
      for (const secret of secrets) assert.ok(!texts.some((text) => text.includes(secret)), `${who} was shown a credential value`);
      const decoded = texts.filter((text) => !text.includes('"undecodable"'));
      // Roles that may not decode get every payload refused as not-permitted; those that may, the payloads with their credentials redacted.
      if (who === 'viewer' || who === 'operator') assert.equal(decoded.length, 0, `${who} may not decode at all`);
      else {
        assert.ok(
          decoded.some((text) => text.includes(`"password":"${REDACTED}"`)),
          `${who} reads that a password was given`,
        );
        assert.ok(
          decoded.some((text) => text.includes(`"responses":{`) && text.includes(REDACTED)),
          `${who} reads which prompts were answered`,
        );
        assert.ok(
          decoded.some((text) => text.includes(scenario.username)),
          `${who} still reads what is not a credential`,
        );
      }
    }
  });
});

describe('redactCredentials', () => {
  it("redacts a password and an answer's values wherever they sit, keeping the prompts and everything else", () => {
    const { value, redacted } = redactCredentials({
      customerId: 'lender-a',
      session: { kind: 'live', username: 'u', password: 'p1' },
      answer: { challengeSetId: '1', responses: { 'Mother’s maiden name?': ['Smith'], 'Code?': ['123456', '654321'] } },
      authorize: [{ Password: 'p2', SecurityResponses: { Q: ['A'] } }],
      empty: { password: null },
    });
    assert.deepEqual(value, {
      customerId: 'lender-a',
      session: { kind: 'live', username: 'u', password: REDACTED },
      answer: { challengeSetId: '1', responses: { 'Mother’s maiden name?': [REDACTED], 'Code?': [REDACTED, REDACTED] } },
      authorize: [{ Password: REDACTED, SecurityResponses: { Q: [REDACTED] } }],
      empty: { password: null },
    });
    assert.equal(redacted, 5);
  });

  it('withholds what nests deeper than any payload of ours, rather than walk it unredacted', () => {
    let deep: unknown = { password: 'deep secret' };
    for (let level = 0; level < 100; level += 1) deep = { next: deep };
    assert.ok(!JSON.stringify(redactCredentials(deep).value).includes('deep secret'));
  });
});
