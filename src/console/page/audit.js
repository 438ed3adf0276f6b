// Operator console, Audit page: the audit trail of a tenant (the console's own unless one is named)
// over a time range, oldest first, and a link that exports the same entries as JSON lines
// (GET /api/audit, src/console/audit-routes.ts; it takes the admin role). Plain DOM: every
// string of an entry goes through textContent, never innerHTML.
// @ts-check: checked by tsconfig.page-audit.json (allowJs + checkJs) with what it imports.
import { el, byId } from './dom.js';
import { api, messageOf, showSignedIn } from './api.js';

/** @typedef {import('../../audit/audit-entry.js').AuditEntry} AuditEntry */
/** GET /api/audit */
/** @typedef {{ tenant: string | null, entries: AuditEntry[] }} AuditList */

/**
 * The query of the form as the API takes it: a datetime-local value is this browser's local time,
 * sent as an ISO instant.
 * @returns {URLSearchParams}
 */
function auditQuery() {
  const query = new URLSearchParams();
  const customer = /** @type {HTMLInputElement} */ (byId('audit-customer')).value.trim();
  if (customer) query.set('customer', customer);
  for (const name of ['from', 'to']) {
    const value = /** @type {HTMLInputElement} */ (byId(`audit-${name}`)).value;
    if (value) query.set(name, new Date(value).toISOString());
  }
  return query;
}

/** @param {AuditEntry} entry */
function outcomeText(entry) {
  return [entry.outcome, entry.outcomeDetail].filter(Boolean).join(': ');
}

/** @param {AuditEntry} entry */
function entryRow(entry) {
  return el(
    'tr',
    { className: `outcome-${entry.outcome}` },
    el('td', { textContent: new Date(entry.at).toLocaleString() }),
    el('td', { textContent: entry.actor.name, title: `${entry.actor.subject} (${entry.actor.via})` }),
    el('td', { textContent: entry.detail ? `${entry.action} (${entry.detail})` : entry.action }),
    el('td', { textContent: entry.tenant ?? '—' }),
    el('td', { textContent: entry.target ?? '—' }),
    el('td', { textContent: outcomeText(entry) }),
  );
}

async function showAudit() {
  const query = auditQuery();
  const message = byId('audit-message');
  /** @type {HTMLAnchorElement} */ (byId('audit-export')).href = `/api/audit?${new URLSearchParams([...query, ['format', 'jsonl']])}`;
  const body = /** @type {HTMLElement} */ (byId('audit-entries').querySelector('tbody'));
  try {
    const list = /** @type {AuditList} */ (await api(`/api/audit?${query}`));
    body.replaceChildren(...list.entries.map(entryRow));
    byId('audit-empty').hidden = list.entries.length > 0;
    message.textContent = `${list.entries.length} entr${list.entries.length === 1 ? 'y' : 'ies'} of ${list.tenant ?? 'every tenant'}`;
    message.classList.remove('error');
  } catch (error) {
    body.replaceChildren();
    byId('audit-empty').hidden = true;
    message.textContent = messageOf(error);
    message.classList.add('error');
  }
}

document.addEventListener('DOMContentLoaded', () => {
  void showSignedIn();
  byId('audit-query').addEventListener('submit', (event) => {
    event.preventDefault();
    void showAudit();
  });
  void showAudit();
});
