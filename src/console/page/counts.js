// The connections page's counts, above its lists: per tenant the caller may read, its running
// connections by status and its closed ones by how they ended (GET /api/connections/counts,
// src/console/count-routes.ts), refreshed every 15 s while the tab is shown. A module of its
// own on index.html, before app.js; it keeps to its own section (#counts-section).
// @ts-check: checked by tsconfig.page.json (allowJs + checkJs) with what it imports.
import { el, byId, required } from './dom.js';
import { api, messageOf } from './api.js';

/**
 * One tenant's counts, as GET /api/connections/counts answers them (TenantConnectionCounts in
 * src/client/connection-counts.ts).
 * @typedef {object} TenantCounts
 * @property {string} customerId
 * @property {number} total
 * @property {Record<'Authorizing' | 'AwaitingAnswer' | 'Retrieving', number>} running
 * @property {Record<'Completed' | 'Failed' | 'Canceled' | 'Terminated' | 'TimedOut' | 'ContinuedAsNew', number>} closed
 */
/** @typedef {{ tenants: TenantCounts[], found: 'named' | 'roles' | 'visibility', more: boolean, countedAt: string }} CountsAnswer */

const COUNTS_EVERY_MS = 15_000;

/**
 * The table's columns after the tenant: a heading and how to read it from a tenant's counts.
 * @type {[string, (counts: TenantCounts) => number][]}
 */
const COUNT_COLUMNS = [
  ['Authorizing', (counts) => counts.running.Authorizing],
  ['Awaiting answer', (counts) => counts.running.AwaitingAnswer],
  ['Retrieving', (counts) => counts.running.Retrieving],
  ['Completed', (counts) => counts.closed.Completed],
  ['Failed', (counts) => counts.closed.Failed],
  ['Cancelled', (counts) => counts.closed.Canceled],
  ['Terminated', (counts) => counts.closed.Terminated],
  ['Timed out', (counts) => counts.closed.TimedOut],
  ['Total', (counts) => counts.total],
];

/** @param {CountsAnswer} answer */
function renderCounts(answer) {
  required('#counts thead').replaceChildren(
    el('tr', {}, el('th', { textContent: 'Tenant' }), ...COUNT_COLUMNS.map(([heading]) => el('th', { textContent: heading }))),
  );
  const rows = answer.tenants.map((counts) =>
    el(
      'tr',
      { dataset: { customerId: counts.customerId } },
      el('td', { className: 'id', textContent: counts.customerId }),
      ...COUNT_COLUMNS.map(([heading, read]) => el('td', { className: 'count', dataset: { column: heading }, textContent: String(read(counts)) })),
    ),
  );
  required('#counts tbody').replaceChildren(...rows);
  byId('counts-empty').hidden = answer.tenants.length > 0;
  const note = byId('counts-message');
  note.className = 'message';
  note.textContent = answer.more ? `The ${answer.tenants.length} most recently active tenants; more have connections.` : '';
}

async function refreshCounts() {
  try {
    renderCounts(/** @type {CountsAnswer} */ (await api('/api/connections/counts')));
  } catch (error) {
    const note = byId('counts-message');
    note.className = 'message error';
    note.textContent = `Cannot count connections: ${messageOf(error)}`;
  }
}

async function countsTick() {
  if (!document.hidden) await refreshCounts();
  setTimeout(() => void countsTick(), COUNTS_EVERY_MS);
}

void countsTick();
