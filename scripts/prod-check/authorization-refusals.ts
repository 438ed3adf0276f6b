/**
 * `--authorization`: proof that the server's JWT authorizer refuses what it must, through the product's
 * own client (ConnectionsClient, configured by the environment a pipeline sets: the TLS variables and
 * TEMPORAL_API_KEY), each refusal a TemporalAccessDeniedError naming what to check: no token, a token
 * whose role on the namespace only reads (a cancel is a write), a role on another namespace only, an
 * expired token, another audience's, and one signed by a key the provider does not publish. The
 * fleet's own renewed token is the positive case: the run itself.
 */
import { ConnectionsClient, loadClientConfig, TemporalAccessDeniedError } from '../../src/client/index.js';
import type { TokenProvider } from '../lib/jwt-token-provider.js';
import type { Refusal } from './tls-refusals.js';

interface Case {
  readonly who: string;
  /** The token the client holds; none: no TEMPORAL_API_KEY. */
  readonly token: string | undefined;
  /** What the client tries after it connects: a list needs the namespace's read role, a cancel its write role. */
  readonly attempt: 'list' | 'cancel';
}

async function clientCase(address: string, tlsEnv: Readonly<Record<string, string>>, { who, token, attempt }: Case): Promise<Refusal> {
  const config = loadClientConfig({
    TEMPORAL_ADDRESS: address,
    ...tlsEnv,
    ...(token === undefined ? {} : { TEMPORAL_API_KEY: token }),
    PAYLOAD_ENCRYPTION: 'off',
    PAYLOAD_STORE: 'off',
  });
  let connections: ConnectionsClient | undefined;
  try {
    connections = await ConnectionsClient.connect(config);
    if (attempt === 'list') await connections.list({ limit: 1 });
    else await connections.cancel('connection-prod-check:authorization-probe');
    return { who, ok: false, detail: `${attempt}: NOT refused` };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    // A cancel with the write role would find no such connection: anything but a refusal is a failure.
    return { who, ok: error instanceof TemporalAccessDeniedError, detail: `${error instanceof Error ? error.name : 'error'}: ${message.slice(0, 240)}` };
  } finally {
    await connections?.close();
  }
}

export async function proveAuthorizationRefusals(address: string, tlsEnv: Readonly<Record<string, string>>, tokens: TokenProvider): Promise<Refusal[]> {
  const cases: Case[] = [
    { who: 'no token', token: undefined, attempt: 'list' },
    { who: 'a token that only reads (default:read) cancelling', token: await tokens.token(['default:read']), attempt: 'cancel' },
    { who: 'a token of another namespace only (lender-b:write)', token: await tokens.token(['lender-b:write']), attempt: 'list' },
    { who: 'an expired token', token: await tokens.token(['default:write'], { expiresIn: Math.floor(Date.now() / 1000) - 120 }), attempt: 'list' },
    { who: 'a token of another audience', token: await tokens.token(['default:write'], { audience: 'expense-app.lender.example' }), attempt: 'list' },
    {
      who: 'a token signed by a key the provider does not publish',
      token: await tokens.token(['default:write'], { signer: tokens.stranger }),
      attempt: 'list',
    },
  ];
  return Promise.all(cases.map((each) => clientCase(address, tlsEnv, each)));
}
