/**
 * Where a tenant's callbacks may go (CALLBACK_URLS): a list of URL prefixes per tenant. A callback URL
 * is allowed when it begins with one of its tenant's prefixes, compared as parsed URLs (scheme, host,
 * port exactly; the path at a `/` boundary), so `https://hooks.lender.example/a` does not admit
 * `https://hooks.lender.example.attacker.net/` nor `https://hooks.lender.example/ab`.
 *
 * A prefix must be https, unless its host is an IP address: listing an address (a receiver inside the
 * lender's network) is the explicit permission to reach it. A prefix naming a host by DNS name never
 * reaches a private, loopback or link-local address (checked when the name is resolved, at each
 * delivery: delivery-request.ts), so a name that resolves inside the network is refused unless the
 * address itself is listed.
 */
import { isIP } from 'node:net';
import { z } from 'zod';
import { ID_SEGMENT_SOURCE } from '../contract/ids.js';

const ENTRY = new RegExp(`^(${ID_SEGMENT_SOURCE})=(\\S+)$`);

/** `text` as a URL without credentials, or why it is not one. */
function parsedWithoutCredentials(text: string): URL | string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'is not a URL';
  }
  return url.username !== '' || url.password !== '' ? 'must not carry credentials' : url;
}

/** Why `text` cannot be an allowed prefix, or undefined when it can. */
function prefixProblem(text: string): string | undefined {
  const url = parsedWithoutCredentials(text);
  if (typeof url === 'string') return url;
  if (url.search !== '' || url.hash !== '') return 'must not carry a query or fragment';
  const literal = isIP(hostOf(url)) !== 0;
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && literal)) return 'must be https (http only to a listed IP address)';
  return undefined;
}

/** The URL's host without IPv6 brackets. */
function hostOf(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1');
}

/** `lender-a=https://hooks.lender-a.example/connections,lender-b=http://10.0.4.7:8443/` → prefixes by customer id. */
export const CallbackUrls = z.string().transform((text, ctx) => {
  const allowed = new Map<string, string[]>();
  for (const raw of text.split(',')) {
    const entry = raw.trim();
    if (entry === '') continue;
    const [, customerId, prefix] = ENTRY.exec(entry) ?? [];
    const problem = customerId === undefined || prefix === undefined ? 'must be <customerId>=<url prefix>' : prefixProblem(prefix);
    if (customerId === undefined || prefix === undefined || problem !== undefined) {
      ctx.addIssue({ code: 'custom', message: `${JSON.stringify(entry)}: ${problem}` });
      continue;
    }
    allowed.set(customerId, [...(allowed.get(customerId) ?? []), prefix]);
  }
  return allowed;
});

function within(url: URL, prefix: URL): boolean {
  if (url.protocol !== prefix.protocol || url.host !== prefix.host) return false;
  if (prefix.pathname === '/' || url.pathname === prefix.pathname) return true;
  const base = prefix.pathname.endsWith('/') ? prefix.pathname : `${prefix.pathname}/`;
  return url.pathname.startsWith(base);
}

/** Why `text` may not be `customerId`'s callback URL, or undefined when it may. */
export function callbackUrlProblem(allowed: ReadonlyMap<string, readonly string[]>, customerId: string, text: string): string | undefined {
  const url = parsedWithoutCredentials(text);
  if (typeof url === 'string') return url;
  if (url.hash !== '') return 'must not carry a fragment';
  const prefixes = allowed.get(customerId) ?? [];
  if (prefixes.length === 0) return `is not allowed: tenant ${customerId} has no callback URLs (CALLBACK_URLS)`;
  if (!prefixes.some((prefix) => within(url, new URL(prefix))))
    return `is not allowed for tenant ${customerId}: it must begin with one of ${prefixes.join(', ')} (CALLBACK_URLS)`;
  return undefined;
}

/** The URL as state and logs show it: without its query, which may carry the receiver's own secret. */
export function displayedUrl(text: string): string {
  try {
    const url = new URL(text);
    return `${url.origin}${url.pathname}${url.search === '' ? '' : '?…'}`;
  } catch {
    return '(not a URL)';
  }
}
