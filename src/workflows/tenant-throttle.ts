/**
 * A tenant the service rate-limited: its whole fleet pauses until the time the service asked for,
 * then resumes. Started (or extended) by a signal-with-start from the activity that was refused; the
 * pause itself is Temporal's (a weight override on the activity queue, src/budget/fleet-budget.ts),
 * applied and removed by local activities (they call Temporal, not the service, so the pause cannot
 * hold them back). Durable: a worker or server restart keeps the timer and removes the override when
 * it is due. Deterministic code only.
 */
import { allHandlersFinished, condition, log, proxyLocalActivities, setCurrentDetails, setHandler, setWorkflowOptions, sleep } from '@temporalio/workflow';
import type { ThrottleActivities } from '../activities/throttle-activities.js';
import { throttleNoticeSignal, throttleStateQuery, type ThrottleState } from './tenant-throttle-definitions.js';

const { setTenantPaused } = proxyLocalActivities<ThrottleActivities>({
  startToCloseTimeout: '30s',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s' },
  summary: "pause or resume the tenant's activities",
});

export async function tenantThrottleWorkflow({ customerId }: { readonly customerId: string }): Promise<ThrottleState> {
  let until = 0;
  let reason: string | undefined;
  let notices = 0;
  let since: string | undefined;
  let paused = false;
  const state = (): ThrottleState => ({
    customerId,
    status: paused ? 'throttled' : notices === 0 ? 'waiting' : 'released',
    until: until ? new Date(until).toISOString() : undefined,
    reason,
    notices,
    since,
  });
  setHandler(throttleNoticeSignal, (notice) => {
    const at = Date.parse(notice?.until);
    if (Number.isNaN(at)) {
      log.warn('throttle notice ignored: malformed', { customerId });
      return;
    }
    notices += 1;
    // The longest wait asked for wins; a shorter one arriving later changes nothing.
    if (at > until) {
      until = at;
      reason = String(notice.reason ?? '').slice(0, 300);
    }
  });
  setHandler(throttleStateQuery, state);

  await condition(() => notices > 0);
  // Loop until no wait is pending: a notice may arrive while the override is being removed.
  for (;;) {
    if (until > Date.now()) {
      if (!paused) {
        await setTenantPaused({ customerId, paused: true });
        paused = true;
        since = new Date().toISOString();
        log.info('tenant paused: the service asked it to wait', { customerId, until: new Date(until).toISOString(), reason });
      }
      setCurrentDetails(`Tenant ${customerId} paused until ${new Date(until).toISOString()}: ${reason ?? ''}`);
      await sleep(until - Date.now(), { summary: `tenant ${customerId} paused` });
      continue;
    }
    if (paused) {
      await setTenantPaused({ customerId, paused: false });
      paused = false;
      log.info('tenant resumed', { customerId });
      setCurrentDetails(`Tenant ${customerId} resumed at ${new Date().toISOString()} after ${notices} notice(s)`);
      continue;
    }
    break;
  }
  await condition(allHandlersFinished);
  return state();
}

/** AutoUpgrade: a pause is short, and its next step should run on the current build. */
setWorkflowOptions({ versioningBehavior: 'AUTO_UPGRADE' }, tenantThrottleWorkflow);
