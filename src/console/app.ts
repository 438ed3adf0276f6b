/**
 * The operator console's HTTP server: a static page (pages.ts), a JSON API over the pipeline client
 * (api.ts) and, with payload encryption on, Temporal's codec endpoint (codec.ts), behind the console
 * token (auth.ts). Each request goes: CORS of its route, if any; `?token=` on a page; who is calling
 * (a session, a person's access token vouched for by the provider, or a shared token) and the check
 * (401); then its route (405 for another method), a page, or 404. The one exception to the token is
 * `GET /healthz` (200 `{ state: 'RUNNING' }`), for container health checks.
 */
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { PayloadCodec } from '@temporalio/common';
import type { ConnectionsClient } from '../client/connections.js';
import type { AuditTrail } from '../audit/audit-trail.js';
import { connectionRoutes } from './api.js';
import { auditRoutes } from './audit-routes.js';
import { describeRoles, type Principal } from '../identity/roles.js';
import { consoleAuth, type Caller } from './auth.js';
import { BearerTokenRefusedError, type BearerIdentities } from '../identity/bearer-identities.js';
import { IdentityProviderUnavailableError, SignInRefusedError } from '../identity/oidc-sign-in.js';
import { bookRoutes } from './book-routes.js';
import { codecRoutes } from './codec.js';
import { countRoutes } from './count-routes.js';
import { bearerToken, closeNow, HttpError, listenOn, methodNotAllowed, SECURITY_HEADERS, sendJson } from '../http/json-http.js';
import { servePage } from './pages.js';
import { createRouter } from './router.js';
import { callRoute } from './route-call.js';
import { toHttpError } from './http-errors.js';
import type { ConsoleSignIn } from './sign-in.js';
import { scheduleRoutes } from './schedule-routes.js';

export interface ConsoleOptions {
  readonly connections: ConnectionsClient;
  /** The shared console token (the dev stack's): every permission on every tenant; undefined where operators sign in (production). */
  readonly token: string | undefined;
  /** Operators sign in through OpenID Connect (sign-in.ts); undefined: the shared token alone. */
  readonly signIn?: ConsoleSignIn | undefined;
  /** The provider's access tokens taken as `Authorization: Bearer` on the API (bearer-identities.ts); undefined: none. */
  readonly bearerIdentities?: BearerIdentities | undefined;
  /** A bearer credential that opens /codec/decode and nothing else (CONSOLE_CODEC_TOKEN); undefined: none. */
  readonly codecToken?: string | undefined;
  /** The only credential /codec/encode accepts (CONSOLE_CODEC_ENCODE_TOKEN); undefined: the codec decodes only. */
  readonly codecEncodeToken?: string | undefined;
  /** The token cookie is `Secure`: true when the console listens beyond loopback (server.ts), so it is reached through TLS. */
  readonly secureCookie?: boolean | undefined;
  /**
   * The codecs of the console's data converter (`dataConverterFor(config)?.payloadCodecs`), served
   * at /codec/encode and /codec/decode; none (encryption off): those answer 404.
   */
  readonly payloadCodecs?: readonly PayloadCodec[] | undefined;
  /** Browser origins allowed to call /codec/* with credentials (the Temporal Web UI); default none. */
  readonly codecCorsOrigins?: readonly string[] | undefined;
  /** Tenant of the schedule, forget and book listing routes when a request names none (AGGREGATOR_CUSTOMER_ID); none: they require `customer`. */
  readonly defaultCustomerId?: string | undefined;
  /** Where answers, cancels, decodes, changes, sign-ins and refusals are recorded (AUDIT_STORE). */
  readonly audit: AuditTrail;
}

export interface ConsoleServer {
  readonly server: Server;
  listen(port: number, host?: string): Promise<{ url: string; port: number }>;
  close(): Promise<void>;
}

/** The codec address of earlier builds, with a token in it (/codec/<token>/decode). */
const OLD_CODEC_ADDRESS = /^\/codec\/[^/]+\/(?:encode|decode)$/;

export function createConsoleServer(options: ConsoleOptions): ConsoleServer {
  const { signIn, bearerIdentities } = options;
  const auth = consoleAuth(options.token, {
    codecToken: options.codecToken,
    encodeToken: options.codecEncodeToken,
    secureCookie: options.secureCookie,
    signInAt: signIn ? '/auth/login' : undefined,
  });
  const route = createRouter([
    // Before connectionRoutes: `/api/connections/:workflowId` would take `counts` for a workflow id.
    ...countRoutes(options.connections),
    ...connectionRoutes(options.connections),
    ...scheduleRoutes(options.connections, options.defaultCustomerId),
    ...bookRoutes(options.connections, options.defaultCustomerId),
    ...codecRoutes(options.payloadCodecs ?? [], options.codecCorsOrigins ?? [], options.codecEncodeToken !== undefined),
    ...auditRoutes(options.audit, options.defaultCustomerId),
  ]);
  const { audit } = options;

  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      const http = toHttpError(error);
      sendJson(response, { status: http.status, body: { error: http.code, message: http.message, ...http.extra } });
    });
  });

  /** A person's access token of the provider (`Authorization: Bearer`), vouched for by the provider; undefined for none or a shared token. */
  async function bearerPrincipal(request: IncomingMessage): Promise<Principal | undefined> {
    const token = bearerToken(request);
    if (token === undefined || bearerIdentities === undefined || auth.isSharedToken(token)) return undefined;
    try {
      return await bearerIdentities.principalOf(token);
    } catch (error) {
      if (error instanceof BearerTokenRefusedError || error instanceof SignInRefusedError) throw new HttpError(401, 'BearerTokenRefused', error.message);
      if (error instanceof IdentityProviderUnavailableError)
        throw new HttpError(503, 'IdentityProviderUnavailable', `${error.message}; a bearer token it has not vouched for yet cannot be checked`);
      throw error;
    }
  }

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? '/', 'http://console.invalid');
    // Unauthenticated, for container health checks: it says only that the server answers.
    if (url.pathname === '/healthz' && request.method === 'GET') {
      sendJson(response, { status: 200, body: { state: 'RUNNING' } });
      return;
    }
    const match = route(request.method ?? 'GET', url.pathname);
    // CORS first: a preflight carries no credentials, and every answer (401 too) must be readable by the allowed origins.
    if (match?.cors?.(request, response)) return;
    if (signIn && (await signIn.handle(request, response, url))) return;
    if (auth.acceptQueryToken(request, response, url)) return;
    if (OLD_CODEC_ADDRESS.test(url.pathname)) {
      throw new HttpError(
        410,
        'CodecTokenInAddress',
        "the codec endpoint no longer takes a token in its address (where logs and the Web UI's settings showed it): use /codec/decode with Authorization: Bearer <CONSOLE_CODEC_TOKEN>, or the Web UI with includeCredentials and the console's cookie",
      );
    }
    const action = match?.params.action;
    const scope = url.pathname.startsWith('/codec/') && (action === 'encode' || action === 'decode') ? action : 'console';
    let caller: Caller;
    try {
      caller = auth.check(request, scope, (await signIn?.principalOf(request)) ?? (await bearerPrincipal(request)));
    } catch (error) {
      // A browser opening a page without a session goes to sign in, and comes back to the page.
      if (signIn && error instanceof HttpError && error.status === 401 && isPageRequest(request, url)) {
        redirectToSignIn(response, url);
        return;
      }
      throw error;
    }
    const { grant, principal } = caller;
    if (url.pathname === '/api/me' && request.method === 'GET') {
      sendJson(response, {
        status: 200,
        body: { subject: principal.subject, name: principal.name, via: principal.via, roles: describeRoles(principal.roles) },
      });
      return;
    }
    if (match === undefined) {
      if (await servePage(request, response, url.pathname)) return;
      throw new HttpError(404, 'NotFound', `no such page: ${url.pathname}`);
    }
    const handlerRoute = match.route;
    if (handlerRoute === undefined) throw methodNotAllowed(match.allowed);
    sendJson(response, await callRoute(handlerRoute, { request, url, params: match.params, grant, principal }, audit));
  }

  return {
    server,
    listen: (port, host) => listenOn(server, port, host),
    close: () => closeNow(server),
  };
}

/** A browser's GET of a console page (a navigation, not the API, the codec or a script), which a sign-in can answer. */
function isPageRequest(request: IncomingMessage, url: URL): boolean {
  if ((request.method ?? 'GET') !== 'GET' || url.pathname.startsWith('/api/') || url.pathname.startsWith('/codec/')) return false;
  return url.pathname === '/' || (request.headers.accept ?? '').includes('text/html');
}

function redirectToSignIn(response: ServerResponse, url: URL): void {
  response.writeHead(303, {
    ...SECURITY_HEADERS,
    location: `/auth/login?return=${encodeURIComponent(`${url.pathname}${url.search}`)}`,
    'cache-control': 'no-store',
  });
  response.end();
}
