// Operator console: lists connections awaiting an answer, renders each challenge for its type, sends
// answers through the console API (which uses the workflow's validated update) and follows the
// selected connection every second (the lists, which cost visibility queries, every 5 s; nothing
// while the tab is hidden). Plain DOM: every service-provided string goes through textContent or a
// property, never innerHTML.
// @ts-check: checked by tsconfig.page.json (allowJs + checkJs) with what it imports.
import { formatElapsed } from '/shared/durations.js';
import { imageBase64, isPlainBase64 } from '/shared/images.js';
import { el, byId, required } from './dom.js';
import { ApiError, api, messageOf, showSignedIn } from './api.js';

/** @typedef {import('./dom.js').ElChild} ElChild */

// The answers of the console's API (src/console/api.ts and schedule-routes.ts), as JSON.
/** @typedef {import('../../contract/connection/connection-definitions.js').ConnectionState} ConnectionState */
/** @typedef {import('../../contract/connection/connection-definitions.js').ChallengeSet} ChallengeSet */
/** @typedef {ChallengeSet['challenges'][number]} SecurityChallenge */
/** @typedef {import('../../contract/connection/connection-definitions.js').AnswerOutcome} AnswerOutcome */
/** @typedef {import('../../client/connection-summary.js').ConnectionSummary} ConnectionSummary */
/** @typedef {import('../../contract/retention/forget-definitions.js').ForgetRecord} ForgetRecord */
/** GET /api/connections */
/** @typedef {{ connections: ConnectionSummary[] }} ConnectionList */
/** GET /api/connections/:workflowId */
/** @typedef {import('../../contract/callbacks/callback-definitions.js').CallbackDeliveryState} CallbackDeliveryState */
/** @typedef {{ workflowId: string, state: ConnectionState, now: string, callback?: CallbackDeliveryState }} ConnectionDetail */

/**
 * One of GET /api/schedules's schedules: RefreshScheduleSummary (src/client/schedules.ts) with its
 * latest run compacted (compactLatest in schedule-routes.ts).
 * @typedef {object} ScheduleRow
 * @property {string} loginId
 * @property {'cached' | 'refresh'} session
 * @property {{ kind: 'daily', at: string, timeZone?: string, jitter?: string | number } | { kind: 'interval', every: string | number, jitter?: string | number }} cadence
 * @property {boolean} paused
 * @property {string[]} nextRunsAt
 * @property {LatestRun | null} latest
 */
/**
 * @typedef {object} LatestRun
 * @property {string} workflowId
 * @property {'schedule' | 'pipeline'} trigger
 * @property {string} startedAt
 * @property {'running' | 'completed' | 'failed'} outcome
 * @property {string} [failureType]
 * @property {string} [serviceCode]
 * @property {string} [reason]
 */
/** A schedule action's answer: `{ loginId, action }`, a forget's `{ record }` (200) or `{ workflowId, state: 'running' }` (202). */
/** @typedef {{ record?: ForgetRecord, state?: string, workflowId?: string } | null} ScheduleActionAnswer */

/**
 * A challenge's part of the answer form: collect() gives [key, values] or throws an Error naming
 * what is missing; ownsSubmit when the part sends the form itself (WaitUntilEUAccept's button).
 * @typedef {{ node: HTMLElement, collect: () => [string, string[]], ownsSubmit?: boolean }} FormPart
 */

const POLL_MS = 1000;
/** The lists are refreshed on every LIST_EVERY-th poll. */
const LIST_EVERY = 5;
let polls = 0;

/** @type {{ selected: string | null, formSetId: string | null, formFor: string | null, sending: boolean, lastStatus: string | undefined }} */
const view = {
  selected: readHash(),
  /** The challenge set currently shown as a form (kept while it stays current, so typed input survives polls). */
  formSetId: null,
  formFor: null,
  sending: false,
  /** Status seen at the previous poll of the selected connection. */
  lastStatus: undefined,
};

// ----------------------------------------------------------------------------------------------
// DOM helpers

/** @returns {string | null} */
function readHash() {
  const match = /^#connection=(.+)$/.exec(location.hash);
  if (!match || match[1] === undefined) return null;
  try {
    return decodeURIComponent(match[1]);
  } catch {
    return null;
  }
}

// ----------------------------------------------------------------------------------------------
// API

/**
 * @param {string} workflowId
 * @param {string} [action]
 */
function connectionPath(workflowId, action) {
  return `/api/connections/${encodeURIComponent(workflowId)}${action ? `/${action}` : ''}`;
}

// ----------------------------------------------------------------------------------------------
// Lists

/**
 * @param {HTMLElement} listNode
 * @param {ConnectionSummary[]} connections
 */
function renderList(listNode, connections) {
  const items = connections.map((connection) => {
    const meta = [connection.status || connection.executionStatus, connection.institution || connection.loginId || '', connection.customerId || '']
      .filter(Boolean)
      .join(' · ');
    const button = el(
      'button',
      { type: 'button', 'aria-current': String(connection.workflowId === view.selected), dataset: { workflowId: connection.workflowId } },
      el('span', { className: 'id', textContent: connection.workflowId }),
      el('span', { className: 'meta', textContent: meta }),
    );
    button.addEventListener('click', () => select(connection.workflowId));
    return el('li', {}, button);
  });
  listNode.replaceChildren(...items);
}

async function refreshLists() {
  const [awaiting, recent] = /** @type {[ConnectionList, ConnectionList]} */ (
    await Promise.all([api('/api/connections?status=AwaitingAnswer'), api('/api/connections?status=any&limit=15')])
  );
  renderList(byId('awaiting'), awaiting.connections);
  byId('awaiting-empty').hidden = awaiting.connections.length > 0;
  renderList(byId('recent'), recent.connections);
  await refreshSchedules();
}

// ----------------------------------------------------------------------------------------------
// Refresh schedules (the console's default tenant): pause/resume, trigger, and forget the login.

/** @param {ScheduleRow} schedule */
function cadenceText(schedule) {
  const cadence = schedule.cadence;
  const jitter = cadence.jitter && cadence.jitter !== '0s' ? ` (jitter ${cadence.jitter})` : '';
  const when = cadence.kind === 'daily' ? `daily ${cadence.at} ${cadence.timeZone || 'UTC'}` : `every ${cadence.every}`;
  return `${schedule.session} ${when}${jitter}`;
}

/** @param {LatestRun | null} latest */
function outcomeText(latest) {
  if (!latest) return '—';
  const failure = latest.outcome === 'failed' ? `: ${latest.failureType}${latest.serviceCode ? ` [${latest.serviceCode}]` : ''}` : '';
  return `${latest.outcome}${failure} (${new Date(latest.startedAt).toLocaleString()})`;
}

async function refreshSchedules() {
  const { schedules } = /** @type {{ schedules: ScheduleRow[] }} */ (await api('/api/schedules'));
  const rows = schedules.map((schedule) => {
    /**
     * @param {string} label
     * @param {string} path
     * @param {string} [confirmText]
     */
    const act = (label, path, confirmText) => {
      const button = el('button', { type: 'button', className: confirmText ? 'secondary danger' : 'secondary', textContent: label });
      button.addEventListener('click', () => void scheduleAction(button, path, confirmText, `${label}: login ${schedule.loginId}`));
      return button;
    };
    const loginPath = encodeURIComponent(schedule.loginId);
    return el(
      'tr',
      { dataset: { loginId: schedule.loginId } },
      el('td', { className: 'id', textContent: schedule.loginId }),
      el('td', { textContent: cadenceText(schedule) }),
      el('td', { textContent: schedule.paused ? 'yes' : 'no' }),
      el('td', { textContent: schedule.paused || !schedule.nextRunsAt[0] ? '—' : new Date(schedule.nextRunsAt[0]).toLocaleString() }),
      el('td', { textContent: outcomeText(schedule.latest) }),
      el(
        'td',
        { className: 'buttons' },
        schedule.paused ? act('Resume', `/api/schedules/${loginPath}/resume`) : act('Pause', `/api/schedules/${loginPath}/pause`),
        act('Trigger', `/api/schedules/${loginPath}/trigger`),
        act(
          'Forget',
          `/api/logins/${loginPath}/forget`,
          `Forget login ${schedule.loginId}? Its schedule, saved card, stored payloads and histories are deleted. This cannot be undone.`,
        ),
      ),
    );
  });
  required('#schedules tbody').replaceChildren(...rows);
  byId('schedules-empty').hidden = schedules.length > 0;
}

/**
 * @param {HTMLButtonElement} button
 * @param {string} path
 * @param {string | undefined} confirmText
 * @param {string} done
 */
async function scheduleAction(button, path, confirmText, done) {
  if (confirmText && !window.confirm(confirmText)) return;
  const message = byId('schedules-message');
  button.disabled = true;
  try {
    const body = /** @type {ScheduleActionAnswer} */ (await api(path, { method: 'POST' }));
    message.className = 'message ok';
    message.textContent =
      body && body.record
        ? `Forgot login ${body.record.loginId}: schedule ${body.record.schedule}, card ${body.record.card}, ${body.record.connections.count} histories deleted.`
        : body && body.state === 'running'
          ? `${done}: still running (${body.workflowId}).`
          : `${done}: done.`;
  } catch (error) {
    message.className = 'message error';
    message.textContent = `${done}: ${messageOf(error)}`;
  } finally {
    button.disabled = false;
  }
  await refreshSchedules();
}

/** @param {string} workflowId */
function select(workflowId) {
  if (view.selected === workflowId) return;
  view.selected = workflowId;
  view.formSetId = null;
  view.formFor = null;
  view.lastStatus = undefined;
  history.replaceState(null, '', `#connection=${encodeURIComponent(workflowId)}`);
  for (const button of document.querySelectorAll('.connections button')) {
    if (!(button instanceof HTMLElement)) continue;
    button.setAttribute('aria-current', String(button.dataset.workflowId === workflowId));
  }
  buildDetailSkeleton();
  void refreshDetail();
}

// ----------------------------------------------------------------------------------------------
// Detail

function buildDetailSkeleton() {
  byId('detail').replaceChildren(
    el('div', { id: 'summary' }, el('p', { className: 'empty', textContent: 'Loading…' })),
    el('div', { id: 'form-host' }),
    el('p', { id: 'message', className: 'message', role: 'status' }),
  );
}

/**
 * @param {string} text
 * @param {'ok' | 'error'} kind
 */
function showMessage(text, kind) {
  const message = document.getElementById('message');
  if (!message) return;
  message.className = `message ${kind}`;
  message.textContent = text;
}

async function refreshDetail() {
  const workflowId = view.selected;
  if (!workflowId) return;
  if (!document.getElementById('summary')) buildDetailSkeleton();
  /** @type {ConnectionDetail} */
  let body;
  try {
    body = /** @type {ConnectionDetail} */ (await api(connectionPath(workflowId)));
  } catch (error) {
    if (workflowId !== view.selected) return;
    byId('summary').replaceChildren(el('p', { className: 'message error', textContent: `Cannot read ${workflowId}: ${messageOf(error)}` }));
    return;
  }
  if (workflowId !== view.selected) return;
  renderSummary(workflowId, body.state, Date.parse(body.now), body.callback);
  const ended = ['Completed', 'Failed', 'Cancelled'].includes(body.state.status);
  if (ended && view.lastStatus !== undefined && view.lastStatus !== body.state.status) {
    const failure = body.state.failure ? ` (${body.state.failure.type}: ${body.state.failure.message})` : '';
    showMessage(`The connection ended: ${body.state.status}${failure}.`, body.state.status === 'Completed' ? 'ok' : 'error');
  }
  view.lastStatus = body.state.status;
  const set = body.state.challengeSet;
  if (body.state.status === 'AwaitingAnswer' && set) {
    if (view.formSetId !== set.id || view.formFor !== workflowId) renderForm(workflowId, set);
  } else if (view.formSetId !== null) {
    byId('form-host').replaceChildren();
    view.formSetId = null;
  }
}

/**
 * The callback's delivery in one line: delivered, retrying (why, and when next) or given up (why).
 * @param {CallbackDeliveryState} callback
 */
function describeCallback(callback) {
  const tries = `${callback.attempts} attempt${callback.attempts === 1 ? '' : 's'}`;
  const why = callback.lastError ? `: ${callback.lastError}` : '';
  if (callback.status === 'Delivered')
    return `delivered to ${callback.url} (${tries})${callback.resultClaim === 'none' ? '' : `, result ${callback.resultClaim}`}`;
  if (callback.status === 'Retrying')
    return `retrying ${callback.url} (${tries}${callback.nextAttemptAt ? `, next at ${new Date(callback.nextAttemptAt).toLocaleTimeString()}` : ''})${why}`;
  if (callback.status === 'GivenUp') return `given up on ${callback.url} (${tries})${why}`;
  return `delivering to ${callback.url}`;
}

/**
 * @param {string} workflowId
 * @param {ConnectionState} state
 * @param {number} now epoch ms, the server's clock
 * @param {CallbackDeliveryState} [callback] its completion callback's delivery, once it ended with one
 */
function renderSummary(workflowId, state, now, callback) {
  const ended = ['Completed', 'Failed', 'Cancelled'].includes(state.status);
  const facts = /** @type {[string, string | undefined][]} */ ([
    [ended ? 'Took' : 'Elapsed', formatElapsed((ended ? Date.parse(state.updatedAt) : now) - Date.parse(state.startedAt))],
    ['Mode', state.mode],
    ['Customer', state.customerId],
    ['Institution', state.institution],
    ['Login', state.loginId],
    ['Polls', String(state.totalPolls)],
    ['Pending', state.pending ? `${state.pending.operation} (${state.pending.code}), poll ${state.pending.pollCount}` : undefined],
    ['Retrieved', state.retrieved.length ? state.retrieved.join(', ') : undefined],
    ['Answer by', state.status === 'AwaitingAnswer' && state.challengeSet ? `${formatElapsed(Date.parse(state.challengeSet.answerBy) - now)} left` : undefined],
    ['Session restarted', state.lastRestart ? `${state.sessionRestarts}x: ${state.lastRestart.reason}` : undefined],
    [
      'Last rejection',
      state.lastRejection
        ? `${state.lastRejection.source}${state.lastRejection.serviceCode ? ` [${state.lastRejection.serviceCode}]` : ''}: ${state.lastRejection.message}`
        : undefined,
    ],
    [
      'Failure',
      state.failure ? `${state.failure.type}${state.failure.serviceCode ? ` [${state.failure.serviceCode}]` : ''}: ${state.failure.message}` : undefined,
    ],
    ['Callback', callback ? describeCallback(callback) : undefined],
  ]).filter(([, value]) => value !== undefined && value !== '');
  const list = el('dl', { className: 'facts' });
  for (const [term, value] of facts) list.append(el('dt', { textContent: term }), el('dd', { textContent: value }));
  /** @type {HTMLElement[]} */
  const actions = [];
  if (!ended) {
    const cancel = el('button', { type: 'button', className: 'secondary', textContent: 'Cancel connection' });
    cancel.addEventListener('click', () => void cancelConnection(workflowId, cancel));
    actions.push(cancel);
  }
  byId('summary').replaceChildren(
    el('h2', {}, 'Connection'),
    el('p', {}, el('code', { textContent: workflowId }), ' ', el('span', { className: `status ${state.status}`, id: 'status', textContent: state.status })),
    list,
    ...(actions.length ? [el('div', { className: 'actions' }, ...actions)] : []),
  );
}

/**
 * @param {string} workflowId
 * @param {HTMLButtonElement} button
 */
async function cancelConnection(workflowId, button) {
  if (!confirm(`Cancel ${workflowId}?`)) return;
  button.disabled = true;
  try {
    await api(connectionPath(workflowId, 'cancel'), { method: 'POST', body: '{}' });
    showMessage('Cancellation requested.', 'ok');
  } catch (error) {
    showMessage(`Could not cancel: ${messageOf(error)}`, 'error');
  } finally {
    button.disabled = false;
  }
}

// ----------------------------------------------------------------------------------------------
// Challenge forms: one builder per type the spec names, and freeText for any other type (an
// institution's own); each returns { node, collect } where collect() gives [key, values] or throws
// an Error naming what is missing.

let fieldCounter = 0;
function fieldName() {
  fieldCounter += 1;
  return `field-${fieldCounter}`;
}

/**
 * @param {SecurityChallenge} challenge
 * @param {...ElChild} children
 */
function fieldset(challenge, ...children) {
  return el(
    'fieldset',
    { className: 'challenge', dataset: { type: challenge.Type } },
    el('legend', {}, challenge.Prompt, el('span', { className: 'type', textContent: challenge.Type })),
    ...children,
  );
}

/** @type {Record<string, (challenge: SecurityChallenge, submit: () => void) => FormPart>} */
const builders = {
  QuestionAndAnswer(challenge) {
    const options = challenge.Iterables || [];
    if (options.length === 0) {
      const input = el('input', { type: 'text', name: fieldName(), autocomplete: 'off', required: true });
      const isToken = /\b(token|securid)\b/i.test(challenge.Prompt);
      if (isToken) Object.assign(input, { inputMode: 'numeric', pattern: '\\d{6}', placeholder: '6 digits' });
      return {
        node: fieldset(challenge, el('label', { className: 'field' }, el('span', { textContent: 'Answer' }), input)),
        collect() {
          if (input.value.trim() === '') throw new Error(`"${challenge.Prompt}": type the answer`);
          return [challenge.Prompt, [input.value]];
        },
      };
    }
    // Choose one of the candidate questions, then answer it: value [chosenQuestion, answer].
    const select = el(
      'select',
      { name: fieldName() },
      el('option', { value: '', textContent: 'Choose a question…' }),
      ...options.map((option) => el('option', { value: option, textContent: option })),
    );
    const input = el('input', { type: 'text', name: fieldName(), autocomplete: 'off' });
    return {
      node: fieldset(
        challenge,
        el('label', { className: 'field' }, el('span', { textContent: 'Question' }), select),
        el('label', { className: 'field' }, el('span', { textContent: 'Answer' }), input),
      ),
      collect() {
        if (select.value === '') throw new Error(`"${challenge.Prompt}": choose a question`);
        if (input.value.trim() === '') throw new Error(`"${challenge.Prompt}": answer the chosen question`);
        return [challenge.Prompt, [select.value, input.value]];
      },
    };
  },

  MultipleChoice(challenge) {
    const name = fieldName();
    const radios = (challenge.Iterables || []).map((option) => el('input', { type: 'radio', name, value: option }));
    return {
      node: fieldset(challenge, ...radios.map((radio) => el('label', { className: 'choice' }, radio, ' ', radio.value))),
      collect() {
        const chosen = radios.find((radio) => radio.checked);
        if (!chosen) throw new Error(`"${challenge.Prompt}": choose one option`);
        return [challenge.Prompt, [chosen.value]];
      },
    };
  },

  MultipleChoiceMultipleAnswers(challenge) {
    const name = fieldName();
    const boxes = (challenge.Iterables || []).map((option) => el('input', { type: 'checkbox', name, value: option }));
    return {
      node: fieldset(
        challenge,
        el('p', { className: 'type', textContent: 'Select all that apply.' }),
        ...boxes.map((box) => el('label', { className: 'choice' }, box, ' ', box.value)),
      ),
      collect() {
        const chosen = boxes.filter((box) => box.checked).map((box) => box.value);
        if (chosen.length === 0) throw new Error(`"${challenge.Prompt}": choose one or more options`);
        return [challenge.Prompt, chosen];
      },
    };
  },

  TextOrCall(challenge) {
    const phoneName = fieldName();
    const methodName = fieldName();
    const phones = (challenge.Iterables || []).map((option) => el('input', { type: 'radio', name: phoneName, value: option }));
    const methods = ['Text', 'Call'].map((method) => el('input', { type: 'radio', name: methodName, value: method, checked: method === 'Text' }));
    return {
      node: fieldset(
        challenge,
        el('p', { className: 'type', textContent: 'Phone' }),
        ...phones.map((radio) => el('label', { className: 'choice' }, radio, ' ', radio.value)),
        el('p', { className: 'type', textContent: 'Send the code by' }),
        ...methods.map((radio) => el('label', { className: 'choice' }, radio, ' ', radio.value === 'Text' ? 'Text message' : 'Voice call')),
      ),
      collect() {
        const phone = phones.find((radio) => radio.checked);
        if (!phone) throw new Error(`"${challenge.Prompt}": choose a phone`);
        const method = methods.find((radio) => radio.checked);
        return [phone.value, [method ? method.value : 'Text']];
      },
    };
  },

  WaitUntilEUAccept(challenge, submit) {
    let verified = false;
    const button = el('button', {
      type: 'button',
      className: 'primary',
      textContent: 'VERIFIED',
      title: 'The customer accepted the sign-in on their trusted device',
    });
    button.addEventListener('click', () => {
      verified = true;
      submit();
    });
    return {
      node: fieldset(
        challenge,
        el('p', {
          className: 'note',
          textContent: 'Ask the customer to approve this sign-in on their trusted device (their bank app). Press VERIFIED only once they did.',
        }),
        button,
      ),
      collect() {
        if (!verified) throw new Error(`"${challenge.Prompt}": press VERIFIED once the customer accepted on the trusted device`);
        return [challenge.Prompt, ['VERIFIED']];
      },
      ownsSubmit: true,
    };
  },

  ImageSelection(challenge) {
    /** @type {string | null} */
    let chosen = null;
    /** @type {HTMLButtonElement[]} */
    const buttons = (challenge.Iterables || []).map((image, index) => {
      const img = el('img', { alt: `Image ${index + 1}`, width: 44, height: 44 });
      // The CLI accepts a data: prefix too; read it as the CLI does.
      const base64 = imageBase64(image);
      if (isPlainBase64(base64)) img.src = `data:image/png;base64,${base64}`;
      const button = el('button', { type: 'button', 'aria-pressed': 'false', title: `Image ${index + 1}`, dataset: { index: String(index) } }, img);
      button.addEventListener('click', () => {
        chosen = image;
        for (const other of buttons) other.setAttribute('aria-pressed', String(other === button));
      });
      return button;
    });
    return {
      node: fieldset(
        challenge,
        el('p', { className: 'type', textContent: "Click the customer's image." }),
        el('div', { className: 'images', role: 'group', 'aria-label': 'Images' }, ...buttons),
      ),
      collect() {
        if (chosen === null) throw new Error(`"${challenge.Prompt}": click the customer's image`);
        return [challenge.Prompt, [chosen]];
      },
    };
  },
};

/** The longest choice of an unknown type shown in full; a longer one (an image, say) is cut, its whole text in its title. */
const CHOICE_SHOWN_CHARS = 300;

/**
 * A challenge of a type the spec does not name: its type, its prompt, its Iterables (if any) as a
 * plain list, for reference only (what they mean is the institution's), and a text field. Answered
 * by its prompt with one value, the text typed, as the CLI and the workflow's validator take it.
 * @param {SecurityChallenge} challenge
 * @returns {FormPart}
 */
function freeText(challenge) {
  const input = el('input', { type: 'text', name: fieldName(), autocomplete: 'off', required: true });
  const options = challenge.Iterables || [];
  return {
    node: fieldset(
      challenge,
      el('p', {
        className: 'note',
        textContent: `${challenge.Type} is a challenge type the service's spec does not name: type the customer's answer as they give it; it is sent as text, keyed by this prompt.`,
      }),
      ...(options.length > 0
        ? [
            el('p', { className: 'type', textContent: 'Choices the institution sent (for reference):' }),
            el(
              'ul',
              { className: 'choices' },
              ...options.map((option) =>
                el('li', {
                  textContent: option.length > CHOICE_SHOWN_CHARS ? `${option.slice(0, CHOICE_SHOWN_CHARS)}… (${option.length} characters)` : option,
                  title: option.length > CHOICE_SHOWN_CHARS ? option : undefined,
                }),
              ),
            ),
          ]
        : []),
      el('label', { className: 'field' }, el('span', { textContent: 'Answer' }), input),
    ),
    collect() {
      if (input.value.trim() === '') throw new Error(`"${challenge.Prompt}": type the answer`);
      return [challenge.Prompt, [input.value]];
    },
  };
}

/**
 * The form part of one challenge: its type's builder, or freeText for a type the spec does not name
 * (an own property only: a type named like an Object method is still unknown).
 * @param {SecurityChallenge} challenge
 * @param {() => void} submit
 * @returns {FormPart}
 */
function formPart(challenge, submit) {
  const builder = Object.hasOwn(builders, challenge.Type) ? builders[challenge.Type] : undefined;
  return builder ? builder(challenge, submit) : freeText(challenge);
}

/**
 * @param {string} workflowId
 * @param {ChallengeSet} set
 */
function renderForm(workflowId, set) {
  view.formSetId = set.id;
  view.formFor = workflowId;
  const form = el('form', { id: 'answer-form', noValidate: true });
  const submit = () => form.requestSubmit();
  const parts = set.challenges.map((challenge) => formPart(challenge, submit));
  const onlyOwnSubmit = parts.length > 0 && parts.every((part) => part.ownsSubmit);
  const send = el('button', { type: 'submit', className: 'primary', textContent: 'Send answer', hidden: onlyOwnSubmit });
  const attempt = set.attempt > 1 ? ` (attempt ${set.attempt})` : '';
  form.append(
    el('h3', { textContent: `Challenge set ${set.id}${attempt}` }),
    ...(set.challenges.length > 1
      ? [el('p', { className: 'type', textContent: `Answer all ${set.challenges.length} challenges together; they are sent in one answer.` })]
      : []),
    ...parts.map((part) => part.node),
    el('div', { className: 'actions' }, send),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void sendAnswer(workflowId, set, parts, form);
  });
  byId('form-host').replaceChildren(form);
}

/**
 * @param {string} workflowId
 * @param {ChallengeSet} set
 * @param {FormPart[]} parts
 * @param {HTMLFormElement} form
 */
async function sendAnswer(workflowId, set, parts, form) {
  if (view.sending) return;
  let responses;
  try {
    responses = Object.fromEntries(parts.map((part) => part.collect()));
  } catch (error) {
    showMessage(messageOf(error), 'error');
    return;
  }
  view.sending = true;
  for (const button of form.querySelectorAll('button')) button.disabled = true;
  showMessage('Sending…', 'ok');
  try {
    const { outcome } = /** @type {{ outcome: AnswerOutcome }} */ (
      await api(connectionPath(workflowId, 'answer'), { method: 'POST', body: JSON.stringify({ challengeSetId: set.id, responses }) })
    );
    if (outcome.outcome === 'accepted')
      showMessage(`Answer accepted; the connection is ${outcome.status}${outcome.nextChallengeSet ? ' and asks more' : ''}.`, 'ok');
    else if (outcome.outcome === 'rejected')
      showMessage(`The service rejected the answer${outcome.serviceCode ? ` [${outcome.serviceCode}]` : ''}: ${outcome.message}`, 'error');
    else if (outcome.outcome === 'restarted')
      showMessage(
        `Whether the service took the answer is unknown (${outcome.reason}); it was not sent again. A new session was opened${outcome.nextChallengeSet ? ': ask the end user again' : ''}.`,
        'error',
      );
    else
      showMessage(
        `The connection ended: ${outcome.status}${outcome.failure ? ` (${outcome.failure.type}: ${outcome.failure.message})` : ''}`,
        outcome.status === 'Completed' ? 'ok' : 'error',
      );
  } catch (error) {
    const refused = error instanceof ApiError && error.status === 422;
    showMessage(refused ? `Answer refused: ${messageOf(error)}` : `Could not send the answer: ${messageOf(error)}`, 'error');
  } finally {
    view.sending = false;
    for (const button of form.querySelectorAll('button')) button.disabled = false;
  }
  await refreshDetail();
}

// ----------------------------------------------------------------------------------------------
// Polling

async function tick() {
  const live = byId('live');
  if (document.hidden) {
    setTimeout(() => void tick(), POLL_MS);
    return;
  }
  try {
    await Promise.all([polls++ % LIST_EVERY === 0 ? refreshLists() : undefined, refreshDetail()]);
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

window.addEventListener('hashchange', () => {
  const id = readHash();
  if (id) select(id);
});

if (view.selected) buildDetailSkeleton();
void showSignedIn();
void tick();
