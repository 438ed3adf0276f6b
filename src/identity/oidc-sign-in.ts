/**
 * Signing an operator in through OpenID Connect (authorization code with PKCE, state and nonce), with
 * openid-client, a certified relying party: the provider is found by discovery the first time it is
 * needed (a provider down when the console starts does not stop the console), the ID token is checked
 * for issuer, audience, expiry and nonce (with SEAL_CLOCK_TOLERANCE_S of skew), and the identity's
 * groups become roles through the role map. A signed-in identity is asked about again (userinfo) at
 * most every `recheckMs`: a provider that answers "invalid token" (the person disabled, the grant
 * revoked) ends the session; one that does not answer leaves it as it is until it expires.
 */
import * as client from 'openid-client';
import { rolesOfGroups, type Principal, type RoleGrant } from './roles.js';
import { SEAL_CLOCK_TOLERANCE_S } from './sealed-cookie.js';

export interface OidcSettings {
  /** The provider's issuer identifier (its discovery document is under it). */
  readonly issuer: URL;
  readonly clientId: string;
  /** A confidential client's secret (the console); none: a public client that proves itself with PKCE alone (the CLI). */
  readonly clientSecret?: string | undefined;
  /** Where the provider sends the browser back: `<CONSOLE_PUBLIC_URL>/auth/callback` (the CLI: its loopback address), registered with the provider. */
  readonly redirectUri: string;
  /** The claim that lists the identity's groups (from the ID token, else userinfo). */
  readonly groupsClaim: string;
  readonly roleMap: readonly RoleGrant[];
  /** One call to the provider may take this long. */
  readonly timeoutMs: number;
  /** A session's identity is asked about again after this long. */
  readonly recheckMs: number;
  /** A session lasts at most this long, and never past its access token. */
  readonly sessionMaxMs: number;
  /** The provider is reached over http:// (settings allow it to this machine only: the dev stack's, the tests'). */
  readonly allowHttp: boolean;
}

/** What the console keeps of a sign-in under way (sealed in a cookie until the provider sends the browser back). */
export interface PendingSignIn {
  readonly state: string;
  readonly nonce: string;
  readonly verifier: string;
  /** The console page to return to. */
  readonly returnTo: string;
}

/** A signed-in operator: who, what they may do, and until when. */
export interface SignedIn {
  readonly principal: Principal;
  /** The groups its roles came from (the CLI keeps them). */
  readonly groups: readonly string[];
  readonly accessToken: string;
  readonly expiresAt: number;
}

/** The provider could not be reached, or answered with a server error: sign-in fails, sessions go on. */
export class IdentityProviderUnavailableError extends Error {
  override readonly name = 'IdentityProviderUnavailableError';
  constructor(
    readonly issuer: string,
    detail: string,
    options?: ErrorOptions,
  ) {
    super(`the identity provider at ${issuer} did not answer (${detail}); signing in is not possible until it does, and signed-in operators carry on`, options);
  }
}

/** Which check refused a sign-in: the provider's own "no", or one of ours on its ID token. */
export type SignInRefusal =
  | 'ProviderRefused'
  | 'IdTokenAudience'
  | 'IdTokenIssuer'
  | 'IdTokenNonce'
  | 'IdTokenExpired'
  | 'IdTokenNotYetValid'
  | 'IdTokenIssuedInFuture'
  | 'IdTokenUnknownKey'
  | 'IdTokenSignature';

/** The provider, or the checks on its answer, refused this sign-in (denied, another audience or issuer, a replayed or altered answer). */
export class SignInRefusedError extends Error {
  override readonly name = 'SignInRefusedError';
  readonly reason: SignInRefusal;
  constructor(detail: string, options?: ErrorOptions & { readonly reason?: SignInRefusal }) {
    super(`sign-in refused: ${detail}`, options);
    this.reason = options?.reason ?? 'ProviderRefused';
  }
}

const SCOPES = 'openid profile email groups';

export class OidcSignIn {
  private configuration: Promise<client.Configuration> | undefined;

  constructor(
    readonly settings: OidcSettings,
    private readonly now: () => number = Date.now,
  ) {}

  /** Where to send the browser, and what to keep until it comes back. */
  async begin(returnTo: string): Promise<{ url: URL; pending: PendingSignIn }> {
    // Found again at each sign-in: a provider that is down fails here, on the console's page, not in
    // the browser's; and its metadata and keys are current.
    this.configuration = undefined;
    const config = await this.config();
    const pending: PendingSignIn = { state: client.randomState(), nonce: client.randomNonce(), verifier: client.randomPKCECodeVerifier(), returnTo };
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: this.settings.redirectUri,
      scope: SCOPES,
      state: pending.state,
      nonce: pending.nonce,
      code_challenge: await client.calculatePKCECodeChallenge(pending.verifier),
      code_challenge_method: 'S256',
    });
    return { url, pending };
  }

  /** The provider's answer at the callback, exchanged and checked, as a signed-in operator. */
  async complete(callbackUrl: URL, pending: PendingSignIn): Promise<SignedIn> {
    const config = await this.config();
    let tokens: Awaited<ReturnType<typeof client.authorizationCodeGrant>>;
    try {
      tokens = await client.authorizationCodeGrant(config, callbackUrl, {
        pkceCodeVerifier: pending.verifier,
        expectedState: pending.state,
        expectedNonce: pending.nonce,
        idTokenExpected: true,
      });
    } catch (error) {
      throw idTokenRefusal(error, this.settings.clientId) ?? this.refusalOrOutage(error);
    }
    const claims = tokens.claims();
    if (claims === undefined) throw new SignInRefusedError('the provider answered without an ID token');
    // openid-client checks exp and nbf against the tolerance, never iat: a token issued later than our
    // clock allows comes from a provider whose clock is wrong, or was made up.
    if (claims.iat > Math.floor(this.now() / 1000) + SEAL_CLOCK_TOLERANCE_S) {
      throw new SignInRefusedError(
        `the ID token was issued in the future (at ${isoOfSeconds(claims.iat)}, beyond ${SEAL_CLOCK_TOLERANCE_S} s of clock tolerance): the provider's clock, or the token, is wrong`,
        { reason: 'IdTokenIssuedInFuture' },
      );
    }
    const subject = claims.sub;
    let groups = stringsOf(claims[this.settings.groupsClaim]);
    if (groups === undefined) {
      try {
        groups = stringsOf((await client.fetchUserInfo(config, tokens.access_token, subject))[this.settings.groupsClaim]) ?? [];
      } catch (error) {
        throw this.refusalOrOutage(error);
      }
    }
    const name = [claims.name, claims.email, subject].find((value): value is string => typeof value === 'string' && value !== '') ?? subject;
    const tokenExpiresAt = tokens.expires_in === undefined ? Number.POSITIVE_INFINITY : this.now() + tokens.expires_in * 1000;
    return {
      principal: { subject, name, via: 'oidc', roles: rolesOfGroups(groups, this.settings.roleMap) },
      groups,
      accessToken: tokens.access_token,
      expiresAt: Math.min(tokenExpiresAt, this.now() + this.settings.sessionMaxMs),
    };
  }

  /** Whether the provider still knows this identity's token: 'revoked' ends the session; 'unknown' (no answer) keeps it. */
  async stillSignedIn(accessToken: string, subject: string): Promise<'yes' | 'revoked' | 'unknown'> {
    try {
      await client.fetchUserInfo(await this.config(), accessToken, subject);
      return 'yes';
    } catch (error) {
      const refusal = this.refusalOrOutage(error);
      return refusal instanceof SignInRefusedError ? 'revoked' : 'unknown';
    }
  }

  /**
   * Withdraws a signed-out session's access token at the provider (RFC 7009 revocation), so every
   * console that rechecks the session (stillSignedIn) finds it revoked: 'revoked', or why not (the
   * provider has no revocation endpoint, refused, or did not answer).
   */
  async revoke(accessToken: string): Promise<'revoked' | { readonly notRevoked: string }> {
    if (accessToken === '') return { notRevoked: 'the session holds no access token' };
    try {
      const config = await this.config();
      if (config.serverMetadata().revocation_endpoint === undefined) return { notRevoked: 'the provider publishes no revocation endpoint' };
      await client.tokenRevocation(config, accessToken, { token_type_hint: 'access_token' });
      return 'revoked';
    } catch (error) {
      return { notRevoked: this.refusalOrOutage(error).message };
    }
  }

  /** The provider's configuration (discovery), for the console's other calls to it (bearer-identities.ts). */
  providerConfiguration(): Promise<client.Configuration> {
    return this.config();
  }

  /** One call to the provider, its failure told apart: a refusal (SignInRefusedError) or an outage (IdentityProviderUnavailableError). */
  async providerCall<T>(call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (error) {
      throw this.refusalOrOutage(error);
    }
  }

  /** Discovery, once it has succeeded; a failed one is tried again at the next sign-in. */
  private config(): Promise<client.Configuration> {
    this.configuration ??= this.discover().catch((error: unknown) => {
      this.configuration = undefined;
      throw error;
    });
    return this.configuration;
  }

  private async discover(): Promise<client.Configuration> {
    const { issuer, clientId, clientSecret, timeoutMs, allowHttp } = this.settings;
    const insecure = allowHttp && issuer.protocol === 'http:';
    try {
      const metadata = {
        ...(clientSecret === undefined ? { token_endpoint_auth_method: 'none' } : { client_secret: clientSecret }),
        [client.clockTolerance]: SEAL_CLOCK_TOLERANCE_S,
      };
      const config = await client.discovery(issuer, clientId, metadata, clientSecret === undefined ? client.None() : client.ClientSecretBasic(clientSecret), {
        timeout: timeoutMs / 1000,
        ...(insecure ? { execute: [client.allowInsecureRequests] } : {}),
      });
      config.timeout = timeoutMs / 1000;
      // openid-client takes the token endpoint's ID token on TLS's word and skips its signature; we
      // check it against the provider's published keys, so an answer the provider did not sign (a
      // token endpoint on http://, misrouted or not the provider's) signs nobody in.
      client.enableNonRepudiationChecks(config);
      return config;
    } catch (error) {
      throw this.refusalOrOutage(error);
    }
  }

  /** A provider's "no" (4xx, a token that fails its checks) as a refusal; anything else (no answer, 5xx) as an outage. */
  private refusalOrOutage(error: unknown): Error {
    const issuer = this.settings.issuer.href;
    if (error instanceof client.AuthorizationResponseError)
      return new SignInRefusedError(`the provider answered ${error.error}${error.error_description ? ` (${error.error_description})` : ''}`, { cause: error });
    if (error instanceof client.ResponseBodyError) {
      return error.status >= 500
        ? new IdentityProviderUnavailableError(issuer, `HTTP ${error.status}`, { cause: error })
        : new SignInRefusedError(`the provider answered HTTP ${error.status} ${error.error}`, { cause: error });
    }
    if (error instanceof client.WWWAuthenticateChallengeError) {
      const challenge = error.cause[0]?.parameters.error ?? 'a challenge';
      return error.status >= 500
        ? new IdentityProviderUnavailableError(issuer, `HTTP ${error.status}`, { cause: error })
        : new SignInRefusedError(`the provider answered HTTP ${error.status} ${challenge}`, { cause: error });
    }
    if (error instanceof client.ClientError) {
      const code = (error as { code?: string }).code ?? '';
      // Checks of the provider's answer (issuer, audience, nonce, state, signature, expiry): a refusal.
      if (/^OAUTH_(JWT|INVALID|UNSUPPORTED|PARSE|RESPONSE|HTTP_REQUEST_FORBIDDEN)/.test(code) && !/RESPONSE_IS_NOT_CONFORM.*5\d\d/.test(error.message)) {
        return new SignInRefusedError(`the provider's answer failed its checks: ${error.message}`, { cause: error });
      }
    }
    const detail = error instanceof Error ? `${error.name}: ${error.message}${error.cause instanceof Error ? ` (${error.cause.message})` : ''}` : String(error);
    return new IdentityProviderUnavailableError(issuer, detail.slice(0, 300), { cause: error });
  }
}

export function stringsOf(value: unknown): string[] | undefined {
  if (!Array.isArray(value)) return typeof value === 'string' ? [value] : undefined;
  return value.filter((entry): entry is string => typeof entry === 'string');
}

/** What oauth4webapi says of a failed check of a JWT, under openid-client's ClientError. */
interface JwtCheckContext {
  readonly claim?: unknown;
  readonly expected?: unknown;
  readonly claims?: Record<string, unknown>;
  readonly header?: { readonly kid?: unknown };
  readonly signature?: unknown;
  readonly tolerance?: unknown;
}

/**
 * A failed check of the ID token, said by name: openid-client's own message is one for all of them
 * ("unexpected JWT claim value encountered"), which tells an operator nothing. Undefined for anything
 * else (refusalOrOutage tells those apart).
 */
function idTokenRefusal(error: unknown, clientId: string): SignInRefusedError | undefined {
  if (!(error instanceof client.ClientError) || !(error.cause instanceof Error)) return undefined;
  const code = (error as { code?: string }).code;
  const context: JwtCheckContext = typeof error.cause.cause === 'object' && error.cause.cause !== null ? error.cause.cause : {};
  const claims = context.claims ?? {};
  // The token's own words, kept short: they come from whoever made it.
  const shown = (value: unknown) => (Array.isArray(value) ? value.join(', ') : String(value)).slice(0, 200);
  const refusal = (detail: string, reason: SignInRefusal) => new SignInRefusedError(detail, { reason, cause: error });
  if (code === 'OAUTH_JWT_CLAIM_COMPARISON_FAILED') {
    if (context.claim === 'aud') return refusal(`the ID token is for another audience (${shown(claims.aud)}, not ${clientId})`, 'IdTokenAudience');
    if (context.claim === 'iss') return refusal(`the ID token is from another issuer (${shown(claims.iss)}, not ${shown(context.expected)})`, 'IdTokenIssuer');
    if (context.claim === 'nonce') return refusal("the ID token's nonce is not this sign-in's: it was issued to another sign-in, or replayed", 'IdTokenNonce');
  }
  if (code === 'OAUTH_JWT_TIMESTAMP_CHECK_FAILED' && typeof context.tolerance === 'number') {
    if (context.claim === 'exp')
      return refusal(`the ID token has expired (at ${isoOfSeconds(claims.exp)}, beyond ${context.tolerance} s of clock tolerance)`, 'IdTokenExpired');
    if (context.claim === 'nbf')
      return refusal(
        `the ID token is not valid yet (from ${isoOfSeconds(claims.nbf)}, beyond ${context.tolerance} s of clock tolerance)`,
        'IdTokenNotYetValid',
      );
  }
  if (code === 'OAUTH_KEY_SELECTION_FAILED')
    return refusal(`the ID token is signed with a key the provider does not publish (kid ${shown(context.header?.kid ?? 'none')})`, 'IdTokenUnknownKey');
  if (code === 'OAUTH_INVALID_RESPONSE' && context.signature !== undefined)
    return refusal("the ID token's signature does not verify under the provider's published keys", 'IdTokenSignature');
  return undefined;
}

function isoOfSeconds(seconds: unknown): string {
  return typeof seconds === 'number' && Number.isFinite(seconds) ? new Date(seconds * 1000).toISOString() : String(seconds);
}
