/**
 * A login's retention timer: forgets the login `days` after its last successful retrieval. Each
 * retrieval signals it (signal-with-start, retention-activities.ts) and pushes the timer back; a
 * notice that the tenant's policy is off ends it. When it is due it reads the tenant's policy again
 * (off: it ends; longer: it waits on), then starts the forget workflow and
 * returns: the forget runs on its own and its result is the record. Durable: a restart of the worker
 * or the server resumes the same timer. Deterministic code only.
 */
import {
  allHandlersFinished,
  condition,
  continueAsNew,
  log,
  ParentClosePolicy,
  proxyLocalActivities,
  setCurrentDetails,
  setHandler,
  setWorkflowOptions,
  startChild,
  workflowInfo,
} from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import type { RetentionActivities } from '../../activities/retention-activities.js';
import { forgetWorkflowId } from '../../contract/login-keys.js';
import { forgetLoginWorkflow } from './forget.js';
import {
  RETENTION_DAYS_LIMITS,
  retentionStateQuery,
  retrievalNoticeSignal,
  type RetentionInput,
  type RetentionOutcome,
  type RetentionState,
  type RetrievalNotice,
} from '../../contract/retention/retention-definitions.js';
import { CustomerIdKey, LoginIdKey } from '../../contract/search-attributes.js';
import { UNTIL_IT_LANDS_RETRY } from '../../retry/activity-retry.js';

const DAY_MS = 24 * 60 * 60_000;
/** Past this many events the timer continues as new (a daily refresh signals it every day for years). */
const MAX_HISTORY_EVENTS = 2_000;

/** The tenant's policy as the worker's configuration says now. */
const { retentionDaysFor } = proxyLocalActivities<RetentionActivities>({
  startToCloseTimeout: '10s',
  retry: UNTIL_IT_LANDS_RETRY,
  summary: "read the tenant's retention policy",
});

function isValidDays(days: unknown): days is number {
  return Number.isInteger(days) && (days as number) >= RETENTION_DAYS_LIMITS.min && (days as number) <= RETENTION_DAYS_LIMITS.max;
}

export async function loginRetentionWorkflow(input: RetentionInput): Promise<RetentionOutcome> {
  const { customerId, loginId } = input;
  let days = isValidDays(input.days) ? input.days : undefined;
  let lastRetrievalAt = input.lastRetrievalAt;
  let policyOff = false;
  let notices = 0;
  let status: RetentionState['status'] = 'waiting';

  const forgetAt = () => (lastRetrievalAt !== undefined && days !== undefined ? Date.parse(lastRetrievalAt) + days * DAY_MS : undefined);

  setHandler(retrievalNoticeSignal, (notice: RetrievalNotice) => {
    const at = Date.parse(notice?.at);
    if (Number.isNaN(at) || (notice.days !== null && !isValidDays(notice.days))) {
      log.warn('retention notice ignored: malformed', { loginId });
      return;
    }
    notices += 1;
    policyOff = notice.days === null;
    if (notice.days !== null) days = notice.days;
    // Notices may arrive out of order (two connections of one login): the latest retrieval counts.
    if (lastRetrievalAt === undefined || at > Date.parse(lastRetrievalAt)) lastRetrievalAt = new Date(at).toISOString();
  });
  setHandler(retentionStateQuery, (): RetentionState => {
    const at = forgetAt();
    return { customerId, loginId, status, days, lastRetrievalAt, forgetAt: at === undefined ? undefined : new Date(at).toISOString(), notices };
  });

  for (;;) {
    await condition(() => policyOff || forgetAt() !== undefined);
    if (policyOff) {
      log.info('retention policy off: timer ended', { loginId });
      return { outcome: 'policy-off', customerId, loginId, lastRetrievalAt };
    }
    let due = forgetAt() as number;
    if (due <= Date.now()) {
      // Due: the policy may have changed since the last retrieval (turned off, or made longer).
      const current = await retentionDaysFor({ customerId });
      if (current === null) policyOff = true;
      else if (isValidDays(current)) days = current;
      if (policyOff) continue;
      due = forgetAt() as number;
      if (due <= Date.now()) break;
    }
    const remaining = due - Date.now();
    setCurrentDetails(
      `Forgets login ${loginId} of ${customerId} at ${new Date(due).toISOString()} (${days} days after its last retrieval, ${lastRetrievalAt})`,
    );
    const seen = notices;
    // Wakes at the due time, or earlier on a notice (which may push the due time back).
    await condition(() => notices !== seen, remaining);
    if (workflowInfo().historyLength > MAX_HISTORY_EVENTS || workflowInfo().continueAsNewSuggested) {
      await condition(allHandlersFinished);
      await continueAsNew<typeof loginRetentionWorkflow>({ customerId, loginId, days, lastRetrievalAt });
    }
  }

  status = 'forgetting';
  const lastRetrieval = lastRetrievalAt as string;
  const retainedDays = days as number;
  const forgetId = forgetWorkflowId(customerId, loginId);
  setCurrentDetails(`Forgetting login ${loginId} of ${customerId}: ${retainedDays} days since its last retrieval (${lastRetrieval})`);
  let alreadyForgetting = false;
  try {
    await startChild(forgetLoginWorkflow, {
      workflowId: forgetId,
      args: [{ customerId, loginId, trigger: 'retention' }],
      // The forget outlives this timer: it is the record, and it must finish even if the timer is gone.
      parentClosePolicy: ParentClosePolicy.ABANDON,
      workflowIdReusePolicy: 'ALLOW_DUPLICATE',
      typedSearchAttributes: [
        { key: CustomerIdKey, value: customerId },
        { key: LoginIdKey, value: loginId },
      ],
    });
  } catch (error) {
    if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
    alreadyForgetting = true;
  }
  const forgetStartedAt = new Date().toISOString();
  log.info('retention timer fired: login handed to forget', { loginId, days: retainedDays, alreadyForgetting });
  return {
    outcome: 'forget-started',
    customerId,
    loginId,
    days: retainedDays,
    lastRetrievalAt: lastRetrieval,
    forgetAt: new Date(forgetAt() as number).toISOString(),
    forgetWorkflowId: forgetId,
    forgetStartedAt,
    alreadyForgetting,
  };
}

/**
 * AutoUpgrade: a retention timer waits up to a year, across many deploys; its next task (a notice,
 * the due time, continue-as-new) runs on the current build. Changes to it need patched().
 */
setWorkflowOptions({ versioningBehavior: 'AUTO_UPGRADE' }, loginRetentionWorkflow);
