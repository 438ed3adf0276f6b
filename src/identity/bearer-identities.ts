/**
 * A person's access token as a credential of the console's API (`Authorization: Bearer`): the token a
 * pipeline's person or the CLI got from the same provider operators sign in with, so a script acts
 * under the identity that started it, with that identity's roles, and is recorded as such.
 *
 * The provider says what the token is (token introspection, RFC 7662, with the console's client
 * credentials): active, issued to which client, for whom, until when. Only tokens issued to the
 * clients the console accepts (CONSOLE_BEARER_CLIENTS: the CLI's, by default) are taken, so a token a
 * third-party application of the same provider obtained cannot be replayed here. The identity's name
 * and groups come from userinfo, as a session's do, and its roles through the same role map.
 *
 * A token's answer is kept for the recheck interval and never past the token's expiry: the provider
 * is asked again after that, so a revoked token stops working within one interval. A provider that
 * does not answer leaves a token it vouched for working to its expiry, as sessions do; a token it has
 * never vouched for is refused as unverifiable (503), never taken on trust.
 */
import { createHash } from 'node:crypto';
import * as client from 'openid-client';
import { IdentityProviderUnavailableError, SignInRefusedError, stringsOf, type OidcSignIn } from './oidc-sign-in.js';
import { rolesOfGroups, type Principal } from './roles.js';

export interface BearerIdentitySettings {
  /** The OIDC client ids whose access tokens the console's API accepts. */
  readonly acceptedClients: readonly string[];
}

/** The provider does not vouch for this bearer token, or vouches for it for another use: 401 with the reason. */
export class BearerTokenRefusedError extends Error {
  override readonly name = 'BearerTokenRefusedError';
  constructor(detail: string, options?: ErrorOptions) {
    super(`bearer token refused: ${detail}`, options);
  }
}

interface Vouched {
  readonly principal: Principal;
  /** When the provider last said yes. */
  readonly checkedAt: number;
  readonly expiresAt: number;
}

/** Entries kept at most: a flood of distinct tokens empties the memory, not the heap. */
const MAX_KEPT = 10_000;

export class BearerIdentities {
  private readonly vouched = new Map<string, Vouched>();

  constructor(
    private readonly oidc: OidcSignIn,
    private readonly settings: BearerIdentitySettings,
    private readonly now: () => number = Date.now,
  ) {}

  /** Who `token` is, as the provider says; BearerTokenRefusedError or IdentityProviderUnavailableError otherwise. */
  async principalOf(token: string): Promise<Principal> {
    const key = createHash('sha256').update(token).digest('hex');
    const known = this.vouched.get(key);
    const now = this.now();
    if (known !== undefined && now >= known.expiresAt) {
      this.vouched.delete(key);
      throw new BearerTokenRefusedError('it has expired');
    }
    if (known !== undefined && now - known.checkedAt < this.oidc.settings.recheckMs) return known.principal;
    try {
      const answer = await this.ask(token);
      if (this.vouched.size >= MAX_KEPT) this.vouched.clear();
      this.vouched.set(key, answer);
      return answer.principal;
    } catch (error) {
      if (error instanceof IdentityProviderUnavailableError && known !== undefined) return known.principal;
      if (error instanceof BearerTokenRefusedError || error instanceof SignInRefusedError) this.vouched.delete(key);
      throw error;
    }
  }

  private async ask(token: string): Promise<Vouched> {
    const config = await this.oidc.providerConfiguration();
    const introspected = await this.oidc.providerCall(() => client.tokenIntrospection(config, token, { token_type_hint: 'access_token' }));
    if (introspected.active !== true) throw new BearerTokenRefusedError('the provider says it is not active (expired, revoked, or not one of its tokens)');
    const clientId = introspected.client_id;
    if (typeof clientId !== 'string' || !this.settings.acceptedClients.includes(clientId)) {
      throw new BearerTokenRefusedError(
        `it was issued to client ${typeof clientId === 'string' ? JSON.stringify(clientId) : '(none named)'}, whose tokens this console does not take (CONSOLE_BEARER_CLIENTS: ${this.settings.acceptedClients.join(', ') || 'none'})`,
      );
    }
    if (introspected.token_type !== undefined && !/^(bearer|access_token)$/i.test(introspected.token_type)) {
      throw new BearerTokenRefusedError(`it is a ${introspected.token_type}, not an access token`);
    }
    const subject = introspected.sub;
    if (typeof subject !== 'string' || subject === '')
      throw new BearerTokenRefusedError("it names no person (a client's own token): the console acts for people only");
    const scopes = typeof introspected.scope === 'string' ? introspected.scope.split(' ') : [];
    if (!scopes.includes('openid')) throw new BearerTokenRefusedError('it was granted without the openid scope, so it says nothing of who holds it');
    const info = await this.oidc.providerCall(() => client.fetchUserInfo(config, token, subject));
    const groups = stringsOf(info[this.oidc.settings.groupsClaim]) ?? [];
    const name = [info.name, info.email, subject].find((value): value is string => typeof value === 'string' && value !== '') ?? subject;
    const now = this.now();
    const expiresAt = typeof introspected.exp === 'number' ? introspected.exp * 1000 : now + this.oidc.settings.sessionMaxMs;
    if (expiresAt <= now) throw new BearerTokenRefusedError('it has expired');
    return { principal: { subject, name, via: 'oidc-bearer', roles: rolesOfGroups(groups, this.oidc.settings.roleMap) }, checkedAt: now, expiresAt };
  }
}
