/**
 * Forgetting a login: delete its refresh schedule and take it out of its book (so no run brings the data back), end its retention
 * timer (when the pipeline asked), delete its saved data at the service (DeleteCard, waiting out
 * CARD_IN_USE on durable timers), then delete its connections' stored payloads and histories. The
 * result is the record of what was deleted and when, found by `LoginId = "..."`. Every step reports
 * what it found, so forgetting twice succeeds (the second record says "none" / "not-found").
 * Deterministic code only.
 */
import {
  ApplicationFailure,
  log,
  patched,
  setCurrentDetails,
  setHandler,
  setWorkflowOptions,
  sleep,
  upsertSearchAttributes,
  type ActivityOptions,
} from '@temporalio/workflow';
import type { DeleteCardOutcome, ForgetActivities } from '../../activities/forget-activities.js';
import {
  DEFAULT_FORGET_TIMING,
  forgetStateQuery,
  type ForgetInput,
  type ForgetRecord,
  type ForgetState,
  type ForgetStep,
} from '../../contract/retention/forget-definitions.js';
import { ID_SEGMENT_PATTERN, ID_SEGMENT_RULE, UUID_PATTERN } from '../../contract/ids.js';
import { CustomerIdKey, LoginIdKey } from '../../contract/search-attributes.js';
import { PATCHES } from '../patches.js';
import { isoNow } from '../connection/state-recorder.js';
import { serviceActivities } from '../connection/service-queue.js';
import { UNTIL_IT_LANDS_RETRY } from '../../retry/activity-retry.js';

/** Every step is idempotent, so Temporal retries its transient failures (5xx, Temporal briefly away). */
const STEP_OPTIONS: ActivityOptions = {
  startToCloseTimeout: '1m',
  retry: UNTIL_IT_LANDS_RETRY,
};

function step(summary: string, options: ActivityOptions = STEP_OPTIONS): ForgetActivities {
  return serviceActivities<ForgetActivities>({ ...options, summary });
}

const MAX_TIMING_MS = 7 * 24 * 60 * 60_000;

/** Refuses an input the client would have refused (a start by hand, `temporal workflow start`). */
function checkInput(input: ForgetInput | undefined): void {
  const problems: string[] = [];
  if (typeof input?.customerId !== 'string' || !ID_SEGMENT_PATTERN.test(input.customerId)) problems.push(`customerId: ${ID_SEGMENT_RULE}`);
  if (typeof input?.loginId !== 'string' || !UUID_PATTERN.test(input.loginId)) problems.push('loginId: must be a UUID');
  if (input?.trigger !== 'request' && input?.trigger !== 'retention') problems.push('trigger: must be request or retention');
  for (const name of ['cardInUseRetryMs', 'cardInUseTimeoutMs'] as const) {
    const value = input?.timing?.[name];
    if (value !== undefined && !(Number.isInteger(value) && value >= 1 && value <= MAX_TIMING_MS))
      problems.push(`timing.${name}: must be a whole number of ms from 1 to ${MAX_TIMING_MS}`);
  }
  if (problems.length > 0)
    throw ApplicationFailure.create({ type: 'InvalidForgetInput', message: `invalid forget input: ${problems.join('; ')}`, nonRetryable: true });
}

export async function forgetLoginWorkflow(input: ForgetInput): Promise<ForgetRecord> {
  checkInput(input);
  const { customerId, loginId, trigger } = input;
  const cardInUseRetryMs = input.timing?.cardInUseRetryMs ?? DEFAULT_FORGET_TIMING.cardInUseRetryMs;
  const cardInUseTimeoutMs = input.timing?.cardInUseTimeoutMs ?? DEFAULT_FORGET_TIMING.cardInUseTimeoutMs;
  const login = { customerId, loginId };
  let state: ForgetState = { customerId, loginId, step: 'schedule', cardInUseWaits: 0, startedAt: isoNow() };
  setHandler(forgetStateQuery, () => state);
  const advance = (changes: { step?: ForgetStep; cardInUseWaits?: number }) => {
    state = { ...state, ...changes };
    setCurrentDetails(`Forgetting login ${loginId} of ${customerId}: ${state.step}${state.cardInUseWaits ? ` (CARD_IN_USE ${state.cardInUseWaits}x)` : ''}`);
  };
  // The record is found by LoginId whoever started it.
  upsertSearchAttributes([
    { key: CustomerIdKey, value: customerId },
    { key: LoginIdKey, value: loginId },
  ]);

  advance({ step: 'schedule' });
  const schedule = await step('delete the refresh schedule').deleteRefreshSchedule(login);

  // Forgets recorded before books existed replay without this step.
  let book: ForgetRecord['book'];
  if (patched(PATCHES.leaveBook.id)) {
    advance({ step: 'book' });
    book = await step('take the login out of its book').leaveBook(login);
  }

  let retentionTimer: ForgetRecord['retentionTimer'] = 'fired';
  if (trigger === 'request') {
    advance({ step: 'retention' });
    retentionTimer = await step('end the retention timer').endRetentionTimer(login);
  }

  advance({ step: 'card' });
  const deadline = Date.now() + cardInUseTimeoutMs;
  let card: DeleteCardOutcome;
  for (;;) {
    card = await step(`DeleteCard${state.cardInUseWaits ? ` #${state.cardInUseWaits + 1}` : ''}`).deleteCard(login);
    if (card.kind !== 'card-in-use') break;
    if (Date.now() + cardInUseRetryMs > deadline) {
      throw ApplicationFailure.create({
        type: 'CardInUse',
        message: `DeleteCard still answered CARD_IN_USE after ${state.cardInUseWaits} waits over ${Math.round(cardInUseTimeoutMs / 60_000)} min; the refresh schedule is ${schedule === 'deleted' ? 'deleted' : 'absent'}; forget the login again later`,
        nonRetryable: true,
      });
    }
    advance({ cardInUseWaits: state.cardInUseWaits + 1 });
    await sleep(cardInUseRetryMs, { summary: `CARD_IN_USE: wait before DeleteCard #${state.cardInUseWaits + 1}` });
  }

  advance({ step: 'workflows' });
  const connections = await step("delete the login's connections: stored payloads and histories", {
    ...STEP_OPTIONS,
    startToCloseTimeout: '30m',
    heartbeatTimeout: '1m',
  }).deleteLoginConnections(login);

  advance({ step: 'done' });
  const record: ForgetRecord = {
    customerId,
    loginId,
    trigger,
    schedule,
    ...(book === undefined ? {} : { book }),
    retentionTimer,
    card: card.kind,
    cardInUseWaits: state.cardInUseWaits,
    connections: { count: connections.count, workflowIds: connections.workflowIds },
    payloads: connections.payloads,
    startedAt: state.startedAt,
    completedAt: isoNow(),
  };
  log.info('login forgotten', { loginId, trigger, schedule, card: card.kind, connections: connections.count });
  return record;
}

/**
 * AutoUpgrade: a forget may wait out CARD_IN_USE for long; its next task runs on the current build.
 * Its steps stay replay-safe across builds (a change to them needs patched()).
 */
setWorkflowOptions({ versioningBehavior: 'AUTO_UPGRADE' }, forgetLoginWorkflow);
