/**
 * Records this process's live activity tasks' waits to start into its reading
 * (src/metrics/live-task-waits.ts says what it holds), through an activity interceptor.
 */
import type { ActivityInterceptorsFactory, WorkerInterceptors } from '@temporalio/worker';
import type { LiveTaskWaits } from '../metrics/live-task-waits.js';

/** 0 is an unset key (the server's default, not live). */
function isLiveKey(key: number | undefined, liveKey: number): boolean {
  return key !== undefined && key >= 1 && key <= liveKey;
}

/**
 * Records the start wait of every activity at a live priority key (at most `liveKey`); local
 * activities are left out (the workflow's own worker runs them at once, so they wait for nothing
 * the live path does).
 */
export function liveTaskWaitInterceptor(waits: LiveTaskWaits, liveKey: number): ActivityInterceptorsFactory {
  return (ctx) => ({
    inbound: {
      execute(input, next) {
        const { info } = ctx;
        if (!info.isLocal && isLiveKey(info.priority?.priorityKey, liveKey)) waits.record(Date.now() - info.currentAttemptScheduledTimestampMs);
        return next(input);
      },
    },
  });
}

/** Worker options with the live starts' recorder added after the activity interceptors given. */
export function withLiveTaskWaits<T extends { readonly interceptors?: WorkerInterceptors }>(
  options: T,
  waits: LiveTaskWaits,
  liveKey: number,
): T & { readonly interceptors: WorkerInterceptors } {
  const interceptors = options.interceptors ?? {};
  return { ...options, interceptors: { ...interceptors, activity: [...(interceptors.activity ?? []), liveTaskWaitInterceptor(waits, liveKey)] } };
}
