/**
 * Temporal itself behind tokens (issue 44, item 3), on the production server: 1.32.2 on PostgreSQL
 * with mutual TLS and its JWT authorizer and claim mapper (keys from a JWKS address, one audience,
 * the internal frontend for its own system worker). The product's client connects with its
 * TEMPORAL_TLS_* variables and the token as TEMPORAL_API_KEY, as a deployment does; the server
 * refuses no token, a token of another audience, an expired one, one signed by another key, and a
 * reader starting a connection, and lets a writer start one.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ConnectionsClient, connectionKey, TemporalAccessDeniedError } from '../../src/client/index.js';
import { loadClientConfig } from '../../src/settings/client.js';
import { postgresBinDir } from '../../scripts/prod-check/postgres.js';
import { findServerBinaries, type ProdTemporalServer } from '../../scripts/prod-check/temporal-server.js';
import { createPki, hasOpenssl, TLS_SERVER_NAME, type ProdCheckPki } from '../../scripts/prod-check/tls.js';
import { loadTestConfig } from '../../scripts/lib/test-settings.js';
import { TEST_ENCRYPTION_ENV } from '../helpers/connection-stack.js';
import { liveInput } from '../client/client-stack.js';
import { startProductionServer, type ProductionServer } from '../helpers/production-server.js';
import { startTokenProvider, type TokenProvider } from '../../scripts/lib/jwt-token-provider.js';

const missing = [
  ...(postgresBinDir() ? [] : ['PostgreSQL (apt-get install -y postgresql)']),
  ...(hasOpenssl() ? [] : ['openssl']),
  ...findServerBinaries().missing,
];
if (missing.length > 0 && loadTestConfig().ci) throw new Error(`the server authorization test cannot run in CI: missing ${missing.join('; ')}`);

describe('Temporal behind tokens: the JWT authorizer on the production server', { skip: missing.length > 0 ? `missing: ${missing.join('; ')}` : false }, () => {
  let production: ProductionServer | undefined;
  let server: ProdTemporalServer;
  let tokens: TokenProvider | undefined;
  let pki: ProdCheckPki;

  before(async () => {
    // The provider's JWKS address, which the server reads its keys from.
    const provider = await startTokenProvider();
    tokens = provider;
    const adminToken = await provider.token(['temporal-system:admin']);
    production = await startProductionServer('server-authorization', (dir) => {
      pki = createPki(dir);
      return { tls: pki, authorization: { jwksUri: provider.jwksUri, audience: provider.audience, adminToken } };
    });
    server = production.server;
  });

  after(async () => {
    await production?.stop();
    await tokens?.close();
  });

  /** A token of the provider's (or of the key it does not publish, `stranger`). */
  const token = (permissions: readonly string[], options: { audience?: string; expiresIn?: string | number; stranger?: boolean } = {}) =>
    tokens!.token(permissions, { ...options, ...(options.stranger ? { signer: tokens!.stranger } : {}) });

  /** The product's client as a deployment configures it: its TLS variables, and the token as TEMPORAL_API_KEY. */
  const clientWith = (apiKey: string | undefined) =>
    ConnectionsClient.connect(
      loadClientConfig({
        TEMPORAL_ADDRESS: server.address,
        TEMPORAL_TASK_QUEUE: 'server-authorization',
        TEMPORAL_TLS_CA_PATH: pki.caCert,
        TEMPORAL_TLS_SERVER_NAME: TLS_SERVER_NAME,
        TEMPORAL_TLS_CERT_PATH: pki.client.cert,
        TEMPORAL_TLS_KEY_PATH: pki.client.key,
        ...(apiKey ? { TEMPORAL_API_KEY: apiKey } : {}),
        ...TEST_ENCRYPTION_ENV,
      }),
    );

  /** What a list of connections gets with `apiKey`: 'ok', or the refusal (the error's name and message). */
  async function listWith(apiKey: string | undefined): Promise<string> {
    // No token at all is refused at connecting (the SDK's first call); the others at the list.
    let client: ConnectionsClient | undefined;
    try {
      client = await clientWith(apiKey);
      await client.list({ limit: 1 });
      return 'ok';
    } catch (error) {
      return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    } finally {
      await client?.close();
    }
  }

  const REFUSED =
    /^TemporalAccessDeniedError: Temporal at 127\.0\.0\.1:\d+ refused the caller's credentials \((PERMISSION_DENIED|UNAUTHENTICATED)\b.*\): the token \(TEMPORAL_API_KEY or TEMPORAL_API_KEY_FILE\) is missing, expired, for another audience or issuer, or lacks the role/;

  it('refuses a call with no token, a token of another audience, an expired one, one signed by a key it does not publish and one of another namespace, naming the credentials', async () => {
    const refusals = {
      'no token': await listWith(undefined),
      'another audience': await listWith(await token(['default:admin'], { audience: 'another-service' })),
      expired: await listWith(await token(['default:admin'], { expiresIn: Math.floor(Date.now() / 1000) - 60 })),
      'signed by another key': await listWith(await token(['default:admin'], { stranger: true })),
      'a role on another namespace only': await listWith(await token(['another-namespace:admin'])),
    };
    for (const [what, said] of Object.entries(refusals)) assert.match(said, REFUSED, `${what}: ${said}`);
  });

  it('lets a reader list and refuses it a start; lets a writer start a connection', async () => {
    assert.equal(await listWith(await token(['default:read'])), 'ok');
    const reader = await clientWith(await token(['default:read']));
    const key = connectionKey('lender-a', `app-${Date.now().toString(36)}`);
    try {
      await assert.rejects(reader.start(key, liveInput('lender-a', 'security_question', 'SandboxBank')), (error: unknown) => {
        assert.ok(error instanceof TemporalAccessDeniedError, String(error));
        assert.match(`${error.name}: ${error.message}`, REFUSED);
        return true;
      });
    } finally {
      await reader.close();
    }
    const writer = await clientWith(await token(['default:write']));
    try {
      const { workflowId } = await writer.start(key, liveInput('lender-a', 'security_question', 'SandboxBank'));
      assert.equal((await writer.describe(workflowId)).workflowId, workflowId);
    } finally {
      await writer.close();
    }
  });
});
