/**
 * Temporal itself behind tokens (issue 44, item 3), on the production server: 1.32.2 on PostgreSQL
 * with mutual TLS and its JWT authorizer and claim mapper (keys from a JWKS address, one audience,
 * the internal frontend for its own system worker). The product's client connects with its
 * TEMPORAL_TLS_* variables and the token as TEMPORAL_API_KEY, as a deployment does; the server
 * refuses no token, a token of another audience, an expired one, one signed by another key, and a
 * reader starting a connection, and lets a writer start one.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey as JoseKey } from 'jose';
import { ConnectionsClient, connectionKey, TemporalAccessDeniedError } from '../../src/client/index.js';
import { loadClientConfig } from '../../src/settings/client.js';
import { postgresBinDir } from '../../scripts/prod-check/postgres.js';
import { findServerBinaries, type ProdTemporalServer } from '../../scripts/prod-check/temporal-server.js';
import { createPki, hasOpenssl, TLS_SERVER_NAME, type ProdCheckPki } from '../../scripts/prod-check/tls.js';
import { loadTestConfig } from '../../scripts/lib/test-settings.js';
import { TEST_ENCRYPTION_ENV } from '../helpers/connection-stack.js';
import { liveInput } from '../client/client-stack.js';
import { startProductionServer, type ProductionServer } from '../helpers/production-server.js';

const AUDIENCE = 'temporal.lender.example';
const ISSUER = 'https://id.lender.example';
const missing = [...(postgresBinDir() ? [] : ['PostgreSQL (apt-get install -y postgresql)']), ...(hasOpenssl() ? [] : ['openssl']), ...findServerBinaries().missing];
if (missing.length > 0 && loadTestConfig().ci) throw new Error(`the server authorization test cannot run in CI: missing ${missing.join('; ')}`);

interface Signer {
  readonly key: JoseKey;
  readonly kid: string;
}

/** A token as the provider issues it: RS256 under a key of its JWKS, the permissions Temporal's claim mapper reads. */
function token(signer: Signer, permissions: readonly string[], { audience = AUDIENCE, expiresIn = '10m' }: { audience?: string; expiresIn?: string | number } = {}): Promise<string> {
  return new SignJWT({ permissions: [...permissions] })
    .setProtectedHeader({ alg: 'RS256', kid: signer.kid })
    .setSubject('pipeline:loan-origination')
    .setIssuer(ISSUER)
    .setAudience(audience)
    .setIssuedAt()
    .setExpirationTime(expiresIn)
    .sign(signer.key);
}

describe('Temporal behind tokens: the JWT authorizer on the production server', { skip: missing.length > 0 ? `missing: ${missing.join('; ')}` : false }, () => {
  let production: ProductionServer | undefined;
  let server: ProdTemporalServer;
  let jwks: Server | undefined;
  let pki: ProdCheckPki;
  let provider: Signer;
  let stranger: Signer;

  before(async () => {
    const [ours, theirs] = await Promise.all([generateKeyPair('RS256'), generateKeyPair('RS256')]);
    provider = { key: ours.privateKey, kid: 'provider-1' };
    stranger = { key: theirs.privateKey, kid: 'provider-1' };
    const published = { keys: [{ ...(await exportJWK(ours.publicKey)), kid: provider.kid, alg: 'RS256', use: 'sig' }] };
    // The provider's JWKS address, which the server reads its keys from.
    const keys = createServer((_, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify(published));
    });
    jwks = keys;
    await new Promise<void>((resolve) => keys.listen(0, '127.0.0.1', resolve));
    const { port } = keys.address() as { port: number };
    const adminToken = await token(provider, ['temporal-system:admin']);
    production = await startProductionServer('server-authorization', (dir) => {
      pki = createPki(dir);
      return { tls: pki, authorization: { jwksUri: `http://127.0.0.1:${port}/jwks`, audience: AUDIENCE, adminToken } };
    });
    server = production.server;
  });

  after(async () => {
    await production?.stop();
    await new Promise<void>((resolve) => (jwks ? jwks.close(() => resolve()) : resolve()));
  });

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

  const REFUSED = /^TemporalAccessDeniedError: Temporal at 127\.0\.0\.1:\d+ refused the caller's credentials \((PERMISSION_DENIED|UNAUTHENTICATED)\b.*\): the token \(TEMPORAL_API_KEY\) is missing, expired, for another audience or issuer, or lacks the role/;

  it('refuses a call with no token, a token of another audience, an expired one, one signed by a key it does not publish and one of another namespace, naming the credentials', async () => {
    const refusals = {
      'no token': await listWith(undefined),
      'another audience': await listWith(await token(provider, ['default:admin'], { audience: 'another-service' })),
      expired: await listWith(await token(provider, ['default:admin'], { expiresIn: Math.floor(Date.now() / 1000) - 60 })),
      'signed by another key': await listWith(await token(stranger, ['default:admin'])),
      'a role on another namespace only': await listWith(await token(provider, ['another-namespace:admin'])),
    };
    for (const [what, said] of Object.entries(refusals)) assert.match(said, REFUSED, `${what}: ${said}`);
  });

  it("lets a reader list and refuses it a start; lets a writer start a connection", async () => {
    assert.equal(await listWith(await token(provider, ['default:read'])), 'ok');
    const reader = await clientWith(await token(provider, ['default:read']));
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
    const writer = await clientWith(await token(provider, ['default:write']));
    try {
      const { workflowId } = await writer.start(key, liveInput('lender-a', 'security_question', 'SandboxBank'));
      assert.equal((await writer.describe(workflowId)).workflowId, workflowId);
    } finally {
      await writer.close();
    }
  });
});
