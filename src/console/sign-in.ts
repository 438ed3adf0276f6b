/**
 * Operators sign in to the console through OpenID Connect (identity/oidc-sign-in.ts):
 *   GET /auth/login?return=/path  → to the provider, the sign-in's state sealed in a cookie (10 min)
 *   GET /auth/callback            → back from it: the session cookie (sealed: who, their roles, until when)
 *   GET /auth/logout              → the session ended: refused here from then on (a copy of its cookie
 *                                   too), its access token revoked at the provider so every other
 *                                   console refuses it at its next recheck, and the cookie cleared
 *   GET /api/me                   → { subject, name, roles } of the caller (app.ts)
 * A session is refused by name when expired, changed or of another console, and ends when the
 * provider says its identity is no longer valid (asked at most every recheck interval); a provider
 * that does not answer fails sign-in with a page that says so, and leaves sessions running.
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { JWTPayload } from 'jose';
import { IdentityProviderUnavailableError, SignInRefusedError, type OidcSignIn, type PendingSignIn } from '../identity/oidc-sign-in.js';
import { ALL_TENANTS, describeRoles, ROLES, type Principal, type Role } from '../identity/roles.js';
import { AuditUnavailableError } from '../audit/audit-store.js';
import type { AuditTrail } from '../audit/audit-trail.js';
import { SealedCookieExpiredError, SealedCookieInvalidError, type SealedCookies } from '../identity/sealed-cookie.js';
import { HttpError, SECURITY_HEADERS } from '../http/json-http.js';

export const SESSION_COOKIE = 'console_session';
const SIGN_IN_COOKIE = 'console_sign_in';
const SIGN_IN_MAX_MS = 10 * 60_000;

export interface ConsoleSignIn {
  /** Answers /auth/*; true when it has. */
  handle(request: IncomingMessage, response: ServerResponse, url: URL): Promise<boolean>;
  /** The signed-in operator of the request's session cookie; undefined without one; a 401 naming why for a session that is no longer good. */
  principalOf(request: IncomingMessage): Promise<Principal | undefined>;
}

export interface ConsoleSignInOptions {
  readonly secureCookie?: boolean;
  readonly now?: () => number;
  /** Sign-ins, refused sign-ins and sign-outs are recorded here; a sign-in that cannot be recorded fails. */
  readonly audit?: AuditTrail;
}

/** Who a refused sign-in was: nobody the provider vouched for. */
const UNKNOWN_ACTOR = { subject: 'unknown', name: 'unknown', via: 'oidc' } as const;

export function consoleSignIn(
  oidc: OidcSignIn,
  cookies: SealedCookies,
  { secureCookie = false, now = Date.now, audit }: ConsoleSignInOptions = {},
): ConsoleSignIn {
  const attributes = `HttpOnly; SameSite=Lax${secureCookie ? '; Secure' : ''}`;
  /** Sessions' last word from the provider: a session key → when it was last found valid. */
  const checkedAt = new Map<string, number>();
  /** Sessions signed out here: a session key → its expiry (after which the seal refuses it anyway). */
  const signedOut = new Map<string, number>();
  const sessionKeyOf = (sealed: string) => createHash('sha256').update(sealed).digest('hex');

  /** A sign-in or sign-out, recorded once per tenant the operator holds a role on, so each tenant's admin reads who came and went. */
  async function recordPresence(actor: Principal, action: 'sign-in' | 'sign-out', detail: string | undefined, outcomeDetail?: string): Promise<void> {
    for (const tenant of presenceTenants(actor)) await audit?.record({ actor, action, tenant, detail }, 'ok', outcomeDetail);
  }

  async function logout(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const sealed = cookieOf(request, SESSION_COOKIE);
    const claims = sealed === undefined ? undefined : await cookies.open('session', sealed).catch(() => undefined);
    if (sealed !== undefined && claims !== undefined) {
      const leaving = principalOfClaims(claims);
      // Ended here at once, before anything else can fail: a copy of the cookie is refused from now on.
      const key = sessionKeyOf(sealed);
      signedOut.set(key, (claims.exp ?? 0) * 1000);
      checkedAt.delete(key);
      forgetExpired(signedOut, now());
      const revoked = await oidc.revoke(typeof claims.at === 'string' ? claims.at : '');
      const outcome =
        revoked === 'revoked'
          ? 'access token revoked at the provider'
          : `not revoked at the provider (${revoked.notRevoked}): other consoles end it at its expiry`;
      await recordPresence(leaving, 'sign-out', undefined, outcome);
    }
    redirect(response, '/auth/signed-out', [`${SESSION_COOKIE}=; Path=/; Max-Age=0; ${attributes}`]);
  }

  async function login(response: ServerResponse, url: URL): Promise<void> {
    const returnTo = safeReturn(url.searchParams.get('return'));
    const { url: to, pending } = await oidc.begin(returnTo);
    const sealed = await cookies.seal('sign-in', { ...pending }, now() + SIGN_IN_MAX_MS);
    redirect(response, to.href, [`${SIGN_IN_COOKIE}=${sealed}; Path=/auth; Max-Age=${SIGN_IN_MAX_MS / 1000}; ${attributes}`]);
  }

  const signIn: ConsoleSignIn = {
    async handle(request, response, url) {
      if (!url.pathname.startsWith('/auth/') || (request.method ?? 'GET') !== 'GET') return false;
      try {
        if (url.pathname === '/auth/login') await login(response, url);
        else if (url.pathname === '/auth/callback') await completeSignIn({ oidc, cookies, attributes, now, audit, recordPresence }, request, response, url);
        else if (url.pathname === '/auth/logout') await logout(request, response);
        else if (url.pathname === '/auth/signed-out') page(response, 200, 'Signed out', 'You have signed out of the operator console.');
        else return false;
      } catch (error) {
        const failure = signInFailure(error);
        page(response, failure.status, 'Sign-in failed', failure.message);
      }
      return true;
    },

    async principalOf(request) {
      const sealed = cookieOf(request, SESSION_COOKIE);
      if (sealed === undefined) return undefined;
      let claims: JWTPayload;
      try {
        claims = await cookies.open('session', sealed);
      } catch (error) {
        if (error instanceof SealedCookieExpiredError) throw new HttpError(401, 'SessionExpired', `${error.message} (/auth/login)`);
        if (error instanceof SealedCookieInvalidError) throw new HttpError(401, 'SessionInvalid', `${error.message}; sign in again (/auth/login)`);
        throw error;
      }
      const principal = principalOfClaims(claims);
      const key = sessionKeyOf(sealed);
      if (signedOut.has(key)) throw new HttpError(401, 'SessionEnded', `${principal.name} signed out of this session: sign in again (/auth/login)`);
      const last = checkedAt.get(key);
      if (last === undefined || now() - last >= oidc.settings.recheckMs) {
        const answer = await oidc.stillSignedIn(typeof claims.at === 'string' ? claims.at : '', principal.subject);
        if (answer === 'revoked') {
          checkedAt.delete(key);
          throw new HttpError(
            401,
            'SessionRevoked',
            `the identity provider no longer accepts the sign-in of ${principal.name}: the session has ended (sign in again if you still may)`,
          );
        }
        // No answer: the session goes on to its expiry, and the provider is asked again next time.
        if (answer === 'yes') checkedAt.set(key, now());
        if (checkedAt.size > 10_000) checkedAt.clear();
      }
      return principal;
    },
  };
  return signIn;
}

/** The tenants a sign-in or sign-out is recorded under: each the operator holds a role on; none in particular (null) for every tenant's roles or none. */
function presenceTenants(principal: Principal): (string | undefined)[] {
  const tenants = [...principal.roles.keys()].filter((tenant) => tenant !== ALL_TENANTS);
  return principal.roles.has(ALL_TENANTS) || tenants.length === 0 ? [undefined, ...tenants] : tenants;
}

function forgetExpired(sessions: Map<string, number>, at: number): void {
  if (sessions.size < 1_000) return;
  for (const [key, expiresAt] of sessions) if (expiresAt < at) sessions.delete(key);
}

/** A sign-in that cannot go on, answered as a page (a browser follows the sign-in, not a script). */
class SignInPageError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

function signInFailure(error: unknown): { status: number; message: string } {
  if (error instanceof SignInPageError) return { status: error.status, message: error.message };
  if (error instanceof IdentityProviderUnavailableError) return { status: 502, message: error.message };
  if (error instanceof SignInRefusedError) return { status: 403, message: error.message };
  if (error instanceof AuditUnavailableError)
    return { status: 503, message: `${error.message}: a sign-in that cannot be recorded is refused; try again shortly` };
  if (error instanceof SealedCookieExpiredError || error instanceof SealedCookieInvalidError) return { status: 400, message: error.message };
  return { status: 500, message: `sign-in failed: ${error instanceof Error ? error.message : String(error)}` };
}

function principalOfClaims(claims: JWTPayload): Principal {
  const roles = new Map<string, Set<Role>>();
  for (const entry of Array.isArray(claims.roles) ? (claims.roles as unknown[]) : []) {
    if (!Array.isArray(entry) || typeof entry[0] !== 'string' || !Array.isArray(entry[1])) continue;
    roles.set(entry[0], new Set((entry[1] as unknown[]).filter((role): role is Role => (ROLES as readonly unknown[]).includes(role))));
  }
  const subject = claims.sub ?? '';
  return { subject, name: typeof claims.name === 'string' ? claims.name : subject, via: 'oidc', roles };
}

function pendingOf(claims: JWTPayload): PendingSignIn {
  const { state, nonce, verifier, returnTo } = claims;
  if (typeof state !== 'string' || typeof nonce !== 'string' || typeof verifier !== 'string' || typeof returnTo !== 'string') {
    throw new SignInPageError(400, 'the sign-in cookie lacks its state: start the sign-in again');
  }
  return { state, nonce, verifier, returnTo };
}

/** A console path to return to: a local path only (never another site). */
function safeReturn(requested: string | null): string {
  return requested !== null && /^\/(?![/\\])[^\s]*$/.test(requested) && !requested.startsWith('/auth/') ? requested : '/';
}

function cookieOf(request: IncomingMessage, name: string): string | undefined {
  for (const part of (request.headers.cookie ?? '').split(';')) {
    const [key, ...value] = part.trim().split('=');
    if (key === name) {
      const text = value.join('=');
      return text === '' ? undefined : text;
    }
  }
  return undefined;
}

function redirect(response: ServerResponse, location: string, setCookies: string[]): void {
  response.writeHead(303, { ...SECURITY_HEADERS, location, 'set-cookie': setCookies, 'cache-control': 'no-store' });
  response.end();
}

function page(response: ServerResponse, status: number, title: string, message: string): void {
  const escape = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
  response.writeHead(status, { ...SECURITY_HEADERS, 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
  response.end(
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escape(title)}</title></head><body><main><h1>${escape(title)}</h1><p id="message">${escape(message)}</p><p><a href="/auth/login">Sign in</a></p></main></body></html>`,
  );
}

/** What completing a sign-in takes of the console's sign-in. */
interface SignInCompletion {
  readonly oidc: OidcSignIn;
  readonly cookies: SealedCookies;
  /** The cookies' attributes (HttpOnly, SameSite, Secure). */
  readonly attributes: string;
  readonly now: () => number;
  readonly audit: AuditTrail | undefined;
  readonly recordPresence: (actor: Principal, action: 'sign-in', detail: string | undefined) => Promise<void>;
}

/**
 * /auth/callback: the provider's answer checked against the sign-in begun here (its sealed cookie),
 * recorded, and the session cookie set; a refused or forged sign-in recorded as refused.
 */
async function completeSignIn(
  { oidc, cookies, attributes, now, audit, recordPresence }: SignInCompletion,
  request: IncomingMessage,
  response: ServerResponse,
  url: URL,
): Promise<void> {
  const sealed = cookieOf(request, SIGN_IN_COOKIE);
  if (sealed === undefined) throw new SignInPageError(400, 'this sign-in was not started here (no sign-in cookie): start it again');
  let pending: PendingSignIn;
  try {
    pending = pendingOf(await cookies.open('sign-in', sealed));
  } catch (error) {
    // A changed or foreign sign-in cookie is a forgery attempt, or another console's: recorded as a refused sign-in.
    if (error instanceof SealedCookieInvalidError) await audit?.record({ actor: UNKNOWN_ACTOR, action: 'sign-in' }, 'refused', error.message);
    throw error;
  }
  // The public address the provider sent the browser to, with the provider's answer in its query.
  const callbackUrl = new URL(`${oidc.settings.redirectUri}${url.search}`);
  let signedIn: Awaited<ReturnType<OidcSignIn['complete']>>;
  try {
    signedIn = await oidc.complete(callbackUrl, pending);
  } catch (error) {
    // Refused by name (another audience or issuer, a replayed code, a bad nonce): recorded before the page says so.
    if (error instanceof SignInRefusedError) await audit?.record({ actor: UNKNOWN_ACTOR, action: 'sign-in' }, 'refused', error.message);
    throw error;
  }
  // The session exists only once it is recorded (an AuditUnavailableError ends the sign-in here).
  await recordPresence(signedIn.principal, 'sign-in', describeRoles(signedIn.principal.roles));
  const session = await cookies.seal(
    'session',
    {
      sub: signedIn.principal.subject,
      name: signedIn.principal.name,
      roles: [...signedIn.principal.roles].map(([tenant, roles]) => [tenant, [...roles]]),
      at: signedIn.accessToken,
    },
    signedIn.expiresAt,
  );
  const maxAge = Math.max(1, Math.floor((signedIn.expiresAt - now()) / 1000));
  redirect(response, pending.returnTo, [
    `${SESSION_COOKIE}=${session}; Path=/; Max-Age=${maxAge}; ${attributes}`,
    `${SIGN_IN_COOKIE}=; Path=/auth; Max-Age=0; ${attributes}`,
  ]);
}
