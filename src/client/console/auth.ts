/**
 * Who may call the console. Every request needs the console token: `Authorization: Bearer <token>`,
 * or the HttpOnly cookie set by opening a page once with `?token=<token>`. The one exception is the
 * codec at /codec/<codec token>/(encode|decode): the codec token (codecTokenFor) opens the codec and
 * nothing else, because the Web UI's server-side codec setting (`--ui-codec-endpoint`) cannot send
 * credentials, and whoever reads that setting can already read decoded payloads in that Web UI.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { HttpError, safeDecode, SECURITY_HEADERS } from './http.js';
import type { Params } from './router.js';

export const COOKIE_NAME = 'console_token';
/** The path parameter of a route that carries the codec token instead of a credential. */
export const CODEC_TOKEN_PARAM = 'codecToken';

/** The token that opens the codec endpoint only, derived from the console token. */
export function codecTokenFor(consoleToken: string): string {
  return createHmac('sha256', consoleToken).update('temporal-web-ui-codec').digest('base64url').slice(0, 32);
}

export interface ConsoleAuth {
  /**
   * `?token=` on a GET of a page (not /api/): sets the cookie and redirects to the address without
   * the token (303). True when it has answered; a wrong token is a 401.
   */
  acceptQueryToken(request: IncomingMessage, response: ServerResponse, url: URL): boolean;
  /** Throws a 401 unless the request carries the console token, or `params` the codec token. */
  check(request: IncomingMessage, params: Params): void;
}

export function consoleAuth(token: string): ConsoleAuth {
  const expected = digest(token);
  const expectedCodecToken = digest(codecTokenFor(token));
  // Compared as digests: equal lengths for timingSafeEqual, whatever the candidate's length.
  const isToken = (candidate: string | undefined) => candidate !== undefined && candidate !== '' && timingSafeEqual(digest(candidate), expected);
  return {
    acceptQueryToken(request, response, url) {
      const queryToken = url.searchParams.get('token');
      if (queryToken === null || (request.method ?? 'GET') !== 'GET' || url.pathname.startsWith('/api/')) return false;
      if (!isToken(queryToken)) throw new HttpError(401, 'Unauthorized', 'the token in the address is not the console token');
      url.searchParams.delete('token');
      response.writeHead(303, {
        ...SECURITY_HEADERS,
        'set-cookie': `${COOKIE_NAME}=${encodeURIComponent(queryToken)}; HttpOnly; SameSite=Strict; Path=/`,
        location: `${url.pathname}${url.search}`,
        'cache-control': 'no-store',
      });
      response.end();
      return true;
    },
    check(request, params) {
      const codecToken = params[CODEC_TOKEN_PARAM];
      if (codecToken !== undefined) {
        if (!timingSafeEqual(digest(codecToken), expectedCodecToken)) throw new HttpError(401, 'Unauthorized', "the token in the codec address is not this console's codec token");
      } else if (!isToken(bearerToken(request)) && !isToken(cookieToken(request))) {
        throw new HttpError(401, 'Unauthorized', 'the console needs its token: Authorization: Bearer <token>, or open the page once with ?token=<token>');
      }
    },
  };
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

function bearerToken(request: IncomingMessage): string | undefined {
  const header = request.headers.authorization;
  const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  return match?.[1];
}

function cookieToken(request: IncomingMessage): string | undefined {
  for (const part of (request.headers.cookie ?? '').split(';')) {
    const [name, ...value] = part.trim().split('=');
    if (name === COOKIE_NAME) return safeDecode(value.join('='));
  }
  return undefined;
}
