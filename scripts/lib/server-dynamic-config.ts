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
export const SERVER_DYNAMIC_CONFIG: Readonly<Record<string, boolean | number | string>> = Object.freeze({
  'system.enableActivityEagerExecution': true,
  'history.transferProcessorMaxPollRPS': 200,
  'history.timerProcessorMaxPollRPS': 200,
});

/** Settings as dynamic config file entries (no constraints: every namespace); ours by default. */
export function dynamicConfigYamlEntries(settings: Readonly<Record<string, boolean | number | string>> = SERVER_DYNAMIC_CONFIG): string {
  return Object.entries(settings)
    .map(([key, value]) => `${key}:\n  - value: ${JSON.stringify(value)}\n`)
    .join('');
}
