// The console pages' one way to call the console's JSON API (imported by counts.js, app.js, books.js and audit.js):
// same-origin credentials, never cached, and an ApiError carrying the status and the answer's body.
// @ts-check: checked by tsconfig.page.json, tsconfig.page-books.json and tsconfig.page-audit.json (allowJs + checkJs).
import { el } from './dom.js';

export class ApiError extends Error {
  /**
   * @param {number} status
   * @param {unknown} body the answer's JSON (`{ error, message, ... }` from the console), or null
   */
  constructor(status, body) {
    const message = body !== null && typeof body === 'object' && 'message' in body ? body.message : undefined;
    super(message ? String(message) : `HTTP ${status}`);
    this.status = status;
    this.body = body;
  }
}

/**
 * The answer's JSON body (null when it has none); an ApiError when the status is not 2xx. The
 * caller states the shape it expects of the route.
 * @param {string} path
 * @param {RequestInit} [init]
 * @returns {Promise<unknown>}
 */
export async function api(path, init) {
  const response = await fetch(path, {
    credentials: 'same-origin',
    cache: 'no-store',
    ...init,
    headers: { accept: 'application/json', ...(init && init.body ? { 'content-type': 'application/json' } : {}) },
  });
  /** @type {unknown} */
  let body;
  try {
    body = await response.json();
  } catch {
    body = null;
  }
  if (!response.ok) throw new ApiError(response.status, body);
  return body;
}

/**
 * What a caught value says in a message: an Error's message, else its `message` as text (what
 * `${error.message}` showed).
 * @param {unknown} error
 * @returns {string}
 */
export function messageOf(error) {
  return error instanceof Error ? error.message : String(/** @type {{ message?: unknown }} */ (error)?.message);
}

/**
 * Who is signed in, in the header (#who): their name and roles, and a way to sign out; nothing for the
 * dev stack's shared token, which names nobody.
 * @returns {Promise<void>}
 */
export async function showSignedIn() {
  const who = document.getElementById('who');
  if (!who) return;
  try {
    const me = /** @type {{ name: string, roles: string, via: string }} */ (await api('/api/me'));
    if (me.via !== 'oidc') return;
    who.replaceChildren(el('span', { textContent: `${me.name} (${me.roles})` }), ' · ', el('a', { href: '/auth/logout', textContent: 'Sign out' }));
    who.hidden = false;
  } catch {
    // The page's own calls say what is wrong (401, 403); the header stays empty.
  }
}
