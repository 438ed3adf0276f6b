/**
 * The console's connection counts per tenant (GET /api/connections/counts, src/console/count-routes.ts)
 * against a real dev server, worker and sandbox, with operators signed in through a real OpenID
 * Connect provider (scripts/lib/oidc-dev-provider.ts): tenant A's operator counts A's connections
 * only and is refused B's by name, the admin of A and B counts both, an identity with no role is
 * refused, and the counts match the connections started (awaiting an answer, terminated). The shared
 * token (every tenant) finds the tenants through visibility. The connections page shows the counts
 * above its lists, in headless Chromium, signed in as A's operator.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { createConsoleServer, type ConsoleServer } from '../../src/console/app.js';
import { consoleSignIn } from '../../src/console/sign-in.js';
import type { TenantConnectionCounts } from '../../src/client/connection-counts.js';
import { OidcSignIn } from '../../src/identity/oidc-sign-in.js';
import { parseRoleMap } from '../../src/identity/roles.js';
import { SealedCookies } from '../../src/identity/sealed-cookie.js';
import { SCENARIOS } from '../../sandbox/scenarios.js';
import { freePort } from '../../scripts/lib/free-port.js';
import { HttpBrowser } from '../../scripts/lib/http-browser.js';
import { DevOidcProvider } from '../../scripts/lib/oidc-dev-provider.js';
import { uniqueId, waitFor } from '../helpers/temporal.js';
import { startAwaiting } from '../client/client-stack.js';
import { CONSOLE_ARTIFACTS, CONSOLE_TEST_TOKEN, startConsoleStack, stopConsoleStack, type ConsoleStack } from './console-stack.js';

const tenantA = `count-a-${uniqueId('t').slice(-6)}`;
const tenantB = `count-b-${uniqueId('t').slice(-6)}`;
const PASSWORD = 'correct horse battery staple';
const scenario = SCENARIOS.find((entry) => entry.username === 'security_question') ?? assert.fail('the security_question scenario');

interface CountsBody {
  tenants: TenantConnectionCounts[];
  found: 'named' | 'roles' | 'visibility';
  more: boolean;
  countedAt: string;
}

let shared: ConsoleStack | undefined;
let provider: DevOidcProvider;
let signInConsole: ConsoleServer;
let signInUrl: string;

/** What the test started: A two awaiting an answer and one terminated, B one awaiting. */
const EXPECTED: Record<string, { awaiting: number; terminated: number; total: number }> = {
  [tenantA]: { awaiting: 2, terminated: 1, total: 3 },
  [tenantB]: { awaiting: 1, terminated: 0, total: 1 },
};

async function signedIn(username: string): Promise<HttpBrowser> {
  const browser = new HttpBrowser();
  const login = await browser.open(`${signInUrl}/`);
  const back = await browser.submit(login, { username, password: PASSWORD });
  assert.equal(back.status, 200, back.body.slice(0, 300));
  return browser;
}

async function countsAs(browser: HttpBrowser, query = ''): Promise<{ status: number; body: CountsBody & { error?: string; message?: string } }> {
  const visit = await browser.request(`${signInUrl}/api/connections/counts${query}`);
  return { status: visit.status, body: JSON.parse(visit.body) as CountsBody & { error?: string; message?: string } };
}

async function countsWithToken(query = ''): Promise<{ status: number; body: CountsBody & { error?: string; message?: string } }> {
  const response = await fetch(`${shared!.baseUrl}/api/connections/counts${query}`, { headers: { authorization: `Bearer ${CONSOLE_TEST_TOKEN}` } });
  return { status: response.status, body: (await response.json()) as CountsBody & { error?: string; message?: string } };
}

/** Whether `counts` are what the test started for its tenant (visibility catches up within moments). */
function matchesStarted(counts: TenantConnectionCounts | undefined): boolean {
  const expected = counts === undefined ? undefined : EXPECTED[counts.customerId];
  if (counts === undefined || expected === undefined) return false;
  return (
    counts.running.AwaitingAnswer === expected.awaiting &&
    counts.running.Authorizing === 0 &&
    counts.running.Retrieving === 0 &&
    counts.closed.Terminated === expected.terminated &&
    counts.closed.Completed === 0 &&
    counts.closed.Failed === 0 &&
    counts.total === expected.total
  );
}

before(async () => {
  shared = await startConsoleStack();
  const { client, stack, audit } = shared;
  const port = await freePort();
  signInUrl = `http://127.0.0.1:${port}`;
  provider = await DevOidcProvider.start({
    identities: [
      { username: 'alice', password: PASSWORD, name: 'Alice Operator', groups: ['a-ops'] },
      { username: 'abby', password: PASSWORD, name: 'Abby Admin', groups: ['ab-admins'] },
      { username: 'nora', password: PASSWORD, name: 'Nora Nobody', groups: ['unmapped'] },
    ],
    clients: [{ clientId: 'console', clientSecret: 'console-secret-for-tests', redirectUris: [`${signInUrl}/auth/callback`] }],
  });
  const signIn = consoleSignIn(
    new OidcSignIn({
      issuer: new URL(provider.issuer),
      clientId: 'console',
      clientSecret: 'console-secret-for-tests',
      redirectUri: `${signInUrl}/auth/callback`,
      groupsClaim: 'groups',
      roleMap: parseRoleMap(`a-ops=operator@${tenantA},ab-admins=admin@${tenantA},ab-admins=admin@${tenantB}`),
      timeoutMs: 2_000,
      recheckMs: 60_000,
      sessionMaxMs: 3_600_000,
      allowHttp: true,
    }),
    new SealedCookies(randomBytes(32)),
    { audit },
  );
  signInConsole = createConsoleServer({ audit, connections: client, token: undefined, signIn, defaultCustomerId: tenantA });
  await signInConsole.listen(port);
  await startAwaiting(client, tenantA, scenario.username, scenario.institution);
  await startAwaiting(client, tenantA, scenario.username, scenario.institution);
  const ended = await startAwaiting(client, tenantA, scenario.username, scenario.institution);
  await stack.client.workflow.getHandle(ended).terminate('console-counts test: a closed connection to count');
  await startAwaiting(client, tenantB, scenario.username, scenario.institution);
});

after(async () => {
  await signInConsole?.close();
  await provider?.stop();
  await stopConsoleStack(shared);
});

void describe('connection counts per tenant in the console', () => {
  void it("gives tenant A's operator A's counts only, matching the connections started, and refuses B's by name", async () => {
    const since = new Date();
    const alice = await signedIn('alice');
    const own = await waitFor(
      async () => {
        const { status, body } = await countsAs(alice);
        assert.equal(status, 200, JSON.stringify(body));
        return matchesStarted(body.tenants[0]) && body;
      },
      { describe: "A's counts as started", timeoutMs: 15_000 },
    );
    assert.deepEqual([own.found, own.more, own.tenants.map((counts) => counts.customerId)], ['roles', false, [tenantA]]);
    for (const query of [`?customer=${tenantB}`, `?customer=${tenantA},${tenantB}`]) {
      const refused = await countsAs(alice, query);
      assert.equal(refused.status, 403, `${query}: ${JSON.stringify(refused.body)}`);
      assert.match(refused.body.message ?? '', new RegExp(`Alice Operator may not read here: it takes the viewer role on tenant ${tenantB}`));
    }
    const named = await countsAs(alice, `?customer=${tenantA}`);
    assert.deepEqual([named.status, named.body.found, named.body.tenants.map((counts) => counts.customerId)], [200, 'named', [tenantA]]);
    // Each refusal is in the audit trail as a refused read of B, as every route's refusal is; A's counts, a read, are not recorded.
    const trail = await shared!.audit.query({ from: since, limit: 100 });
    const alices = trail.filter((entry) => entry.actor.name === 'Alice Operator' && entry.action !== 'sign-in');
    assert.deepEqual(
      alices.map((entry) => [entry.action, entry.tenant, entry.outcome, entry.outcomeDetail]),
      [
        ['read', tenantB, 'refused', 'Forbidden'],
        ['read', tenantB, 'refused', 'Forbidden'],
      ],
    );
  });

  void it('gives the admin of A and B both tenants, each counted as started; an identity with no role gets 403', async () => {
    const abby = await signedIn('abby');
    const both = await waitFor(
      async () => {
        const { body } = await countsAs(abby);
        return body.tenants.length === 2 && body.tenants.every(matchesStarted) && body;
      },
      { describe: "A's and B's counts as started", timeoutMs: 15_000 },
    );
    assert.deepEqual([both.found, both.tenants.map((counts) => counts.customerId)], ['roles', [tenantA, tenantB].sort()]);

    const nora = await signedIn('nora');
    const nothing = await countsAs(nora);
    assert.equal(nothing.status, 403);
    assert.match(nothing.body.message ?? '', /Nora Nobody may not read here: it takes the viewer role on every tenant \(\*\) \(Nora Nobody has no roles\)/);
  });

  void it('gives the shared token (every tenant) the tenants that have connections, found through visibility, and refuses a bad query', async () => {
    const found = await waitFor(
      async () => {
        const { status, body } = await countsWithToken('?limit=100');
        assert.equal(status, 200, JSON.stringify(body));
        const ours = body.tenants.filter((counts) => counts.customerId in EXPECTED);
        return ours.length === 2 && ours.every(matchesStarted) && body;
      },
      { describe: 'both tenants found and counted as started', timeoutMs: 15_000 },
    );
    assert.equal(found.found, 'visibility');
    const names = found.tenants.map((counts) => counts.customerId);
    assert.deepEqual(names, [...names].sort(), 'sorted by customer id');
    // Only our tenants are held to their counts (above): other files' tenants share the suite's server,
    // and one may delete its connections (a forget) between the look and the count, which then reads
    // 0 (a suite run saw it). A tenant that never had a connection is never found.
    assert.ok(!names.includes('a-lender-with-nothing'), 'a tenant without connections is not found');
    const one = await countsWithToken('?limit=1');
    assert.deepEqual([one.status, one.body.tenants.length, one.body.more], [200, 1, true], 'a limit below the tenants found says there are more');
    const named = await countsWithToken(`?customer=${tenantB},${tenantA}`);
    assert.deepEqual([named.body.found, named.body.tenants.map((counts) => counts.customerId)], ['named', [tenantB, tenantA]]);
    assert.ok(named.body.tenants.every(matchesStarted), JSON.stringify(named.body));
    const nobody = await countsWithToken('?customer=a-lender-with-nothing');
    assert.deepEqual(nobody.body.tenants[0], {
      customerId: 'a-lender-with-nothing',
      total: 0,
      running: { Authorizing: 0, AwaitingAnswer: 0, Retrieving: 0 },
      closed: { Completed: 0, Failed: 0, Canceled: 0, Terminated: 0, TimedOut: 0, ContinuedAsNew: 0 },
    });
    for (const [query, problem] of [
      ['?customer=no%20spaces', /customer: must be customer ids/],
      ['?customer=,', /customer: must name at least one customer id/],
      ['?limit=0', /limit/],
      ['?status=Running', /status/],
    ] as const) {
      const bad = await countsWithToken(query);
      assert.deepEqual([bad.status, bad.body.error], [400, 'InvalidRequest'], query);
      assert.match(bad.body.message ?? '', problem, query);
    }
  });

  void it("shows A's counts above the connection list to A's operator, and no other tenant", async () => {
    const context = await shared!.browser.newContext({ viewport: { width: 1280, height: 900 } });
    try {
      const page = await context.newPage();
      await page.goto(`${signInUrl}/`);
      await page.fill('input[name="username"]', 'alice');
      await page.fill('input[name="password"]', PASSWORD);
      await page.click('button[type="submit"]');
      await page.waitForURL(`${signInUrl}/`);
      const row = page.locator(`#counts tbody tr[data-customer-id="${tenantA}"]`);
      await row.waitFor({ timeout: 15_000 });
      const cell = (column: string) => row.locator(`td[data-column="${column}"]`).textContent();
      assert.deepEqual([await cell('Awaiting answer'), await cell('Terminated'), await cell('Total')], ['2', '1', '3']);
      assert.equal(await page.locator('#counts tbody tr').count(), 1, 'one row: tenant A');
      const [counts, list] = await Promise.all([page.locator('#counts-section').boundingBox(), page.locator('#awaiting-title').boundingBox()]);
      const above = counts !== null && list !== null && counts.y + counts.height <= list.y;
      assert.ok(above, `the counts are above the connection list: ${JSON.stringify({ counts, list })}`);
      await page.screenshot({ path: `${CONSOLE_ARTIFACTS}counts.png`, fullPage: true });
    } finally {
      await context.close();
    }
  });
});
