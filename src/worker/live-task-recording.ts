/**
 * Records this process's live tasks into its two readings (src/metrics/live-task-waits.ts says what
 * each holds): an activity interceptor for each live activity's wait to start, and the sink that
 * src/workflows/live-task-lag-interceptors.ts calls as each live workflow task concludes.
 */
import type { ActivityInterceptorsFactory, InjectedSinks, WorkerInterceptors, WorkerOptions } from '@temporalio/worker';
import type { LiveTaskWaits, LiveWorkerReadings } from '../metrics/live-task-waits.js';
import type { LiveTaskSinks } from '../workflows/live-task-lag-interceptors.js';

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

/** The sink that records each live workflow task's time on this worker (not called in replays). */
export function liveWorkflowTaskSinks(times: LiveTaskWaits, liveKey: number): InjectedSinks<LiveTaskSinks> {
  return {
    liveTasks: {
      concluded: {
        fn: (info, startedAtMs) => {
          if (isLiveKey(info.priority?.priorityKey, liveKey)) times.record(Date.now() - startedAtMs);
        },
        callDuringReplay: false,
      },
    },
  };
}

/** Worker options with both live readings' recorders added after the interceptors and sinks given. */
export function withLiveTaskWaits<T extends { readonly interceptors?: WorkerInterceptors; readonly sinks?: WorkerOptions['sinks'] }>(
  options: T,
  readings: LiveWorkerReadings,
  liveKey: number,
): T & { readonly interceptors: WorkerInterceptors; readonly sinks: NonNullable<WorkerOptions['sinks']> } {
  const interceptors = options.interceptors ?? {};
  return {
    ...options,
    interceptors: { ...interceptors, activity: [...(interceptors.activity ?? []), liveTaskWaitInterceptor(readings.activityStarts, liveKey)] },
    sinks: { ...options.sinks, ...liveWorkflowTaskSinks(readings.workflowTasks, liveKey) },
  };
}
