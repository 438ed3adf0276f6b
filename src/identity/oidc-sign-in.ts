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

/** The provider, or the checks on its answer, refused this sign-in (denied, another audience or issuer, a replayed or altered answer). */
export class SignInRefusedError extends Error {
  override readonly name = 'SignInRefusedError';
  constructor(detail: string, options?: ErrorOptions) {
    super(`sign-in refused: ${detail}`, options);
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
      tokens = await client.authorizationCodeGrant(config, callbackUrl, { pkceCodeVerifier: pending.verifier, expectedState: pending.state, expectedNonce: pending.nonce, idTokenExpected: true });
    } catch (error) {
      throw this.refusalOrOutage(error);
    }
    const claims = tokens.claims();
    if (claims === undefined) throw new SignInRefusedError('the provider answered without an ID token');
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
      const metadata = { ...(clientSecret === undefined ? { token_endpoint_auth_method: 'none' } : { client_secret: clientSecret }), [client.clockTolerance]: SEAL_CLOCK_TOLERANCE_S };
      const config = await client.discovery(issuer, clientId, metadata, clientSecret === undefined ? client.None() : client.ClientSecretBasic(clientSecret), {
        timeout: timeoutMs / 1000,
        ...(insecure ? { execute: [client.allowInsecureRequests] } : {}),
      });
      config.timeout = timeoutMs / 1000;
      return config;
    } catch (error) {
      throw this.refusalOrOutage(error);
    }
  }

  /** A provider's "no" (4xx, a token that fails its checks) as a refusal; anything else (no answer, 5xx) as an outage. */
  private refusalOrOutage(error: unknown): Error {
    const issuer = this.settings.issuer.href;
    if (error instanceof client.AuthorizationResponseError) return new SignInRefusedError(`the provider answered ${error.error}${error.error_description ? ` (${error.error_description})` : ''}`, { cause: error });
    if (error instanceof client.ResponseBodyError) {
      return error.status >= 500 ? new IdentityProviderUnavailableError(issuer, `HTTP ${error.status}`, { cause: error }) : new SignInRefusedError(`the provider answered HTTP ${error.status} ${error.error}`, { cause: error });
    }
    if (error instanceof client.WWWAuthenticateChallengeError) {
      const challenge = error.cause[0]?.parameters.error ?? 'a challenge';
      return error.status >= 500 ? new IdentityProviderUnavailableError(issuer, `HTTP ${error.status}`, { cause: error }) : new SignInRefusedError(`the provider answered HTTP ${error.status} ${challenge}`, { cause: error });
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

function stringsOf(value: unknown): string[] | undefined {
  if (!Array.isArray(value)) return typeof value === 'string' ? [value] : undefined;
  return value.filter((entry): entry is string => typeof entry === 'string');
}
