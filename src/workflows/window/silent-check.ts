/**
 * The one silent check of a window (a book's refresh, a tenant's admission): which of the
 * connections it holds room for to ask Temporal about, and what Temporal's answer says of one. A
 * connection is no child of its window, so one that closes without telling its end (terminated by a
 * forget or by hand, timed out) is found only so. Pure rules; the window does the asking
 * (connectionsClosed, a local activity) and acts on the finding.
 */
import type { BookStartActivities } from '../../activities/book-start-activities.js';

/** Temporal's answer for one connection: its latest run's status and, from builds that read it, its run id. */
export type ClosedRead = Pick<Awaited<ReturnType<BookStartActivities['connectionsClosed']>>[number], 'status' | 'runId'>;

/** Connections asked about in one silent check (an admission's; a book's refresh asks a page's chunk). */
export const SILENT_CHECK_CHUNK = 50;

/** What the window keeps of a connection it holds room for, as the rules read it. */
export interface HeldConnection {
  /** When it was given room (asked for, or granted): the silence counts from here. */
  readonly since: number;
  /** When it was last asked about; absent: never. */
  readonly checkedAt?: number | undefined;
  /** When it was first seen closed (its end is then on its way, or it never knew its window). */
  readonly closedSeenAt?: number | undefined;
  /** The run given room, where the window keeps it: another run of the id is not this one. */
  readonly runId?: string | undefined;
}

/** Those held `silentCheckMs` or more, the least recently asked about first (so a window wider than one read gets round them all), `chunk` of them. */
export function silentDue<T>(held: Iterable<T>, heldAs: (entry: T) => HeldConnection, now: number, silentCheckMs: number, chunk: number): T[] {
  const asked = (entry: T) => heldAs(entry).checkedAt ?? heldAs(entry).since;
  return [...held]
    .filter((entry) => now - heldAs(entry).since >= silentCheckMs)
    .sort((a, b) => asked(a) - asked(b))
    .slice(0, chunk);
}

/**
 * `running`: its run still runs (a read naming no run is taken as this one); `terminated` (a forget
 * or an operator) and `timed-out`: it closed without telling its end; `closed`: closed otherwise (or
 * another run of the id runs now), it told its end before it closed, so that is in history by now
 * or at the next check; `unknown`: seen closed before and still no end, or Temporal has no such run.
 */
export function silentFinding(held: HeldConnection, read: ClosedRead): 'running' | 'terminated' | 'timed-out' | 'closed' | 'unknown' {
  if (read.status === 'RUNNING' && (read.runId === undefined || held.runId === undefined || read.runId === held.runId)) return 'running';
  if (read.status === 'TERMINATED') return 'terminated';
  if (read.status === 'TIMED_OUT') return 'timed-out';
  return held.closedSeenAt === undefined && read.status !== 'NOT_FOUND' ? 'closed' : 'unknown';
}
