// Operator console, Books page: the tenant's book refreshes, newest first, each with its progress
// (done of the total, in flight, the window's size and the reason for its last change, outcomes so
// far) while it runs or its report once ended; Pause/Resume, Cancel and a resize input for a running
// one; the latest report's summary. Polls every 2 s (not while the tab is hidden). Plain DOM: every
// service-provided string goes through textContent, never innerHTML. Standalone from app.js: the
// connections page's helpers are not modules, so the few this page needs are repeated here.
'use strict';

const POLL_MS = 2000;

// el(): dom.js, loaded before this file.

// ApiError and api(): api.js, loaded before this file.

function refreshPath(refreshId, action) {
  return `/api/books/refreshes/${encodeURIComponent(refreshId)}${action ? `/${action}` : ''}`;
}

function seconds(ms) {
  if (ms < 10000) return `${(Math.max(0, ms) / 1000).toFixed(1)}s`;
  const s = Math.floor(ms / 1000);
  return s >= 3600 ? `${Math.floor(s / 3600)}h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m` : `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, '0')}s`;
}

// ----------------------------------------------------------------------------------------------
// What a refresh says: its progress while it runs, its report once ended (the same fields).

function doneText(state) {
  const done = state.counts.done;
  if (state.total === undefined || state.total === null) return String(done);
  return `${done}/${state.total}${state.total > 0 ? ` (${Math.floor((100 * done) / state.total)}%)` : ''}`;
}

function windowText(window) {
  const pinned = window.pinned !== undefined && window.pinned !== null ? `, pinned at ${window.pinned}` : '';
  const reason = window.lastChange ? ` — ${window.lastChange.reason}` : '';
  return `${window.size} (${window.floor}–${window.ceiling}${pinned})${reason}`;
}

function outcomesText(counts) {
  const failedByType = Object.entries(counts.failedByType || {}).map(([type, n]) => `${type} ${n}`).join(', ');
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
const typed = new Map();

function actionButton(label, refreshId, action, options) {
  const button = el('button', { type: 'button', className: options && options.danger ? 'secondary danger' : 'secondary', textContent: label });
  button.addEventListener('click', () => void act(button, refreshId, action, options || {}));
  return button;
}

function controls(refresh, state) {
  const id = refresh.refreshWorkflowId;
  const paused = state.status === 'paused';
  const input = el('input', { type: 'number', min: 1, max: 1000, className: 'size', value: typed.get(id) || '', placeholder: String(state.window.size), 'aria-label': `Window size of ${id}`, dataset: { refreshId: id } });
  input.addEventListener('input', () => typed.set(id, input.value));
  // noValidate: the refresh checks the range and its refusal is shown, rather than a browser bubble.
  const form = el('form', { className: 'resize', noValidate: true }, input, el('button', { type: 'submit', className: 'secondary', textContent: 'Resize' }));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const size = Number(input.value);
    if (!Number.isInteger(size) || size < 1) {
      showMessage(`Resize ${id}: type a whole number of connections`, 'error');
      return;
    }
    void act(form.querySelector('button'), id, 'resize', { body: { size }, after: () => typed.delete(id) });
  });
  return [
    paused ? actionButton('Resume', id, 'resume') : actionButton('Pause', id, 'pause'),
    actionButton('Cancel', id, 'cancel', { danger: true, confirm: `Cancel ${id}? Connections in flight are cancelled; the report is still written.` }),
    form,
    ...(state.window.pinned !== undefined && state.window.pinned !== null ? [actionButton('Unpin', id, 'resize', { body: { unpin: true } })] : []),
  ];
}

function row(refresh) {
  const state = refresh.progress || refresh.report;
  const running = Boolean(refresh.progress) && !['completed', 'cancelled'].includes(refresh.progress.status);
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
    el('td', { className: 'id' }, el('span', { textContent: refresh.refreshWorkflowId }), el('br'), el('small', { className: 'type', textContent: `${refresh.cadence} · started ${new Date(refresh.startedAt).toLocaleString()}` })),
    el('td', {}, el('span', { className: `status ${status}`, textContent: status })),
    ...cells,
    el('td', { className: 'buttons' }, ...(running && state.status !== 'cancelling' ? controls(refresh, state) : [])),
  );
}

function renderReport(report) {
  const host = document.getElementById('latest-report');
  if (!report) {
    host.replaceChildren(el('p', { className: 'empty', textContent: 'No refresh has ended yet.' }));
    return;
  }
  const failedByType = Object.entries(report.counts.failedByType || {}).map(([type, n]) => `${type} ${n}`).join(', ');
  const facts = [
    ['Refresh', report.refreshWorkflowId],
    ['Status', report.status],
    ['Done', doneText(report)],
    ['Refreshed', String(report.counts.refreshed)],
    ['Needs end user', String(report.counts.needsEndUser)],
    ['Failed', `${report.counts.failed}${failedByType ? ` (${failedByType})` : ''}`],
    ['Forgotten', String(report.counts.forgotten)],
    ['Malformed', String(report.counts.malformed)],
    ['Took', `${seconds(Date.parse(report.endedAt) - Date.parse(report.startedAt))} (ended ${new Date(report.endedAt).toLocaleString()})`],
    ['Paused / draining', `${seconds(report.pausedMs)} / ${seconds(report.drainMs)}`],
    ['Window at the end', windowText(report.window)],
    ['Pages', `${report.pages.length}`],
    ['Skipped runs', String(report.skippedWhileRunning)],
  ];
  const list = el('dl', { className: 'facts' });
  for (const [term, value] of facts) list.append(el('dt', { textContent: term }), el('dd', { textContent: value }));
  host.replaceChildren(list);
}

async function refresh() {
  const { refreshes, latestReport } = await api('/api/books/refreshes');
  // Keep the focus in a size being typed across the re-render.
  const focused = document.activeElement && document.activeElement.classList.contains('size') ? document.activeElement.dataset.refreshId : null;
  document.querySelector('#refreshes tbody').replaceChildren(...refreshes.map(row));
  document.getElementById('refreshes-empty').hidden = refreshes.length > 0;
  if (focused) {
    const input = document.querySelector(`input.size[data-refresh-id="${CSS.escape(focused)}"]`);
    if (input) input.focus();
  }
  renderReport(latestReport);
}

function showMessage(text, kind) {
  const message = document.getElementById('books-message');
  message.className = `message ${kind}`;
  message.textContent = text;
}

async function act(button, refreshId, action, options) {
  if (options.confirm && !window.confirm(options.confirm)) return;
  button.disabled = true;
  try {
    const { progress } = await api(refreshPath(refreshId, action), { method: 'POST', ...(options.body ? { body: JSON.stringify(options.body) } : {}) });
    if (options.after) options.after();
    showMessage(`${action === 'resize' ? (options.body.unpin ? 'Unpinned' : `Pinned at ${options.body.size}`) : `${action[0].toUpperCase()}${action.slice(1)}`}: ${refreshId} is ${progress.status}, window ${windowText(progress.window)}.`, 'ok');
  } catch (error) {
    showMessage(`${action} ${refreshId}: ${error.message}`, 'error');
  } finally {
    button.disabled = false;
  }
  await refresh().catch(() => undefined);
}

async function tick() {
  const live = document.getElementById('live');
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
    live.textContent = error instanceof ApiError && error.status === 401 ? 'Not signed in: open this page with ?token=<console token>' : `Cannot reach the console: ${error.message}`;
  } finally {
    setTimeout(() => void tick(), POLL_MS);
  }
}

void tick();
