/**
 * Who may call the console: an operator signed in through OpenID Connect (sign-in.ts: a session whose
 * roles say what they may do, per tenant), or, on the dev stack only, the shared console token
 * (`Authorization: Bearer <token>`, or the HttpOnly cookie set by opening a page once with
 * `?token=<token>`), which may do everything on every tenant. The codec endpoint has
 * credentials of its own, never in an address (where logs, history and the Web UI's public
 * settings would show them):
 * - /codec/decode: also the codec token (CONSOLE_CODEC_TOKEN, as a bearer token), which opens
 *   nothing else, so a tool that reads payloads needs no console token and it is revoked alone.
 *   The Web UI decodes with the operator's console cookie (its `includeCredentials` codec setting):
 *   no token sits in its settings, and a browser that has not opened the console decodes nothing;
 * - /codec/encode: only the encode token (CONSOLE_CODEC_ENCODE_TOKEN, as a bearer token) may encode,
 *   since an encoded payload is one the worker trusts; without one the codec decodes only. Neither
 *   the console token, its cookie (a page of an allowed origin could send it) nor the codec token
 *   may encode a payload; they may encode an empty list, which the `temporal` CLI asks for before a
 *   query without arguments, and which makes nothing.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { bearerToken, HttpError, safeDecode, SECURITY_HEADERS } from '../http/json-http.js';
import { CODEC_TOKEN_PRINCIPAL, CONSOLE_TOKEN_PRINCIPAL, type Principal } from '../identity/roles.js';
import type { Grant } from './router.js';

/** What a request's credential grants, and whose it is. */
export interface Caller {
  readonly grant: Grant;
  readonly principal: Principal;
}

/** Why an encode was refused to a caller who may not encode: 403 on a console that encodes for nobody, else 401. */
export function encodeRefusal(consoleEncodes: boolean): HttpError {
  if (!consoleEncodes) {
    return new HttpError(
      403,
      'DecodeOnly',
      'this codec endpoint decodes only: encoding makes payloads the worker trusts, so it needs CONSOLE_CODEC_ENCODE_TOKEN set on the console and sent as Authorization: Bearer',
    );
  }
  return new HttpError(
    401,
    'Unauthorized',
    'encoding needs the encode token: Authorization: Bearer <CONSOLE_CODEC_ENCODE_TOKEN> (neither the console token nor the codec token encodes)',
  );
}

export const COOKIE_NAME = 'console_token';

/** What a request asks of the console: its pages and API, or one of the codec's two actions. */
export type ConsoleScope = 'console' | 'decode' | 'encode';

export interface ConsoleAuth {
  /**
   * `?token=` on a GET of a page (not /api/): sets the cookie and redirects to the address without
   * the token (303). True when it has answered; a wrong token is a 401.
   */
  acceptQueryToken(request: IncomingMessage, response: ServerResponse, url: URL): boolean;
  /**
   * What the request's credential grants for `scope`, and whose it is, or a 401: a signed-in
   * operator's session (`session`) or the console token for the console; either or the codec token
   * to decode; to encode, the encode token (`encode`), or a decode credential (`decode`: the codec
   * then encodes nothing, see codec.ts), else a 401 (403 when the console has no encode token and
   * the caller no decode credential).
   */
  check(request: IncomingMessage, scope: ConsoleScope, session?: Principal): Caller;
  /** Whether `token` is one of the console's shared credentials (the console, codec or encode token), not a person's. */
  isSharedToken(token: string): boolean;
}

export interface ConsoleAuthOptions {
  /** CONSOLE_CODEC_TOKEN: a bearer credential that decodes and opens nothing else; undefined: none. */
  readonly codecToken?: string | undefined;
  /** CONSOLE_CODEC_ENCODE_TOKEN: the only credential that may encode; undefined: the codec decodes only. */
  readonly encodeToken?: string | undefined;
  /** The cookie is `Secure` (sent back over https only): a console listening beyond loopback is reached through TLS. */
  readonly secureCookie?: boolean | undefined;
  /** Operators sign in (OIDC): the refusal of a request without credentials says where. */
  readonly signInAt?: string | undefined;
}

const ENCODE_TOKEN_PRINCIPAL: Principal = Object.freeze({ ...CODEC_TOKEN_PRINCIPAL, subject: 'codec-encode-token', name: 'the codec encode token' });

/** `token`: the shared console token (the dev stack's); undefined where operators sign in and no token is accepted (production). */
export function consoleAuth(token: string | undefined, { codecToken, encodeToken, secureCookie = false, signInAt }: ConsoleAuthOptions = {}): ConsoleAuth {
  // Compared as digests: equal lengths for timingSafeEqual, whatever the candidate's length.
  const matcher = (secret: string | undefined) => {
    const expected = secret === undefined ? undefined : digest(secret);
    return (candidate: string | undefined) =>
      expected !== undefined && candidate !== undefined && candidate !== '' && timingSafeEqual(digest(candidate), expected);
  };
  const isToken = matcher(token);
  const isCodecToken = matcher(codecToken);
  const isEncodeToken = matcher(encodeToken);
  return {
    acceptQueryToken(request, response, url) {
      const queryToken = url.searchParams.get('token');
      if (queryToken === null || (request.method ?? 'GET') !== 'GET' || url.pathname.startsWith('/api/')) return false;
      if (token === undefined)
        throw new HttpError(401, 'SignInRequired', `this console takes no shared token: ${signInAt !== undefined ? `sign in at ${signInAt}` : 'it has none'}`);
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
    isSharedToken: (candidate) => isToken(candidate) || isCodecToken(candidate) || isEncodeToken(candidate),
    check(request, scope, session) {
      const bearer = bearerToken(request);
      // Each credential compared once: every request of the console and its codec comes through here.
      const tokenHolder = isToken(bearer) || isToken(cookieToken(request));
      const operator = tokenHolder ? CONSOLE_TOKEN_PRINCIPAL : session;
      const codecReader = operator === undefined && isCodecToken(bearer);
      if (scope === 'encode') {
        if (isEncodeToken(bearer)) return { grant: 'encode', principal: ENCODE_TOKEN_PRINCIPAL };
        // A reader's CLI asks to encode a query's (empty) arguments: it may, and nothing else (codec.ts).
        if (operator) return { grant: 'decode', principal: operator };
        if (codecReader) return { grant: 'decode', principal: CODEC_TOKEN_PRINCIPAL };
        throw encodeRefusal(encodeToken !== undefined);
      }
      if (operator) return { grant: 'console', principal: operator };
      if (scope === 'decode' && codecReader) return { grant: 'decode', principal: CODEC_TOKEN_PRINCIPAL };
      if (codecReader) throw new HttpError(401, 'Unauthorized', 'the codec token opens /codec/decode only: the console needs its own token');
      const how = signInAt !== undefined ? `sign in at ${signInAt}` : 'Authorization: Bearer <token>, or open the page once with ?token=<token>';
      throw new HttpError(
        401,
        signInAt !== undefined ? 'SignInRequired' : 'Unauthorized',
        scope === 'decode'
          ? `decoding needs a signed-in operator or the console token (${how}) or CONSOLE_CODEC_TOKEN as Authorization: Bearer`
          : `the console needs you signed in: ${how}`,
      );
    },
  };
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

function cookieToken(request: IncomingMessage): string | undefined {
  for (const part of (request.headers.cookie ?? '').split(';')) {
    const [name, ...value] = part.trim().split('=');
    if (name === COOKIE_NAME) return safeDecode(value.join('='));
  }
  return undefined;
}
