// Operator console, Books page: the tenant's book refreshes, newest first, each with its progress
// (done of the total, in flight, the window's size and the reason for its last change, outcomes so
// far) while it runs or its report once ended; Pause/Resume, Cancel and a resize input for a running
// one; the latest report's summary. Polls every 2 s (not while the tab is hidden). Plain DOM: every
// service-provided string goes through textContent, never innerHTML. Apart from app.js: it shares
// dom.js, api.js and the CLI's durations (/shared/durations.js, src/presentation/durations.ts).
// @ts-check: checked by tsconfig.page-books.json (allowJs + checkJs) with what it imports.
import { took } from '/shared/durations.js';
import { el, byId, required } from './dom.js';
import { ApiError, api, messageOf, showSignedIn } from './api.js';

// The answers of the console's API (src/console/book-routes.ts), as JSON.
/** @typedef {import('../../contract/book/book-definitions.js').BookProgress} BookProgress */
/** @typedef {import('../../contract/book/book-definitions.js').BookReport} BookReport */
/** @typedef {import('../../contract/book/book-definitions.js').BookCounts} BookCounts */
/** @typedef {import('../../contract/window/window-definitions.js').WindowView} WindowView */
/**
 * One of GET /api/books/refreshes's refreshes: ListedRefresh in book-routes.ts (BookRefreshSummary
 * of src/client/books.ts with its progress while it runs, its report once ended, or the problem).
 * @typedef {object} ListedRefresh
 * @property {string} refreshWorkflowId
 * @property {string} customerId
 * @property {string} cadence
 * @property {string} executionStatus RUNNING, COMPLETED, FAILED, CANCELLED, TERMINATED, ...
 * @property {string} startedAt
 * @property {string} [closedAt]
 * @property {BookProgress} [progress]
 * @property {BookReport} [report]
 * @property {string} [problem]
 */
/** GET /api/books/refreshes */
/** @typedef {{ customerId: string, refreshes: ListedRefresh[], latestReport: BookReport | null }} RefreshList */
/**
 * How act() calls the refresh: the request's body, a confirmation asked first, what to do once it
 * answered, and (for its button) whether the action is a dangerous one.
 * @typedef {object} ActOptions
 * @property {boolean} [danger]
 * @property {string} [confirm]
 * @property {{ size?: number, unpin?: boolean }} [body]
 * @property {() => void} [after]
 */

const POLL_MS = 2000;

/**
 * @param {string} refreshId
 * @param {string} [action]
 */
function refreshPath(refreshId, action) {
  return `/api/books/refreshes/${encodeURIComponent(refreshId)}${action ? `/${action}` : ''}`;
}

// ----------------------------------------------------------------------------------------------
// What a refresh says: its progress while it runs, its report once ended (the same fields).

/** @param {BookProgress | BookReport} state */
function doneText(state) {
  const done = state.counts.done;
  if (state.total === undefined || state.total === null) return String(done);
  return `${done}/${state.total}${state.total > 0 ? ` (${Math.floor((100 * done) / state.total)}%)` : ''}`;
}

/** @param {WindowView} window */
function windowText(window) {
  const pinned = window.pinned !== undefined && window.pinned !== null ? `, pinned at ${window.pinned}` : '';
  const reason = window.lastChange ? ` — ${window.lastChange.reason}` : '';
  return `${window.size} (${window.floor}–${window.ceiling}${pinned})${reason}`;
}

/** @param {BookCounts} counts */
function outcomesText(counts) {
  const failedByType = Object.entries(counts.failedByType || {})
    .map(([type, n]) => `${type} ${n}`)
    .join(', ');
  return [
    `refreshed ${counts.refreshed}`,
    `needs end user ${counts.needsEndUser}`,
    `failed ${counts.failed}${failedByType ? ` (${failedByType})` : ''}`,
    `forgotten ${counts.forgotten}`,
    `malformed ${counts.malformed}`,
    ...(counts.cancelled ? [`cancelled ${counts.cancelled}`] : []),
  ].join(' · ');
}

// ----------------------------------------------------------------------------------------------
// The table of refreshes

/** Typed sizes survive a poll's re-render: kept by refresh id, with which input had the focus. */
/** @type {Map<string, string>} */
const typed = new Map();

/**
 * @param {string} label
 * @param {string} refreshId
 * @param {string} action
 * @param {ActOptions} [options]
 */
function actionButton(label, refreshId, action, options) {
  const button = el('button', { type: 'button', className: options && options.danger ? 'secondary danger' : 'secondary', textContent: label });
  button.addEventListener('click', () => void act(button, refreshId, action, options || {}));
  return button;
}

/**
 * @param {ListedRefresh} refresh
 * @param {BookProgress | BookReport} state
 */
function controls(refresh, state) {
  const id = refresh.refreshWorkflowId;
  const paused = state.status === 'paused';
  const input = el('input', {
    type: 'number',
    min: '1',
    max: '1000',
    className: 'size',
    value: typed.get(id) || '',
    placeholder: String(state.window.size),
    'aria-label': `Window size of ${id}`,
    dataset: { refreshId: id },
  });
  input.addEventListener('input', () => typed.set(id, input.value));
  // noValidate: the refresh checks the range and its refusal is shown, rather than a browser bubble.
  const submit = el('button', { type: 'submit', className: 'secondary', textContent: 'Resize' });
  const form = el('form', { className: 'resize', noValidate: true }, input, submit);
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const size = Number(input.value);
    if (!Number.isInteger(size) || size < 1) {
      showMessage(`Resize ${id}: type a whole number of connections`, 'error');
      return;
    }
    void act(submit, id, 'resize', { body: { size }, after: () => typed.delete(id) });
  });
  return [
    paused ? actionButton('Resume', id, 'resume') : actionButton('Pause', id, 'pause'),
    actionButton('Cancel', id, 'cancel', { danger: true, confirm: `Cancel ${id}? Connections in flight are cancelled; the report is still written.` }),
    form,
    ...(state.window.pinned !== undefined && state.window.pinned !== null ? [actionButton('Unpin', id, 'resize', { body: { unpin: true } })] : []),
  ];
}

/** @param {ListedRefresh} refresh */
function row(refresh) {
  const state = refresh.progress || refresh.report;
  const running = Boolean(refresh.progress && !['completed', 'cancelled'].includes(refresh.progress.status));
  const status = state ? state.status : refresh.executionStatus.toLowerCase();
  const cells = state
    ? [
        el('td', { textContent: doneText(state) }),
        el('td', { textContent: refresh.progress ? String(refresh.progress.inFlight) : '—' }),
        el('td', { className: 'window', textContent: windowText(state.window) }),
        el('td', { textContent: outcomesText(state.counts) }),
      ]
    : [el('td', { colSpan: 4, className: 'message error', textContent: refresh.problem || 'no progress or report' })];
  return el(
    'tr',
    { dataset: { refreshId: refresh.refreshWorkflowId } },
    el(
      'td',
      { className: 'id' },
      el('span', { textContent: refresh.refreshWorkflowId }),
      el('br'),
      el('small', { className: 'type', textContent: `${refresh.cadence} · started ${new Date(refresh.startedAt).toLocaleString()}` }),
    ),
    el('td', {}, el('span', { className: `status ${status}`, textContent: status })),
    ...cells,
    el('td', { className: 'buttons' }, ...(running && state && state.status !== 'cancelling' ? controls(refresh, state) : [])),
  );
}

/** @param {BookReport | null} report */
function renderReport(report) {
  const host = byId('latest-report');
  if (!report) {
    host.replaceChildren(el('p', { className: 'empty', textContent: 'No refresh has ended yet.' }));
    return;
  }
  const failedByType = Object.entries(report.counts.failedByType || {})
    .map(([type, n]) => `${type} ${n}`)
    .join(', ');
  const facts = [
    ['Refresh', report.refreshWorkflowId],
    ['Status', report.status],
    ['Done', doneText(report)],
    ['Refreshed', String(report.counts.refreshed)],
    ['Needs end user', String(report.counts.needsEndUser)],
    ['Failed', `${report.counts.failed}${failedByType ? ` (${failedByType})` : ''}`],
    ['Forgotten', String(report.counts.forgotten)],
    ['Malformed', String(report.counts.malformed)],
    ['Took', `${took(Date.parse(report.endedAt) - Date.parse(report.startedAt))} (ended ${new Date(report.endedAt).toLocaleString()})`],
    ['Paused / draining', `${took(report.pausedMs)} / ${took(report.drainMs)}`],
    ['Window at the end', windowText(report.window)],
    ['Pages', `${report.pages.length}`],
    ['Skipped runs', String(report.skippedWhileRunning)],
  ];
  const list = el('dl', { className: 'facts' });
  for (const [term, value] of facts) list.append(el('dt', { textContent: term }), el('dd', { textContent: value }));
  host.replaceChildren(list);
}

async function refresh() {
  const { refreshes, latestReport } = /** @type {RefreshList} */ (await api('/api/books/refreshes'));
  // Keep the focus in a size being typed across the re-render.
  const active = document.activeElement;
  const focused = active instanceof HTMLElement && active.classList.contains('size') ? active.dataset.refreshId : null;
  required('#refreshes tbody').replaceChildren(...refreshes.map(row));
  byId('refreshes-empty').hidden = refreshes.length > 0;
  if (focused) {
    const input = document.querySelector(`input.size[data-refresh-id="${CSS.escape(focused)}"]`);
    if (input instanceof HTMLInputElement) input.focus();
  }
  renderReport(latestReport);
}

/**
 * @param {string} text
 * @param {'ok' | 'error'} kind
 */
function showMessage(text, kind) {
  const message = byId('books-message');
  message.className = `message ${kind}`;
  message.textContent = text;
}

/**
 * @param {HTMLButtonElement} button
 * @param {string} refreshId
 * @param {string} action
 * @param {ActOptions} options
 */
async function act(button, refreshId, action, options) {
  if (options.confirm && !window.confirm(options.confirm)) return;
  button.disabled = true;
  try {
    const { progress } = /** @type {{ progress: BookProgress }} */ (
      await api(refreshPath(refreshId, action), { method: 'POST', ...(options.body ? { body: JSON.stringify(options.body) } : {}) })
    );
    if (options.after) options.after();
    showMessage(
      `${action === 'resize' ? (options.body?.unpin ? 'Unpinned' : `Pinned at ${options.body?.size}`) : `${action.charAt(0).toUpperCase()}${action.slice(1)}`}: ${refreshId} is ${progress.status}, window ${windowText(progress.window)}.`,
      'ok',
    );
  } catch (error) {
    showMessage(`${action} ${refreshId}: ${messageOf(error)}`, 'error');
  } finally {
    button.disabled = false;
  }
  await refresh().catch(() => undefined);
}

async function tick() {
  const live = byId('live');
  if (document.hidden) {
    setTimeout(() => void tick(), POLL_MS);
    return;
  }
  try {
    await refresh();
    live.className = 'live';
    live.textContent = `updated ${new Date().toLocaleTimeString()}`;
  } catch (error) {
    live.className = 'live error';
    live.textContent =
      error instanceof ApiError && error.status === 401
        ? 'Not signed in: open this page with ?token=<console token>'
        : `Cannot reach the console: ${messageOf(error)}`;
  } finally {
    setTimeout(() => void tick(), POLL_MS);
  }
}

void showSignedIn();
void tick();
