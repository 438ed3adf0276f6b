/** How the refresh commands print a cadence and a latest run. */
import type { RefreshCadenceArgs } from '../../../client/refresh-schedule-input.js';
import type { LatestRefresh } from '../../../client/schedules.js';

/** "every 2s", "daily 02:30 America/Toronto (jitter 15m)" */
export function describeCadence(cadence: RefreshCadenceArgs): string {
  const jitter = cadence.jitter !== undefined && cadence.jitter !== '0s' ? ` (jitter ${cadence.jitter})` : '';
  return cadence.kind === 'daily' ? `daily ${cadence.at} ${cadence.timeZone ?? 'UTC'}${jitter}` : `every ${cadence.every}${jitter}`;
}

/** "completed", "running", "failed: InvalidCredentials [INVALID_PASSWORD]" */
export function describeOutcome(latest: LatestRefresh): string {
  const outcome = latest.outcome;
  if (outcome.kind !== 'failed') return outcome.kind;
  return `failed: ${outcome.type}${outcome.serviceCode ? ` [${outcome.serviceCode}]` : ''}`;
}
