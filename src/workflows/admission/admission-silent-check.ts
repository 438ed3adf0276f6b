/**
 * An admission's check on admitted connections that have not told their end, apart from the run
 * (admission-run.ts) as two pure rules: which ones to ask Temporal about, and what its answer says
 * of one. One admitted that closed without a word (terminated, timed out) frees its room so.
 */
import type { BookStartActivities } from '../../activities/book-start-activities.js';
import type { AdmittedConnection } from '../../contract/admission/admission-definitions.js';

/** Connections asked about in one silent check. */
const SILENT_CHECK_CHUNK = 50;

type ClosedRead = Awaited<ReturnType<BookStartActivities['connectionsClosed']>>[number];

/** Those admitted `silentCheckMs` or more ago, the least recently read first, a chunk of them. */
export function silentDue(inFlight: Iterable<AdmittedConnection>, now: number, silentCheckMs: number): AdmittedConnection[] {
  const asked = (admitted: AdmittedConnection) => admitted.checkedAt ?? admitted.grantedAt;
  return [...inFlight]
    .filter((admitted) => now - admitted.grantedAt >= silentCheckMs)
    .sort((a, b) => asked(a) - asked(b))
    .slice(0, SILENT_CHECK_CHUNK);
}

/**
 * `running`: the id's current run is this one (a read of an older build names no run: taken as this
 * one). `closed`: closed otherwise (or another run of the id runs now), it told its end before it
 * closed: in history by now, or at the next check. `gone`: it closed without telling its end.
 */
export function silentFinding(admitted: AdmittedConnection, latest: ClosedRead): 'running' | 'closed' | 'gone' {
  if (latest.status === 'RUNNING' && (latest.runId === undefined || latest.runId === admitted.runId)) return 'running';
  if (admitted.closedSeenAt === undefined && latest.status !== 'TERMINATED' && latest.status !== 'TIMED_OUT' && latest.status !== 'NOT_FOUND') return 'closed';
  return 'gone';
}
