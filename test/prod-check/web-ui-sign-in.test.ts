/**
 * The Temporal Web UI behind the same OpenID Connect provider as the console (issue 44, item 3): the
 * production server 1.32.2 (PostgreSQL, mutual TLS, its JWT authorizer and claim mapper) takes its
 * keys from the provider's JWKS address, and the Web UI's own server (ui-server 2.55.0, the
 * provisioned binary) signs people in at that provider with its OIDC settings (`auth.providers`).
 * The provider (scripts/lib/oidc-dev-provider.ts with its `temporal` option) gives the UI's client a
 * JWT access token for Temporal's audience whose `permissions` come from the identity's groups; the
 * UI's browser code sends it as `authorization: Bearer` with the ID token as `authorization-extras`
 * (what this test's HTTP browser does, reading the `user0` cookie as the UI's script does), and the
 * UI's server forwards it to Temporal, which decides. Shown: no sign-in, no API (401 from the UI);
 * an operator's group maps to `default:write` and lists the namespace's workflows (not the list of
 * namespaces: Temporal scopes ListNamespaces to the cluster, so a role on `default` alone is refused
 * it); a viewer's to `default:read`, which lists and may not terminate (a writer may); an identity
 * with no role on the namespace is signed in by the provider and refused by Temporal (403,
 * PermissionDenied). The server's own calls carry a token the provider issues to a service client
 * (client credentials, `temporal-system:admin`), so every key the server trusts is the provider's.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { decodeJwt } from 'jose';
import { ConnectionsClient, connectionKey } from '../../src/client/index.js';
import { loadClientConfig } from '../../src/settings/client.js';
import { postgresBinDir } from '../../scripts/prod-check/postgres.js';
import { findServerBinaries } from '../../scripts/prod-check/temporal-server.js';
import { createPki, hasOpenssl, TLS_SERVER_NAME, type ProdCheckPki } from '../../scripts/prod-check/tls.js';
import { uiServerConfigYaml } from '../../scripts/lib/ui-server-config.js';
import { loadTestConfig } from '../../scripts/lib/test-settings.js';
import { freePort } from '../../scripts/lib/free-port.js';
import { HttpBrowser, type Visit } from '../../scripts/lib/http-browser.js';
import { DevOidcProvider } from '../../scripts/lib/oidc-dev-provider.js';
import { TemporalBinaryNotFoundError, temporalUiServerPath } from '../../scripts/lib/temporal-binaries.js';
import { TEST_ENCRYPTION_ENV } from '../helpers/connection-stack.js';
import { liveInput } from '../client/client-stack.js';
import { startProductionServer, type ProductionServer } from '../helpers/production-server.js';
import { waitFor } from '../helpers/temporal.js';

const AUDIENCE = 'temporal.lender.example';
const PASSWORD = 'correct horse battery staple';
const UI_CLIENT = { clientId: 'temporal-ui', clientSecret: 'temporal-ui-secret-for-tests' };
const ADMIN_CLIENT = { clientId: 'temporal-setup', clientSecret: 'temporal-setup-secret-for-tests' };

function uiServerOrMissing(): string | undefined {
  try {
    return temporalUiServerPath();
  } catch (error) {
    if (error instanceof TemporalBinaryNotFoundError) return undefined;
    throw error;
  }
}
const uiServer = uiServerOrMissing();
const missing = [
  ...(postgresBinDir() ? [] : ['PostgreSQL (apt-get install -y postgresql)']),
  ...(hasOpenssl() ? [] : ['openssl']),
  ...findServerBinaries().missing,
  ...(uiServer ? [] : ['the Temporal Web UI server (npm run provision)']),
];
if (missing.length > 0 && loadTestConfig().ci) throw new Error(`the Web UI sign-in test cannot run in CI: missing ${missing.join('; ')}`);

/** The Web UI server's config: the production frontend over mutual TLS, sign-in at `issuer`. */
function uiConfigYaml(frontend: string, port: number, issuer: string, pki: ProdCheckPki): string {
  const tls = `tls:
  caFile: ${JSON.stringify(pki.caCert)}
  certFile: ${JSON.stringify(pki.client.cert)}
  keyFile: ${JSON.stringify(pki.client.key)}
  serverName: ${TLS_SERVER_NAME}
  enableHostVerification: true
`;
  const auth = `auth:
  enabled: true
  providers:
    - label: lender
      type: oidc
      providerUrl: ${issuer}
      clientId: ${UI_CLIENT.clientId}
      clientSecret: ${UI_CLIENT.clientSecret}
      scopes: [openid, profile, email]
      callbackUrl: http://127.0.0.1:${port}/auth/sso/callback
`;
  return uiServerConfigYaml({
    writtenBy: 'test/prod-check/web-ui-sign-in.test.ts: the Web UI behind the provider',
    frontend,
    host: '127.0.0.1',
    port,
    sections: [tls, auth],
  });
}

/** What the UI's browser code sends with each API call: the tokens of the `user*` cookies, and the CSRF token. */
function uiHeaders(browser: HttpBrowser): Record<string, string> {
  const chunks: string[] = [];
  for (let index = 0; browser.cookies.has(`user${index}`); index++) chunks.push(decodeURIComponent(browser.cookies.get(`user${index}`)!));
  assert.ok(chunks.length > 0, 'the UI set its user cookie at the callback');
  const user = JSON.parse(Buffer.from(chunks.join(''), 'base64').toString('utf8')) as { AccessToken: string; IDToken: string; Name: string };
  const csrf = browser.cookies.get('_csrf');
  return { authorization: `Bearer ${user.AccessToken}`, 'authorization-extras': user.IDToken, ...(csrf ? { 'x-csrf-token': csrf } : {}) };
}

/** A refusal by Temporal's authorizer, as the UI's API passes it on: 403, gRPC PERMISSION_DENIED (7), PermissionDeniedFailure. */
function deniedByTemporal(visit: Visit, what: string): void {
  assert.equal(visit.status, 403, `${what}: ${visit.body}`);
  const body = JSON.parse(visit.body) as { code?: number; message?: string; details?: { '@type'?: string }[] };
  assert.deepEqual(
    [body.code, body.message, body.details?.[0]?.['@type']],
    [7, 'Request unauthorized.', 'type.googleapis.com/temporal.api.errordetails.v1.PermissionDeniedFailure'],
    `${what}: ${visit.body}`,
  );
}

describe(
  'the Temporal Web UI behind the OpenID Connect provider, on the production server with its JWT authorizer',
  { skip: missing.length > 0 ? `missing: ${missing.join('; ')}` : false },
  () => {
    let provider: DevOidcProvider;
    let production: ProductionServer | undefined;
    let pki: ProdCheckPki;
    let ui: ChildProcess | undefined;
    let uiUrl: string;
    let workflowId: string;

    before(async () => {
      const uiPort = await freePort();
      uiUrl = `http://127.0.0.1:${uiPort}`;
      provider = await DevOidcProvider.start({
        identities: [
          { username: 'alice', password: PASSWORD, name: 'Alice Operator', email: 'alice@lender-a.example', groups: ['lender-a-operators'] },
          { username: 'vera', password: PASSWORD, name: 'Vera Viewer', groups: ['lender-a-viewers'] },
          { username: 'nora', password: PASSWORD, name: 'Nora Nobody', groups: ['lender-b-operators'] },
        ],
        clients: [
          { ...UI_CLIENT, redirectUris: [`${uiUrl}/auth/sso/callback`], pkce: false },
          { ...ADMIN_CLIENT, redirectUris: [], temporalPermissions: ['temporal-system:admin'] },
        ],
        temporal: {
          audience: AUDIENCE,
          clients: [UI_CLIENT.clientId],
          permissionsByGroup: { 'lender-a-operators': ['default:write'], 'lender-a-viewers': ['default:read'], 'lender-b-operators': ['lender-b:write'] },
        },
      });
      // The server's own calls (readiness, the namespace) carry a token of the provider's too: client credentials.
      const issued = await fetch(`${provider.issuer}/token`, {
        method: 'POST',
        headers: {
          authorization: `Basic ${Buffer.from(`${ADMIN_CLIENT.clientId}:${ADMIN_CLIENT.clientSecret}`).toString('base64')}`,
          'content-type': 'application/x-www-form-urlencoded',
        },
        body: 'grant_type=client_credentials',
      });
      const body = (await issued.json()) as { access_token?: string };
      assert.equal(issued.status, 200, JSON.stringify(body));
      const adminToken = body.access_token ?? assert.fail('an access token');
      assert.deepEqual([decodeJwt(adminToken).aud, decodeJwt(adminToken).permissions], [AUDIENCE, ['temporal-system:admin']]);
      production = await startProductionServer('web-ui-sign-in', (dir) => {
        pki = createPki(dir);
        return { tls: pki, authorization: { jwksUri: provider.jwksUri, audience: AUDIENCE, adminToken } };
      });
      const dir = production.dir;
      writeFileSync(join(dir, 'webui.yaml'), uiConfigYaml(production.server.address, uiPort, provider.issuer, pki));
      const log = createWriteStream(join(dir, 'ui-server.log'));
      const child = spawn(uiServer!, ['--root', dir, '--config', '.', '--env', 'webui', 'start'], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
      ui = child;
      child.stdout?.pipe(log);
      child.stderr?.pipe(log);
      const deadline = Date.now() + 30_000;
      for (;;) {
        if (child.exitCode !== null) assert.fail(`ui-server exited (${child.exitCode}); see ${join(dir, 'ui-server.log')}`);
        const health = await fetch(`${uiUrl}/healthz`).catch(() => undefined);
        if (health?.ok) break;
        if (Date.now() > deadline) assert.fail(`ui-server did not answer on ${uiUrl} within 30 s`);
        await delay(200);
      }
      // A connection in the namespace for the UI to list, started with the admin's token by the product's client.
      const client = await ConnectionsClient.connect(
        loadClientConfig({
          TEMPORAL_ADDRESS: production.server.address,
          TEMPORAL_TASK_QUEUE: 'web-ui-sign-in',
          TEMPORAL_TLS_CA_PATH: pki.caCert,
          TEMPORAL_TLS_SERVER_NAME: TLS_SERVER_NAME,
          TEMPORAL_TLS_CERT_PATH: pki.client.cert,
          TEMPORAL_TLS_KEY_PATH: pki.client.key,
          TEMPORAL_API_KEY: adminToken,
          ...TEST_ENCRYPTION_ENV,
        }),
      );
      try {
        ({ workflowId } = await client.start(
          connectionKey('lender-a', `app-${Date.now().toString(36)}`),
          liveInput('lender-a', 'security_question', 'SandboxBank'),
        ));
      } finally {
        await client.close();
      }
    });

    after(async () => {
      if (ui && ui.exitCode === null) {
        const exited = new Promise<void>((resolve) => ui!.once('exit', () => resolve()));
        ui.kill('SIGTERM');
        await exited;
      }
      await production?.stop();
      await provider?.stop();
    });

    /** A browser signed in as `username`: the UI's sign-in, the provider's form, back on the UI. */
    async function signedIn(username: string): Promise<HttpBrowser> {
      const browser = new HttpBrowser();
      const login = await browser.open(`${uiUrl}/auth/sso`);
      assert.match(login.url, new RegExp(`^${provider.issuer}/interaction/`), `the UI sends the browser to the provider: ${login.url}`);
      assert.match(login.body, /<form method="post" action="\/interaction\/[^"]+\/login"/);
      const back = await browser.submit(login, { username, password: PASSWORD });
      assert.equal(back.status, 200, back.body.slice(0, 300));
      assert.equal(new URL(back.url).origin, uiUrl, `back on the UI: ${back.url}`);
      assert.ok(browser.cookies.has('user0'), 'the UI keeps the tokens in its user cookie');
      return browser;
    }

    const api = (browser: HttpBrowser, path: string, init: { method?: string; body?: string } = {}) =>
      browser.request(`${uiUrl}${path}`, {
        ...init,
        headers: { ...uiHeaders(browser), ...(init.body === undefined ? {} : { 'content-type': 'application/json' }) },
      });

    it("refuses the UI's API without signing in (401), and sends a sign-in to the provider", async () => {
      const browser = new HttpBrowser();
      for (const path of ['/api/v1/namespaces', '/api/v1/namespaces/default/workflows']) {
        const refused = await browser.request(`${uiUrl}${path}`);
        assert.equal(refused.status, 401, `${path}: ${refused.body}`);
        assert.deepEqual(JSON.parse(refused.body), { message: 'unauthorized' }, path);
      }
      const start = await browser.request(`${uiUrl}/auth/sso`);
      assert.equal(start.status, 302);
      assert.ok(start.location?.startsWith(`${provider.issuer}/auth?`), `to the provider: ${start.location}`);
      const asked = new URL(start.location ?? assert.fail('a redirect')).searchParams;
      // Authorization code, no PKCE challenge (ui-server 2.55 sends none), state and nonce.
      assert.deepEqual(
        [asked.get('client_id'), asked.get('response_type'), asked.get('code_challenge'), Boolean(asked.get('state')), Boolean(asked.get('nonce'))],
        [UI_CLIENT.clientId, 'code', null, true, true],
      );
    });

    it("lets an operator whose group maps to default:write list the namespace's workflows through the UI, with a token for Temporal's audience", async () => {
      const alice = await signedIn('alice');
      const token = decodeJwt(uiHeaders(alice).authorization!.slice('Bearer '.length));
      assert.deepEqual([token.iss, token.aud, token.sub, token.permissions], [provider.issuer, AUDIENCE, 'alice', ['default:write']]);
      // Visibility is eventually consistent on the SQL store: the connection started in `before` is listed
      // once the server's visibility task ran, so the list is read until it shows up (every read a 200).
      let lastBody = '';
      const statuses = new Set<number>();
      await waitFor(
        async () => {
          const listed = await api(alice, '/api/v1/namespaces/default/workflows');
          statuses.add(listed.status);
          lastBody = listed.body;
          if (listed.status !== 200) return false;
          const executions = (JSON.parse(listed.body) as { executions?: { execution?: { workflowId?: string } }[] }).executions ?? [];
          return executions.some((entry) => entry.execution?.workflowId === workflowId);
        },
        { timeoutMs: 15_000, intervalMs: 250, describe: 'the connection listed through the UI' },
      ).catch((error: unknown) => assert.fail(`the connection is listed: ${lastBody.slice(0, 300)} (${String(error)})`));
      // waitFor reads again after a throw or a false: each answer is checked here, not only the last.
      assert.deepEqual([...statuses], [200], `every read of the list a 200: ${lastBody.slice(0, 300)}`);
      // Temporal scopes listing namespaces to the cluster: a role on `default` alone does not list them.
      deniedByTemporal(await api(alice, '/api/v1/namespaces'), 'listing namespaces');
    });

    it('lets a viewer (default:read) list and refuses it a terminate through the UI', async () => {
      const vera = await signedIn('vera');
      assert.deepEqual(decodeJwt(uiHeaders(vera).authorization!.slice('Bearer '.length)).permissions, ['default:read']);
      assert.equal((await api(vera, '/api/v1/namespaces/default/workflows')).status, 200);
      const terminate = await api(vera, `/api/v1/namespaces/default/workflows/${encodeURIComponent(workflowId)}/terminate`, {
        method: 'POST',
        body: JSON.stringify({ reason: 'a viewer tries' }),
      });
      deniedByTemporal(terminate, 'a viewer terminating');
      // The same call by a writer goes through: the refusal was Temporal's role check, not the UI's CSRF or routing.
      const alice = await signedIn('alice');
      const done = await api(alice, `/api/v1/namespaces/default/workflows/${encodeURIComponent(workflowId)}/terminate`, {
        method: 'POST',
        body: JSON.stringify({ reason: 'a writer may' }),
      });
      assert.equal(done.status, 200, done.body);
    });

    it('refuses an identity without a role on the namespace: signed in by the provider, refused by Temporal (403)', async () => {
      const nora = await signedIn('nora');
      assert.deepEqual(decodeJwt(uiHeaders(nora).authorization!.slice('Bearer '.length)).permissions, ['lender-b:write']);
      for (const path of ['/api/v1/namespaces/default/workflows', `/api/v1/namespaces/default/workflows/${encodeURIComponent(workflowId)}`]) {
        const refused = await api(nora, path);
        deniedByTemporal(refused, path);
      }
    });
  },
);
