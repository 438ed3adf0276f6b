/**
 * Server settings the worker is tuned for, from one source: every Temporal server this project starts
 * (tests, `npm start`, chaos, benchmarks, prod:check) gets them, and temporal-compose.yml ships them
 * (a test checks it does).
 *
 * - system.enableActivityEagerExecution: when a workflow task schedules an activity on its own task
 *   queue, the server hands the activity back in the task's completion response, so the worker starts
 *   it at once instead of waiting for a poll to be matched. Measured with
 *   `npx tsx bench/connection-timeline.ts`: a cached accounts connection 94-99 ms instead of 145-149
 *   ms, the Authorize activity's schedule-to-start 0 ms instead of 22-30 ms. Activities the worker
 *   has no free slot for still go through the task queue.
 * - history.transferProcessorMaxPollRPS, history.timerProcessorMaxPollRPS: how often one history
 *   shard's queue readers may read new tasks (default 20 a second each). Every workflow task that
 *   follows a start, an activity's completion or a signal passes the transfer queue, and every fired
 *   timer (a poll of the default strategy) the timer queue. The dev server runs one shard, so past a
 *   burst of 20 a task waited up to 50 ms for the next read: `npx tsx bench/sdk-floor.ts` (no-op
 *   activities, nothing of ours) measured a cached connection's shape at 99.6 ms and an answer's at
 *   50.0 ms with the default, 24.7 and 10.3 ms at 200 (no better at 1,000). A read fetches every task
 *   due, so the rate bounds the readers' queries, not the tasks: at most 200 a second per shard.
 */
const BASE_DYNAMIC_CONFIG = {
  'system.enableActivityEagerExecution': true,
  'history.transferProcessorMaxPollRPS': 200,
  'history.timerProcessorMaxPollRPS': 200,
} as const;

/**
 * Priority and fairness (src/contract/priority.ts) and the fleet's request budget (Temporal's
 * task-queue and per-fairness-key rate limits):
 * - matching.enableFairness: dispatch by priority key, then fair between fairness keys (tenants) by
 *   weight; it implies the new matcher, which per-key rate limits need.
 * - one partition per task queue: priority, fairness and rate limits act per partition, so with
 *   Temporal's default 4 an order is approximate and a per-tenant limit was exceeded by up to 60%
 *   (measured here: 4-8 a second against a limit of 5). One partition of one queue dispatches far
 *   more than a lender's fleet asks for.
 * Only on releases with the fairness task-loss fix (1.30.9, 1.31.5, 1.32.1 and later): see
 * fairnessIsSafeOn.
 */
const FAIRNESS_DYNAMIC_CONFIG = {
  'matching.enableFairness': true,
  'matching.numTaskqueueReadPartitions': 1,
  'matching.numTaskqueueWritePartitions': 1,
} as const;

/** Every setting, for the production release (TEMPORAL_SERVER_VERSION): what the dev server and compose ship. */
export const SERVER_DYNAMIC_CONFIG: Readonly<Record<string, boolean | number | string>> = Object.freeze({ ...BASE_DYNAMIC_CONFIG, ...FAIRNESS_DYNAMIC_CONFIG });

/** A fairness-mode cleanup bug could delete another owner's tasks; fixed in 1.30.9, 1.31.5 and 1.32.1. */
export function fairnessIsSafeOn(release: string): boolean {
  const [major = 0, minor = 0, patch = 0] = release.split('.').map(Number);
  if (major !== 1) return major > 1;
  if (minor === 30) return patch >= 9;
  if (minor === 31) return patch >= 5;
  return minor >= 32 ? minor > 32 || patch >= 1 : false;
}

/** The settings a server of this release gets: fairness only where it is safe (an upgrade rehearsal passes older ones). */
export function serverDynamicConfigFor(release: string): Readonly<Record<string, boolean | number | string>> {
  return fairnessIsSafeOn(release) ? SERVER_DYNAMIC_CONFIG : BASE_DYNAMIC_CONFIG;
}

/** Settings as dynamic config file entries (no constraints: every namespace); ours by default. */
export function dynamicConfigYamlEntries(settings: Readonly<Record<string, boolean | number | string>> = SERVER_DYNAMIC_CONFIG): string {
  return Object.entries(settings)
    .map(([key, value]) => `${key}:\n  - value: ${JSON.stringify(value)}\n`)
    .join('');
}
