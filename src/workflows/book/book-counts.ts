/** A book refresh's running tally of its logins' outcomes. Deterministic and import-free but for types. */
import type { BookCounts, BookOutcome } from '../../contract/book/book-definitions.js';

export const EMPTY_COUNTS: BookCounts = Object.freeze({
  done: 0,
  refreshed: 0,
  needsEndUser: 0,
  failed: 0,
  failedByType: {},
  forgotten: 0,
  malformed: 0,
  cancelled: 0,
  duplicate: 0,
});

/** The counts with one more outcome (failures by type as well). */
export function countOutcome(counts: BookCounts, outcome: BookOutcome): BookCounts {
  const next = { ...counts, done: counts.done + 1 };
  switch (outcome.outcome) {
    case 'refreshed':
      return { ...next, refreshed: counts.refreshed + 1 };
    case 'needs-end-user':
      return { ...next, needsEndUser: counts.needsEndUser + 1 };
    case 'failed': {
      const type = String(outcome.failureType ?? 'Unknown');
      return { ...next, failed: counts.failed + 1, failedByType: { ...counts.failedByType, [type]: (counts.failedByType[type] ?? 0) + 1 } };
    }
    case 'forgotten':
      return { ...next, forgotten: counts.forgotten + 1 };
    case 'malformed':
      return { ...next, malformed: counts.malformed + 1 };
    case 'cancelled':
      return { ...next, cancelled: counts.cancelled + 1 };
    case 'duplicate':
      return { ...next, duplicate: counts.duplicate + 1 };
  }
}
