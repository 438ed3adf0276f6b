/**
 * A tenant the service rate-limited: until the time the service asked for, every worker of the fleet
 * holds the tenant's calls back (they are rescheduled on Temporal's retry timer, never sent:
 * src/activities/tenant-pauses.ts reads this workflow's memo), then they go on. Started (or
 * extended) by a signal-with-start from the activity that was refused. Durable: the pause survives
 * worker and server restarts and ends by itself. Deterministic code only.
 */
import { allHandlersFinished, condition, log, setCurrentDetails, setHandler, setWorkflowOptions, sleep, upsertMemo } from '@temporalio/workflow';
import { throttleNoticeSignal, throttleStateQuery, type ThrottleMemo, type ThrottleState } from '../../contract/throttle/tenant-throttle-definitions.js';

export async function tenantThrottleWorkflow({ customerId }: { readonly customerId: string }): Promise<ThrottleState> {
  let until = 0;
  let reason: string | undefined;
  let notices = 0;
  let since: string | undefined;
  const state = (): ThrottleState => ({
    customerId,
    status: notices === 0 ? 'waiting' : until > Date.now() ? 'throttled' : 'released',
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
    since ??= new Date().toISOString();
    // The longest wait asked for wins; a shorter one arriving later changes nothing.
    if (at > until) {
      until = at;
      reason = String(notice.reason ?? '').slice(0, 300);
    }
  });
  setHandler(throttleStateQuery, state);

  await condition(() => notices > 0);
  let published = 0;
  // Until no later wait is pending: a notice may extend the pause while it runs.
  while (until > Date.now()) {
    if (until !== published) {
      const memo: ThrottleMemo = { pausedUntil: new Date(until).toISOString(), reason: reason ?? '' };
      upsertMemo({ ...memo });
      published = until;
      log.info('tenant paused: the service asked it to wait', { customerId, until: memo.pausedUntil, reason });
      setCurrentDetails(`Tenant ${customerId} paused until ${memo.pausedUntil}: ${memo.reason}`);
    }
    await sleep(until - Date.now(), { summary: `tenant ${customerId} paused` });
  }
  setCurrentDetails(`Tenant ${customerId} resumed at ${new Date().toISOString()} after ${notices} TOO_MANY_REQUESTS`);
  await condition(allHandlersFinished);
  return state();
}

/** AutoUpgrade: a pause is short, and its next step should run on the current build. */
setWorkflowOptions({ versioningBehavior: 'AUTO_UPGRADE' }, tenantThrottleWorkflow);
