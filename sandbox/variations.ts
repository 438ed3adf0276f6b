/**
 * Realistic variations of the service's answers: the same data written the ways a real aggregation
 * service writes it (nulls in descriptive fields, members nobody documented, other date formats,
 * the brand-prefixed code field). Only the representation changes: amounts, balances, ids and
 * which records exist stay exactly as generated, so every invariant of the data still holds.
 *
 * A scenario selects variations for every answer of its logins (`variant_*` usernames); the header
 * `x-sandbox-variation: nulls,extra-members,...` adds them to one request's answer, whatever the
 * scenario, so a property of "any endpoint" can be tested. Scenario variations apply first, then the
 * header's. Error bodies are never varied.
 */
import type { Reply } from './http.js';

export const VARIATION_HEADER = 'x-sandbox-variation';

/** Each variation: what it changes, and why a real service does it (served in the listing). */
export const VARIATIONS = {
  nulls: {
    changes:
      'null in descriptive fields: Description (and Code) of every transaction whose Id ends in 0-3 (the same transactions in accounts detail, investments and attributes detail); Category of Chequing accounts; Holder Email and PhoneNumber; Login Type; investment accounts of Type cash: Name; every Position: Category; every Security: Aliases and ISIN',
    why: 'institutions leave descriptive fields empty (a transaction without a memo, an account the bank never categorised); the service passes them on as null',
  },
  'extra-members': {
    changes:
      'members the spec does not list: top level "Tag": "abc" (in attributes answers beside the groups, a member that is not a group); every account "Nickname": null and "Extra": { "Source": "sandbox" }; every transaction "Reference" (a string) and "SubCode": null; every Holder "Type": "Individual" and its Address "Unit": null; Login "IsGoodLogin": true; every challenge "Hint": null; investment accounts, positions and securities "Extra": { "Source": "sandbox" }',
    why: 'the service adds fields over time and echoes request tags; a client must ignore what it does not know',
  },
  'slash-dates': {
    changes: 'transaction Date (accounts detail and investments) written YYYY/MM/DD instead of YYYY-MM-DD',
    why: 'the same service writes YYYY/MM/DD in its attributes answers; institutions differ in what they pass through',
  },
  'iso-datetimes': {
    changes: 'every date-only Date (transactions, investment transactions, attributes detail) written as an ISO timestamp with a time: 2026-10-31T00:00:00',
    why: "some institutions send timestamps where the spec shows dates (the service's own LastRefresh and Security.Date are timestamps)",
  },
  'brand-code': {
    changes: 'the code field of 202 pending bodies written FlinksCode instead of ServiceCode',
    why: "the real interface prefixes the code field with the provider's brand (FACTS.md); the spec writes ServiceCode",
  },
} as const satisfies Record<string, { readonly changes: string; readonly why: string }>;

export type Variation = keyof typeof VARIATIONS;
const NAMES = Object.keys(VARIATIONS) as Variation[];

const isVariation = (name: string): name is Variation => Object.hasOwn(VARIATIONS, name);

/** Parses the header: the variations named (none when absent), or an error message (answered 400 INVALID_REQUEST). */
export function parseVariationHeader(value: string | string[] | undefined): readonly Variation[] | string {
  if (value === undefined) return [];
  const text = Array.isArray(value) ? value.join(',') : value;
  const named = new Set<Variation>();
  for (const name of text
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean)) {
    if (!isVariation(name)) return `${VARIATION_HEADER}: unknown variation "${name}" (${NAMES.join(', ')})`;
    named.add(name);
  }
  // Both rewrite the same dates: the answer would depend on an order nobody chose.
  if (named.has('slash-dates') && named.has('iso-datetimes')) return `${VARIATION_HEADER}: slash-dates and iso-datetimes both rewrite dates; name one`;
  return NAMES.filter((name) => named.has(name));
}

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);
const objects = (value: unknown): Json[] => (Array.isArray(value) ? value.filter(isObject) : []);

/** The transactions `nulls` empties: chosen by Id, so the same ones in every answer and window. */
const chosenForNull = (id: unknown): boolean => typeof id === 'string' && /[0-3]$/.test(id);

const DATE_ONLY = /^(\d{4})[-/](\d{2})[-/](\d{2})$/;

/** The answer with the variations applied: a new body (the reply's own objects may be shared, cached data). */
export function vary(reply: Reply, variations: readonly Variation[]): Reply {
  if (variations.length === 0 || reply.status >= 300 || reply.status < 200) return reply;
  const text =
    'body' in reply
      ? JSON.stringify(reply.body)
      : 'raw' in reply
        ? reply.raw
        : Buffer.concat(reply.chunks.map((chunk) => (typeof chunk === 'string' ? Buffer.from(chunk) : chunk))).toString('utf8');
  const body: unknown = JSON.parse(text);
  if (!isObject(body)) return reply;
  applyVariations(body, new Set(variations));
  return { status: reply.status, body, ...(reply.headers ? { headers: reply.headers } : {}) };
}

function applyVariations(body: Json, set: ReadonlySet<Variation>): void {
  const dates = set.has('iso-datetimes') ? isoDateTime : set.has('slash-dates') ? slashDate : undefined;
  const nulls = set.has('nulls');
  const extra = set.has('extra-members');

  if (set.has('brand-code') && typeof body.ServiceCode === 'string') {
    // Renamed in place, so the code keeps its position among the members.
    const entries = Object.entries(body);
    for (const [key] of entries) delete body[key];
    for (const [key, value] of entries) body[key === 'ServiceCode' ? 'FlinksCode' : key] = value;
  }
  if (extra) body.Tag = 'abc';
  if (isObject(body.Login)) {
    if (nulls) body.Login.Type = null;
    if (extra) body.Login.IsGoodLogin = true;
  }
  if (extra) for (const challenge of objects(body.SecurityChallenges)) challenge.Hint = null;

  for (const account of objects(body.Accounts)) {
    const investment = 'FullAccountId' in account || 'Positions' in account;
    if (investment) {
      if (nulls && account.Type === 'cash') account.Name = null;
      if (extra) account.Extra = { Source: 'sandbox' };
      for (const position of objects(account.Positions)) {
        if (nulls) position.Category = null;
        if (extra) position.Extra = { Source: 'sandbox' };
      }
    } else {
      if (nulls && account.Type === 'Chequing') account.Category = null;
      if (extra) Object.assign(account, { Nickname: null, Extra: { Source: 'sandbox' } });
      if (isObject(account.Holder)) {
        if (nulls) Object.assign(account.Holder, { Email: null, PhoneNumber: null });
        if (extra) {
          account.Holder.Type = 'Individual';
          if (isObject(account.Holder.Address)) account.Holder.Address.Unit = null;
        }
      }
    }
    for (const transaction of objects(account.Transactions)) {
      if (nulls && chosenForNull(transaction.Id)) {
        transaction.Description = null;
        if ('Code' in transaction) transaction.Code = null;
      }
      if (extra) Object.assign(transaction, { Reference: `REF${String(transaction.Id).replaceAll('-', '').slice(0, 12).toUpperCase()}`, SubCode: null });
      if (dates && typeof transaction.Date === 'string') transaction.Date = dates(transaction.Date);
    }
  }
  for (const security of objects(body.Securities)) {
    if (nulls) Object.assign(security, { Aliases: null, ISIN: null });
    if (extra) security.Extra = { Source: 'sandbox' };
  }
  // Attribute groups: their detail transactions (dates are already YYYY/MM/DD, the spec's format).
  for (const group of Object.values(body).filter(isObject)) {
    for (const detail of objects(group.AttributesDetail)) {
      for (const transaction of objects(detail.Transactions)) {
        if (nulls && chosenForNull(transaction.TransactionId)) transaction.Description = null;
        if (set.has('iso-datetimes') && typeof transaction.Date === 'string') transaction.Date = isoDateTime(transaction.Date);
      }
    }
  }
}

/** YYYY-MM-DD (or YYYY/MM/DD) as YYYY/MM/DD; anything else as it was. */
function slashDate(date: string): string {
  const match = DATE_ONLY.exec(date);
  return match ? `${match[1]}/${match[2]}/${match[3]}` : date;
}

/** A date-only value as an ISO timestamp at midnight without zone (as the spec's LastRefresh is written). */
function isoDateTime(date: string): string {
  const match = DATE_ONLY.exec(date);
  return match ? `${match[1]}-${match[2]}-${match[3]}T00:00:00` : date;
}
