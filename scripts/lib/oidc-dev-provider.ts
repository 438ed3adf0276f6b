/**
 * An OpenID Connect provider for the tests and the dev stack: panva's oidc-provider (OpenID Certified
 * for the Basic, Config and Form Post profiles, among others), run in this process with a login page of
 * our own (oidc-provider leaves the interaction to the host): a username and password form, checked
 * against the identities given, and consent given on the spot (the console is the provider's own
 * first-party client). Each identity carries a `groups` claim, which the console maps to roles.
 *
 * With `temporal` (opt-in), it also issues what Temporal's JWT authorizer reads: for the clients named
 * there (the Web UI), and for service clients with `temporalPermissions` (client credentials), the
 * access token is a JWT (RFC 9068, resource indicators of RFC 8707: Temporal is the default resource
 * of those clients) signed by the provider's key, for Temporal's audience, carrying a `permissions`
 * claim (`<namespace>:<role>`) derived from the identity's groups by `permissionsByGroup`. The other
 * clients (the console, the CLI) get what they got before: an opaque access token for userinfo.
 *
 * Not a production provider: accounts live in memory and its keys are made at each start. A lender
 * connects its own (Okta, Entra ID, Keycloak, Ory Hydra, Dex) the same way: docs/operations.md.
 */
import { randomBytes, timingSafeEqual, createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair } from 'jose';
import Provider, { errors, type Configuration } from 'oidc-provider';

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
  /**
   * false: a confidential client that sends no PKCE challenge may sign in (Temporal's ui-server 2.55
   * sends none). PKCE is required otherwise, and always for a public client.
   */
  readonly pkce?: boolean;
  /**
   * A service client of Temporal (with `temporal` set and a secret): it takes tokens with the client
   * credentials grant, for Temporal's audience, carrying these permissions (e.g. `temporal-system:admin`
   * for namespace setup). Such a client signs nobody in.
   */
  readonly temporalPermissions?: readonly string[];
}

/** Access tokens for Temporal's JWT authorizer (global.authorization of the server). */
export interface DevTemporalAccess {
  /** The audience the server checks (`global.authorization.audience`): the tokens' `aud`. */
  readonly audience: string;
  /** The resource indicator naming Temporal at this provider (an absolute URI); default `urn:temporal:<audience>`. */
  readonly resource?: string;
  /** Clients that sign people in and whose access tokens are for Temporal (the Web UI's client id). */
  readonly clients: readonly string[];
  /** A group's Temporal permissions, e.g. `{ 'lender-a-operators': ['default:write'], 'lender-a-viewers': ['default:read'] }`; an identity gets the union of its groups'. */
  readonly permissionsByGroup: Readonly<Record<string, readonly string[]>>;
}

export interface DevProviderOptions {
  readonly identities: readonly DevIdentity[];
  readonly clients: readonly DevClient[];
  /** 0: any free port. */
  readonly port?: number;
  /** How long an access token (and so a console session) lasts. */
  readonly accessTokenTtlS?: number;
  /** Opt-in: JWT access tokens for Temporal, with a `permissions` claim (above). */
  readonly temporal?: DevTemporalAccess;
}

/** The permissions an identity's groups map to, each once, in the order of its groups. */
export function temporalPermissionsOf(groups: readonly string[], permissionsByGroup: Readonly<Record<string, readonly string[]>>): string[] {
  return [...new Set(groups.flatMap((group) => (Object.hasOwn(permissionsByGroup, group) ? (permissionsByGroup[group] ?? []) : [])))];
}

export class DevOidcProvider {
  private readonly disabled = new Set<string>();

  private constructor(
    private readonly server: Server,
    readonly issuer: string,
    private readonly identities: ReadonlyMap<string, DevIdentity>,
  ) {}

  /** Where the provider publishes its signing keys (what Temporal's `jwtKeyProvider.keySourceURIs` names). */
  get jwksUri(): string {
    return `${this.issuer}/jwks`;
  }

  static async start({ identities, clients, port = 0, accessTokenTtlS = 3600, temporal }: DevProviderOptions): Promise<DevOidcProvider> {
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
    const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const byName = new Map(identities.map((identity) => [identity.username, identity]));
    const dev = new DevOidcProvider(server, issuer, byName);
    const { privateKey } = await generateKeyPair('RS256', { extractable: true });
    const services = new Map(
      clients.flatMap((client) => (client.temporalPermissions === undefined ? [] : [[client.clientId, client.temporalPermissions] as const])),
    );
    if (services.size > 0 && temporal === undefined)
      throw new Error('a client with temporalPermissions needs the temporal option (the audience its tokens are for)');
    for (const client of clients) {
      if (client.temporalPermissions !== undefined && client.clientSecret === undefined)
        throw new Error(`service client ${client.clientId} needs a secret (client credentials)`);
    }
    const withoutPkce = new Set(clients.filter((client) => client.pkce === false && client.clientSecret !== undefined).map((client) => client.clientId));
    const configuration: Configuration = {
      clients: clients.map((client) => ({
        client_id: client.clientId,
        redirect_uris: [...client.redirectUris],
        ...(client.temporalPermissions === undefined
          ? { grant_types: ['authorization_code'], response_types: ['code'] }
          : { grant_types: ['client_credentials'], response_types: [] }),
        ...(client.clientSecret === undefined
          ? { application_type: 'native' as const, token_endpoint_auth_method: 'none' as const }
          : { client_secret: client.clientSecret, token_endpoint_auth_method: 'client_secret_basic' as const }),
      })),
      findAccount: (_context, id) => {
        const identity = byName.get(id);
        if (identity === undefined || dev.disabled.has(id)) return undefined;
        return {
          accountId: id,
          claims: () => ({ sub: id, name: identity.name, ...(identity.email ? { email: identity.email } : {}), groups: [...identity.groups] }),
        };
      },
      claims: { openid: ['sub'], profile: ['name'], email: ['email'], groups: ['groups'] },
      scopes: ['openid', 'profile', 'email', 'groups'],
      // The groups in the ID token too, so the console needs no second call for them.
      conformIdTokenClaims: false,
      // Introspection: the console asks what a bearer token on its API is; revocation: a person's token withdrawn.
      features: {
        devInteractions: { enabled: false },
        userinfo: { enabled: true },
        introspection: { enabled: true },
        revocation: { enabled: true },
        // Opt-in: JWT access tokens for Temporal (resource indicators), and client credentials for its service clients.
        ...(temporal === undefined ? {} : temporalFeatures(temporal, services, accessTokenTtlS)),
      },
      ...(temporal === undefined ? {} : { extraTokenClaims: temporalClaims(temporal, services, byName, dev) }),
      interactions: { url: (_context, interaction) => `/interaction/${interaction.uid}` },
      pkce: { required: (_context, client) => !withoutPkce.has(client.clientId) },
      ttl: {
        AccessToken: accessTokenTtlS,
        ClientCredentials: accessTokenTtlS,
        IdToken: 3600,
        Interaction: 600,
        Session: 3600,
        Grant: 3600,
        AuthorizationCode: 60,
      },
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

  /** Whether `username` is disabled (no sign-in, no Temporal permissions in a new token). */
  isDisabled(username: string): boolean {
    return this.disabled.has(username);
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
    // A resource the client asked for (or defaults to: Temporal, for the Web UI) is consented to with the rest.
    const missing = (details.prompt.details as { missingResourceScopes?: Record<string, string[]> }).missingResourceScopes ?? {};
    for (const [indicator, scopes] of Object.entries(missing)) grant.addResourceScope(indicator, scopes.join(' '));
    const grantId = await grant.save();
    await provider.interactionFinished(request, response, { login: { accountId: username }, consent: { grantId } }, { mergeWithLastSubmission: false });
  }
}

/** The resource indicators feature: Temporal as a resource server, the default of the clients that are for it. */
function temporalFeatures(temporal: DevTemporalAccess, services: ReadonlyMap<string, readonly string[]>, accessTokenTtlS: number) {
  const resource = temporalResource(temporal);
  const forTemporal = (clientId: string | undefined) => clientId !== undefined && (temporal.clients.includes(clientId) || services.has(clientId));
  return {
    resourceIndicators: {
      enabled: true,
      defaultResource: (_context: unknown, client: { clientId: string } | undefined) => (forTemporal(client?.clientId) ? resource : undefined),
      // The resource granted at sign-in is the one the token is for, though the code exchange names none.
      useGrantedResource: () => true,
      getResourceServerInfo: (_context: unknown, indicator: string, client: { clientId: string }) => {
        if (indicator !== resource || !forTemporal(client.clientId)) throw new errors.InvalidTarget();
        return {
          scope: 'temporal',
          audience: temporal.audience,
          accessTokenTTL: accessTokenTtlS,
          accessTokenFormat: 'jwt' as const,
          jwt: { sign: { alg: 'RS256' as const } },
        };
      },
    },
    clientCredentials: { enabled: services.size > 0 },
  };
}

/** `permissions` in a token for Temporal: the service client's own, or the union of the signed-in identity's groups'. */
function temporalClaims(
  temporal: DevTemporalAccess,
  services: ReadonlyMap<string, readonly string[]>,
  identities: ReadonlyMap<string, DevIdentity>,
  dev: DevOidcProvider,
) {
  return (_context: unknown, token: { kind: string; accountId?: string; clientId?: string; resourceServer?: { audience?: string } }) => {
    if (token.resourceServer?.audience !== temporal.audience) return undefined;
    if (token.kind === 'ClientCredentials') return { permissions: [...(services.get(token.clientId ?? '') ?? [])] };
    const identity = token.accountId === undefined ? undefined : identities.get(token.accountId);
    if (identity === undefined || dev.isDisabled(identity.username)) return { permissions: [] };
    return { permissions: temporalPermissionsOf(identity.groups, temporal.permissionsByGroup) };
  };
}

export function temporalResource(temporal: Pick<DevTemporalAccess, 'audience' | 'resource'>): string {
  return temporal.resource ?? `urn:temporal:${temporal.audience}`;
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
