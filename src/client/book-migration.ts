/**
 * Moving a tenant's per-login refresh Schedules into its book: each login enrolled with its
 * schedule's session and products, then its schedule deleted unless kept. Apart from the book client
 * because it is a one-off move between the two kinds of refresh, built on both clients' calls.
 */
import type { BookEnrolmentArgs } from './book-input.js';
import { InvalidBookRequestError, RefreshNotUnattendedError } from './errors.js';
import type { RefreshSchedules } from './schedules.js';

export interface MigrationOutcome {
  /** Logins enrolled from their per-login Schedules. */
  readonly enrolled: readonly string[];
  /** Per-login Schedules deleted after their login was enrolled (none with `keepSchedules`). */
  readonly schedulesDeleted: number;
  /** Schedules left as they were, and why (a login that needs its end user, a schedule of another kind). */
  readonly skipped: readonly { readonly scheduleId: string; readonly reason: string }[];
}

/** Enrols (with `enrol`) each login of `customerId` that has a per-login Schedule, in `cadence`; see `BooksClient.migrateSchedules`. */
export async function migrateSchedules(
  enrol: (request: BookEnrolmentArgs) => Promise<unknown>,
  schedules: Pick<RefreshSchedules, 'list' | 'delete'>,
  customerId: string,
  cadence: string,
  keepSchedules: boolean | undefined,
): Promise<MigrationOutcome> {
  const enrolled: string[] = [];
  const skipped: { scheduleId: string; reason: string }[] = [];
  let schedulesDeleted = 0;
  for (const summary of await schedules.list({ customerId, limit: 1000 })) {
    try {
      await enrol({ customerId, loginId: summary.loginId, cadence, session: summary.session, products: summary.products });
    } catch (error) {
      if (!(error instanceof RefreshNotUnattendedError || error instanceof InvalidBookRequestError)) throw error;
      skipped.push({ scheduleId: summary.scheduleId, reason: error.message });
      continue;
    }
    enrolled.push(summary.loginId);
    if (!keepSchedules && (await schedules.delete({ customerId, loginId: summary.loginId })) === 'deleted') schedulesDeleted += 1;
  }
  return { enrolled, schedulesDeleted, skipped };
}
