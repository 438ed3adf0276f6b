/**
 * `aggregation_session_restarts{reason}`: sessions a connection opened again on its own, recorded from
 * workflow code through the SDK's workflow meter (skipped during replay), as book-metrics.ts is. The
 * workflow is the only place that decides a restart, and a restart of a live session sends the
 * applicant's credentials again: operators watch this counter for that.
 * - `outcome_unknown`: an Authorize's reply was lost (the worker died mid-call, the connection broke
 *   after sending, the service answered 5xx after it may have acted): a new live session was opened;
 * - `session_expired`: the session expired while data waited; reopened with a cached Authorize (no credentials).
 */
import { metricMeter } from '@temporalio/workflow';

export type SessionRestartReason = 'outcome_unknown' | 'session_expired';

export const SESSION_RESTARTS_METRIC = 'aggregation_session_restarts';

export function countSessionRestart(reason: SessionRestartReason): void {
  metricMeter.createCounter(SESSION_RESTARTS_METRIC, '', 'Sessions a connection opened again on its own, by reason').add(1, { reason });
}
