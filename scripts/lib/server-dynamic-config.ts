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
 */
export const SERVER_DYNAMIC_CONFIG: Readonly<Record<string, boolean | number | string>> = Object.freeze({
  'system.enableActivityEagerExecution': true,
});

/** `--dynamic-config-value key=value ...` for `temporal server start-dev` (values as JSON). */
export function devServerDynamicConfigArgs(): string[] {
  return Object.entries(SERVER_DYNAMIC_CONFIG).flatMap(([key, value]) => ['--dynamic-config-value', `${key}=${JSON.stringify(value)}`]);
}

/** The same settings as dynamic config file entries (no constraints: every namespace). */
export function dynamicConfigYamlEntries(): string {
  return Object.entries(SERVER_DYNAMIC_CONFIG)
    .map(([key, value]) => `${key}:\n  - value: ${JSON.stringify(value)}\n`)
    .join('');
}
