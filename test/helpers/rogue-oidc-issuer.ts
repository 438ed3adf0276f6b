/**
 * A test double of an OpenID Connect *provider* whose ID tokens each test writes: discovery, a JWKS,
 * an authorization endpoint that sends the browser straight back with a code and the state, a token
 * endpoint (client_secret_basic, PKCE checked) and userinfo. Honest by default (the right issuer,
 * audience, nonce, times and key); `answerNextWith` makes the next ID token lie in one way: another
 * audience or issuer, times skewed, another nonce, a key the JWKS does not publish. What is under test
 * is the relying party's checks (src/identity/oidc-sign-in.ts); the happy path against a real,
 * certified provider stays in test/console/console-sign-in.test.ts.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';

export interface RogueIdentity {
  readonly sub: string;
  readonly name: string;
  readonly groups: readonly string[];
}

/** How the next ID token differs from an honest one; what is left out is as an honest provider says it. */
export interface RogueIdTokenPlan {
  readonly aud?: string | readonly string[];
  readonly iss?: string;
  /** Seconds added to the time of issue (positive: issued "in the future"). */
  readonly iatOffsetS?: number;
  /** Seconds from now to expiry (honest: 300; negative: already expired). */
  readonly expInS?: number;
  /** The nonce claim in place of the one the authorization request carried. */
  readonly nonce?: string;
  /**
   * - 'published': the key the JWKS lists (honest);
   * - 'unpublished': another key, under a kid the JWKS does not list;
   * - 'forged-under-published-kid': another key, under the published key's kid (the signature does not verify).
   */
  readonly signWith?: 'published' | 'unpublished' | 'forged-under-published-kid';
}

interface Grant {
  readonly clientId: string;
  readonly redirectUri: string;
  readonly nonce: string | undefined;
  readonly codeChallenge: string;
}

const PUBLISHED_KID = 'rogue-published';
const UNPUBLISHED_KID = 'rogue-unpublished';

export class RogueOidcIssuer {
  private readonly codes = new Map<string, Grant>();
  private readonly accessTokens = new Map<string, RogueIdentity>();
  private plan: RogueIdTokenPlan = {};
  /** The ID tokens the token endpoint gave, newest last (a test can show what was refused). */
  readonly issuedIdTokens: string[] = [];

  private constructor(
    private readonly server: Server,
    readonly issuer: string,
    private readonly client: { readonly clientId: string; readonly clientSecret: string },
    private readonly identity: RogueIdentity,
    private readonly published: { readonly privateKey: CryptoKey; readonly jwk: JWK },
    private readonly unpublished: CryptoKey,
  ) {}

  static async start({ clientId, clientSecret, identity }: { clientId: string; clientSecret: string; identity: RogueIdentity }): Promise<RogueOidcIssuer> {
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const published = await generateKeyPair('RS256', { extractable: true });
    const unpublished = await generateKeyPair('RS256');
    const jwk = { ...(await exportJWK(published.publicKey)), kid: PUBLISHED_KID, use: 'sig', alg: 'RS256' };
    const rogue = new RogueOidcIssuer(server, issuer, { clientId, clientSecret }, identity, { privateKey: published.privateKey, jwk }, unpublished.privateKey);
    server.on('request', (request: IncomingMessage, response: ServerResponse) => {
      rogue
        .answer(request, response)
        .catch((error: unknown) => json(response, 500, { error: 'server_error', error_description: error instanceof Error ? error.message : String(error) }));
    });
    return rogue;
  }

  /** The next token response's ID token differs from an honest one as `plan` says (then honest again). */
  answerNextWith(plan: RogueIdTokenPlan): void {
    this.plan = plan;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async answer(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? '/', this.issuer);
    const method = request.method ?? 'GET';
    if (method === 'GET' && url.pathname === '/.well-known/openid-configuration') {
      json(response, 200, {
        issuer: this.issuer,
        authorization_endpoint: `${this.issuer}/authorize`,
        token_endpoint: `${this.issuer}/token`,
        userinfo_endpoint: `${this.issuer}/userinfo`,
        jwks_uri: `${this.issuer}/jwks`,
        response_types_supported: ['code'],
        subject_types_supported: ['public'],
        id_token_signing_alg_values_supported: ['RS256'],
        code_challenge_methods_supported: ['S256'],
        token_endpoint_auth_methods_supported: ['client_secret_basic'],
        scopes_supported: ['openid', 'profile', 'email', 'groups'],
      });
    } else if (method === 'GET' && url.pathname === '/jwks') json(response, 200, { keys: [this.published.jwk] });
    else if (method === 'GET' && url.pathname === '/authorize') this.authorize(response, url);
    else if (method === 'POST' && url.pathname === '/token') await this.token(request, response);
    else if (method === 'GET' && url.pathname === '/userinfo') this.userinfo(request, response);
    else json(response, 404, { error: 'not_found' });
  }

  /** Signs the one identity in at once: back to the client with a code and its state. */
  private authorize(response: ServerResponse, url: URL): void {
    const query = url.searchParams;
    const redirectUri = query.get('redirect_uri') ?? '';
    const codeChallenge = query.get('code_challenge') ?? '';
    if (query.get('client_id') !== this.client.clientId || redirectUri === '' || codeChallenge === '' || query.get('code_challenge_method') !== 'S256') {
      json(response, 400, { error: 'invalid_request', error_description: 'client_id, redirect_uri and an S256 code_challenge are required' });
      return;
    }
    const code = randomBytes(16).toString('base64url');
    this.codes.set(code, { clientId: this.client.clientId, redirectUri, nonce: query.get('nonce') ?? undefined, codeChallenge });
    const back = new URL(redirectUri);
    back.searchParams.set('code', code);
    const state = query.get('state');
    if (state !== null) back.searchParams.set('state', state);
    response.writeHead(303, { location: back.href, 'cache-control': 'no-store' });
    response.end();
  }

  /** An honest exchange of the code (client authenticated, PKCE checked, code used once), then the planned ID token. */
  private async token(request: IncomingMessage, response: ServerResponse): Promise<void> {
    if (!this.authenticated(request.headers.authorization)) {
      json(response, 401, { error: 'invalid_client' });
      return;
    }
    const form = new URLSearchParams(await readBody(request));
    const grant = this.codes.get(form.get('code') ?? '');
    this.codes.delete(form.get('code') ?? '');
    const verifier = form.get('code_verifier') ?? '';
    if (
      form.get('grant_type') !== 'authorization_code' ||
      grant === undefined ||
      form.get('redirect_uri') !== grant.redirectUri ||
      createHash('sha256').update(verifier).digest('base64url') !== grant.codeChallenge
    ) {
      json(response, 400, { error: 'invalid_grant' });
      return;
    }
    const plan = this.plan;
    this.plan = {};
    const now = Math.floor(Date.now() / 1000);
    const iat = now + (plan.iatOffsetS ?? 0);
    const signWith = plan.signWith ?? 'published';
    const idToken = await new SignJWT({
      name: this.identity.name,
      groups: [...this.identity.groups],
      ...(grant.nonce !== undefined || plan.nonce !== undefined ? { nonce: plan.nonce ?? grant.nonce } : {}),
    })
      .setProtectedHeader({ alg: 'RS256', typ: 'JWT', kid: signWith === 'unpublished' ? UNPUBLISHED_KID : PUBLISHED_KID })
      .setIssuer(plan.iss ?? this.issuer)
      .setAudience(plan.aud === undefined ? grant.clientId : typeof plan.aud === 'string' ? plan.aud : [...plan.aud])
      .setSubject(this.identity.sub)
      .setIssuedAt(iat)
      .setExpirationTime(now + (plan.expInS ?? 300))
      .sign(signWith === 'published' ? this.published.privateKey : this.unpublished);
    this.issuedIdTokens.push(idToken);
    const accessToken = randomBytes(24).toString('base64url');
    this.accessTokens.set(accessToken, this.identity);
    json(response, 200, { access_token: accessToken, token_type: 'Bearer', expires_in: 3600, scope: 'openid profile email groups', id_token: idToken });
  }

  private userinfo(request: IncomingMessage, response: ServerResponse): void {
    const identity = this.accessTokens.get(/^Bearer (.+)$/.exec(request.headers.authorization ?? '')?.[1] ?? '');
    if (identity === undefined) {
      response.writeHead(401, { 'www-authenticate': 'Bearer error="invalid_token"', 'cache-control': 'no-store' });
      response.end();
      return;
    }
    json(response, 200, { sub: identity.sub, name: identity.name, groups: [...identity.groups] });
  }

  /** client_secret_basic: `Basic base64(urlencode(id):urlencode(secret))`. */
  private authenticated(header: string | undefined): boolean {
    const encoded = /^Basic (.+)$/.exec(header ?? '')?.[1];
    if (encoded === undefined) return false;
    const [id = '', secret = ''] = Buffer.from(encoded, 'base64')
      .toString('utf8')
      .split(':')
      .map((part) => decodeURIComponent(part.replace(/\+/g, ' ')));
    const digest = (text: string) => createHash('sha256').update(text).digest();
    return id === this.client.clientId && timingSafeEqual(digest(secret), digest(this.client.clientSecret));
  }
}

function json(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
  response.end(JSON.stringify(body));
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
