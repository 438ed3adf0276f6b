/**
 * An OpenID Connect provider for the tests and the dev stack: panva's oidc-provider (OpenID Certified
 * for the Basic, Config and Form Post profiles, among others), run in this process with a login page of
 * our own (oidc-provider leaves the interaction to the host): a username and password form, checked
 * against the identities given, and consent given on the spot (the console is the provider's own
 * first-party client). Each identity carries a `groups` claim, which the console maps to roles.
 *
 * Not a production provider: accounts live in memory and its keys are made at each start. A lender
 * connects its own (Okta, Entra ID, Keycloak, Ory Hydra, Dex) the same way: docs/operations.md.
 */
import { randomBytes, timingSafeEqual, createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair } from 'jose';
import Provider, { type Configuration } from 'oidc-provider';

export interface DevIdentity {
  readonly username: string;
  readonly password: string;
  readonly name: string;
  readonly email?: string;
  readonly groups: readonly string[];
}

export interface DevClient {
  readonly clientId: string;
  /** None: a public native client (the CLI), PKCE alone, any loopback port of its redirect URIs. */
  readonly clientSecret?: string;
  readonly redirectUris: readonly string[];
}

export interface DevProviderOptions {
  readonly identities: readonly DevIdentity[];
  readonly clients: readonly DevClient[];
  /** 0: any free port. */
  readonly port?: number;
  /** How long an access token (and so a console session) lasts. */
  readonly accessTokenTtlS?: number;
}

export class DevOidcProvider {
  private readonly disabled = new Set<string>();

  private constructor(
    private readonly server: Server,
    readonly issuer: string,
    private readonly identities: ReadonlyMap<string, DevIdentity>,
  ) {}

  static async start({ identities, clients, port = 0, accessTokenTtlS = 3600 }: DevProviderOptions): Promise<DevOidcProvider> {
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
    const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const byName = new Map(identities.map((identity) => [identity.username, identity]));
    const dev = new DevOidcProvider(server, issuer, byName);
    const { privateKey } = await generateKeyPair('RS256', { extractable: true });
    const configuration: Configuration = {
      clients: clients.map((client) => ({
        client_id: client.clientId,
        redirect_uris: [...client.redirectUris],
        grant_types: ['authorization_code'],
        response_types: ['code'],
        ...(client.clientSecret === undefined
          ? { application_type: 'native' as const, token_endpoint_auth_method: 'none' as const }
          : { client_secret: client.clientSecret, token_endpoint_auth_method: 'client_secret_basic' as const }),
      })),
      findAccount: (_context, id) => {
        const identity = byName.get(id);
        if (identity === undefined || dev.disabled.has(id)) return undefined;
        return { accountId: id, claims: () => ({ sub: id, name: identity.name, ...(identity.email ? { email: identity.email } : {}), groups: [...identity.groups] }) };
      },
      claims: { openid: ['sub'], profile: ['name'], email: ['email'], groups: ['groups'] },
      scopes: ['openid', 'profile', 'email', 'groups'],
      // The groups in the ID token too, so the console needs no second call for them.
      conformIdTokenClaims: false,
      features: { devInteractions: { enabled: false }, userinfo: { enabled: true } },
      interactions: { url: (_context, interaction) => `/interaction/${interaction.uid}` },
      pkce: { required: () => true },
      ttl: { AccessToken: accessTokenTtlS, IdToken: 3600, Interaction: 600, Session: 3600, Grant: 3600, AuthorizationCode: 60 },
      cookies: { keys: [randomBytes(32).toString('base64')] },
      jwks: { keys: [{ ...(await exportJWK(privateKey)), kid: 'dev', use: 'sig', alg: 'RS256' }] },
    };
    const provider = new Provider(issuer, configuration);
    const callback = provider.callback();
    server.on('request', (request: IncomingMessage, response: ServerResponse) => {
      const path = new URL(request.url ?? '/', issuer).pathname;
      if (!path.startsWith('/interaction/')) {
        void callback(request, response);
        return;
      }
      dev.interaction(provider, request, response, path).catch((error: unknown) => {
        if (!response.headersSent) response.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' });
        response.end(`interaction failed: ${error instanceof Error ? error.message : String(error)}`);
      });
    });
    return dev;
  }

  /** The identity may no longer sign in, and tokens already given to it are refused (userinfo: invalid_token), as when a provider disables a person. */
  disable(username: string): void {
    this.disabled.add(username);
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** The login page (GET), its form (POST .../login): a right password signs in and gives consent at once. */
  private async interaction(provider: Provider, request: IncomingMessage, response: ServerResponse, path: string): Promise<void> {
    const details = await provider.interactionDetails(request, response);
    if ((request.method ?? 'GET') === 'GET') {
      loginPage(response, 200, details.uid, undefined);
      return;
    }
    if (!path.endsWith('/login')) throw new Error(`no such interaction step: ${path}`);
    const form = new URLSearchParams(await readBody(request));
    const username = form.get('username') ?? '';
    const identity = this.identities.get(username);
    if (identity === undefined || this.disabled.has(username) || !samePassword(form.get('password') ?? '', identity.password)) {
      loginPage(response, 401, details.uid, 'Wrong username or password.');
      return;
    }
    const clientId = typeof details.params.client_id === 'string' ? details.params.client_id : '';
    const grant = new provider.Grant({ accountId: username, clientId });
    grant.addOIDCScope(typeof details.params.scope === 'string' ? details.params.scope : 'openid');
    const grantId = await grant.save();
    await provider.interactionFinished(request, response, { login: { accountId: username }, consent: { grantId } }, { mergeWithLastSubmission: false });
  }
}

function samePassword(given: string, expected: string): boolean {
  const digest = (text: string) => createHash('sha256').update(text).digest();
  return timingSafeEqual(digest(given), digest(expected));
}

function loginPage(response: ServerResponse, status: number, uid: string, problem: string | undefined): void {
  response.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
  response.end(
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Sign in</title></head><body><main><h1>Sign in</h1>${problem ? `<p role="alert">${problem}</p>` : ''}` +
      `<form method="post" action="/interaction/${encodeURIComponent(uid)}/login"><label>Username <input name="username" autocomplete="username" required></label>` +
      `<label>Password <input name="password" type="password" autocomplete="current-password" required></label><button type="submit">Sign in</button></form></main></body></html>`,
  );
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > 16 * 1024) throw new Error('the login form is over 16 KiB');
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}
