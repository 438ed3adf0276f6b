/**
 * A book refresh's check on connections that have not told their end, apart from the run
 * (book-refresh-run.ts) as two pure rules: which connections to ask Temporal about, and what its
 * answer says of one (a connection is no child of the refresh, so one that closes without a word is
 * found only so).
 */
import type { BookStartActivities } from '../../activities/book-start-activities.js';
import type { InFlightConnection } from './book-refresh-state.js';

type ClosedStatus = Awaited<ReturnType<BookStartActivities['connectionsClosed']>>[number]['status'];

/** Those in flight `silentCheckMs` or more, the least recently asked about first (so a window wider than one read gets round them all), `chunk` of them. */
export function silentDue(
  inFlight: ReadonlyMap<string, InFlightConnection>,
  now: number,
  silentCheckMs: number,
  chunk: number,
): [string, InFlightConnection][] {
  const asked = (child: { readonly askedAt: number; readonly checkedAt?: number }) => child.checkedAt ?? child.askedAt;
  return [...inFlight]
    .filter(([, child]) => now - child.askedAt >= silentCheckMs)
    .sort(([, a], [, b]) => asked(a) - asked(b))
    .slice(0, chunk);
}

/**
 * `terminated`: a forget or an operator terminated it (which, the book tells); `timed-out`: failed;
 * `closed`: closed otherwise, it sent its end before it closed, so that is in history already (or it
 * failed before it knew its refresh: `unknown` at the next check, or at once when Temporal has no such run).
 */
export function silentFinding(child: InFlightConnection, status: ClosedStatus): 'running' | 'terminated' | 'timed-out' | 'closed' | 'unknown' {
  if (status === 'RUNNING') return 'running';
  if (status === 'TERMINATED') return 'terminated';
  if (status === 'TIMED_OUT') return 'timed-out';
  return child.closedSeenAt === undefined && status !== 'NOT_FOUND' ? 'closed' : 'unknown';
}
