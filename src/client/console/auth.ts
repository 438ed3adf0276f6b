/**
 * Who may call the console. Every request needs the console token: `Authorization: Bearer <token>`,
 * or the HttpOnly cookie set by opening a page once with `?token=<token>`. Two exceptions:
 * - /codec/<codec token>/decode: the codec token (codecTokenFor) decodes and does nothing else,
 *   because the Web UI's server-side codec setting (`--ui-codec-endpoint`) cannot send credentials,
 *   and whoever reads that setting can already read decoded payloads in that Web UI;
 * - /codec/encode: only the encode token (CONSOLE_CODEC_ENCODE_TOKEN, as a bearer token) may encode,
 *   since an encoded payload is one the worker trusts; without one the codec decodes only. Neither
 *   the console token, its cookie (a page of an allowed origin could send it) nor the codec token
 *   may encode.
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
  /**
   * Throws a 401 unless the request carries the console token, or `params` the codec token; on the
   * codec (`codecAction`), encode needs the encode token and nothing else (403 when there is none).
   */
  check(request: IncomingMessage, params: Params, codecAction?: string): void;
}

export interface ConsoleAuthOptions {
  /** CONSOLE_CODEC_ENCODE_TOKEN: the only credential that may encode; undefined: the codec decodes only. */
  readonly encodeToken?: string | undefined;
  /** The cookie is `Secure` (sent back over https only): a console listening beyond loopback is reached through TLS. */
  readonly secureCookie?: boolean | undefined;
}

export function consoleAuth(token: string, { encodeToken, secureCookie = false }: ConsoleAuthOptions = {}): ConsoleAuth {
  const expected = digest(token);
  const expectedCodecToken = digest(codecTokenFor(token));
  const expectedEncodeToken = encodeToken === undefined ? undefined : digest(encodeToken);
  // Compared as digests: equal lengths for timingSafeEqual, whatever the candidate's length.
  const isToken = (candidate: string | undefined) => candidate !== undefined && candidate !== '' && timingSafeEqual(digest(candidate), expected);
  const isEncodeToken = (candidate: string | undefined) =>
    expectedEncodeToken !== undefined && candidate !== undefined && candidate !== '' && timingSafeEqual(digest(candidate), expectedEncodeToken);
  return {
    acceptQueryToken(request, response, url) {
      const queryToken = url.searchParams.get('token');
      if (queryToken === null || (request.method ?? 'GET') !== 'GET' || url.pathname.startsWith('/api/')) return false;
      if (!isToken(queryToken)) throw new HttpError(401, 'Unauthorized', 'the token in the address is not the console token');
      url.searchParams.delete('token');
      response.writeHead(303, {
        ...SECURITY_HEADERS,
        'set-cookie': `${COOKIE_NAME}=${encodeURIComponent(queryToken)}; HttpOnly; SameSite=Strict; Path=/${secureCookie ? '; Secure' : ''}`,
        location: `${url.pathname}${url.search}`,
        'cache-control': 'no-store',
      });
      response.end();
      return true;
    },
    check(request, params, codecAction) {
      const codecToken = params[CODEC_TOKEN_PARAM];
      if (codecAction === 'encode') {
        if (codecToken !== undefined) throw new HttpError(403, 'DecodeOnly', 'the codec token in an address decodes only: encoding needs the encode token');
        if (expectedEncodeToken === undefined) {
          throw new HttpError(403, 'DecodeOnly', 'this codec endpoint decodes only: encoding makes payloads the worker trusts, so it needs CONSOLE_CODEC_ENCODE_TOKEN set on the console and sent as Authorization: Bearer');
        }
        if (!isEncodeToken(bearerToken(request))) throw new HttpError(401, 'Unauthorized', 'encoding needs the encode token: Authorization: Bearer <CONSOLE_CODEC_ENCODE_TOKEN> (the console token does not encode)');
        return;
      }
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
