/**
 * The book refresh's reads of Temporal (never of the service, so they run as local activities and
 * spend nothing of the request budget): a page of the book through visibility, which of the next
 * logins are still enrolled, how many are enrolled, whether the service throttled the tenant, and
 * how many scheduled runs its Schedule skipped, and the windows the other running refreshes hold. Each entry's record is checked here, outside the
 * workflow sandbox, against the connection input's schema: a malformed one is reported, never fatal.
 */
import { ScheduleNotFoundError, type Client } from '@temporalio/client';
import { decodeMapFromPayloads, decodeTypedSearchAttributes } from '../sdk/internals.js';
import { describeIssues } from '../validation/parse-or-refuse.js';
import {
  BOOK_ENTRY_MEMO,
  BOOK_REFRESH_WORKFLOW_TYPE,
  bookEntriesQuery,
  bookEntryLoginOf,
  bookEntryWorkflowId,
  type BookEnrolment,
  type BookEntryFlag,
} from '../contract/book/book-definitions.js';
import { BOOK_REFRESH_MEMO, type PublishedWindow } from '../contract/window/window-definitions.js';
import { ADMISSION_WORKFLOW_TYPE } from '../contract/admission/admission-definitions.js';
import { ConnectionInput, type ConnectionInputArgs } from '../contract/connection/connection-input.js';
import { EndUserChallengeKey } from '../contract/search-attributes.js';
import { tenantOfWorkflowId } from '../contract/workflow-tenant.js';
import { visibilityPage, visibilityRows } from '../temporal/visibility-rows.js';
import type { TenantPauses } from './tenant-pauses.js';

export interface BookActivitiesDeps {
  /** A client of the worker's own namespace, with the worker's data converter (entries' memos are encrypted). */
  readonly temporal: Client;
  /** What this worker knows of throttled tenants (read through their throttle workflows). */
  readonly pauses: TenantPauses;
}

export interface BookPageRequest {
  readonly customerId: string;
  readonly cadence: string;
  readonly pageSize: number;
  /** Visibility's token for the page after the previous one (base64); absent for the first page. */
  readonly pageToken?: string | undefined;
}

/** One entry of a page: a connection to start, a login to skip until its end user is back, or a record that cannot be used. */
export type BookPageEntry =
  | { readonly kind: 'refresh'; readonly loginId: string; readonly input: ConnectionInputArgs }
  | { readonly kind: 'flagged'; readonly loginId: string; readonly flag: string }
  | { readonly kind: 'malformed'; readonly loginId: string; readonly problem: string };

export interface BookPage {
  readonly entries: readonly BookPageEntry[];
  readonly nextPageToken?: string | undefined;
}

/** The connection an entry's record makes, or why it cannot make one. */
export function connectionInputOf(customerId: string, loginId: string, record: unknown): { input: ConnectionInputArgs } | { problem: string } {
  const enrolment = record as Partial<BookEnrolment> | undefined;
  if (enrolment === undefined || enrolment === null || typeof enrolment !== 'object') return { problem: 'the entry has no enrolment record' };
  if (enrolment.loginId !== loginId || enrolment.customerId !== customerId)
    return { problem: `the record names another login (${String(enrolment.customerId)}:${String(enrolment.loginId)})` };
  if (enrolment.session !== 'cached' && enrolment.session !== 'refresh')
    return { problem: `session: must be cached or refresh, got ${JSON.stringify(enrolment.session)}` };
  const candidate = {
    customerId,
    session: { kind: enrolment.session, loginId },
    products: enrolment.products,
    ...(enrolment.timing ? { timing: enrolment.timing } : {}),
    unattended: true,
  };
  const parsed = ConnectionInput.safeParse(candidate);
  if (!parsed.success) return { problem: describeIssues(parsed.error) };
  return { input: candidate as ConnectionInputArgs };
}

export function createBookActivities({ temporal, pauses }: BookActivitiesDeps) {
  const namespace = temporal.options.namespace;

  return {
    /** One page of the book, each entry checked; visibility's order (newest enrolment first) and token keep pages stable. */
    async readBookPage({ customerId, cadence, pageSize, pageToken }: BookPageRequest): Promise<BookPage> {
      const page = await visibilityPage(temporal, bookEntriesQuery(customerId, cadence), pageSize, pageToken);
      const entries: BookPageEntry[] = [];
      for (const execution of page.rows) {
        const workflowId = execution.execution?.workflowId ?? '';
        const loginId = bookEntryLoginOf(workflowId, customerId);
        if (loginId === undefined) {
          // Not an id the product gives this tenant's entries: its memo's context would name no tenant (or another), so it is not opened.
          entries.push({ kind: 'malformed', loginId: workflowId, problem: `its workflow id is not one of ${customerId}'s book entries` });
          continue;
        }
        let memo: Record<string, unknown> | undefined;
        try {
          memo = await decodeMapFromPayloads(temporal.options.loadedDataConverter, execution.memo?.fields ?? undefined, { namespace, workflowId });
        } catch (error) {
          entries.push({
            kind: 'malformed',
            loginId,
            problem: `its record cannot be decoded: ${error instanceof Error ? error.message : String(error)}`.slice(0, 300),
          });
          continue;
        }
        const flagged = decodeTypedSearchAttributes(execution.searchAttributes?.indexedFields ?? undefined).get(EndUserChallengeKey);
        if (flagged !== undefined) {
          const flag = memo?.[BOOK_ENTRY_MEMO.flag] as BookEntryFlag | undefined;
          entries.push({ kind: 'flagged', loginId, flag: flag?.reason ?? flagged });
          continue;
        }
        const made = connectionInputOf(customerId, loginId, memo?.[BOOK_ENTRY_MEMO.enrolment]);
        entries.push('input' in made ? { kind: 'refresh', loginId, input: made.input } : { kind: 'malformed', loginId, problem: made.problem.slice(0, 300) });
      }
      // A short page is the last (visibility may still hand out a token, to an empty page).
      const token = page.rows.length >= pageSize ? page.nextPageToken : undefined;
      return { entries, ...(token ? { nextPageToken: token } : {}) };
    },

    /** Which of these logins are still enrolled and unflagged (a login forgotten since its page was read is not). */
    async stillEnrolled({ customerId, loginIds }: { readonly customerId: string; readonly loginIds: readonly string[] }): Promise<string[]> {
      if (loginIds.length === 0) return [];
      const ids = loginIds.map((loginId) => JSON.stringify(bookEntryWorkflowId(customerId, loginId))).join(', ');
      const query = `${bookEntriesQuery(customerId)} AND WorkflowId IN (${ids}) AND ${EndUserChallengeKey.name} IS NULL`;
      // Raw rows, their memos never decoded: only the ids are needed, and the SDK's list would fail on
      // any row whose memo this worker cannot open (one forged entry would stall the refresh).
      const enrolled: string[] = [];
      for await (const execution of visibilityRows(temporal, query, loginIds.length)) {
        const workflowId = execution.execution?.workflowId ?? '';
        enrolled.push(bookEntryLoginOf(workflowId, customerId) ?? workflowId);
      }
      return enrolled;
    },

    /** Enrolled logins of the cadence (flagged ones included). */
    async countBook({ customerId, cadence }: { readonly customerId: string; readonly cadence: string }): Promise<number> {
      return (await temporal.workflow.count(bookEntriesQuery(customerId, cadence))).count;
    },

    /** Until when the service asked the tenant to wait, if it did (epoch ms). */
    async tenantThrottle({ customerId }: { readonly customerId: string }): Promise<{ until: number; reason: string } | null> {
      const pause = await pauses.pauseOf(customerId);
      return pause ? { until: pause.until, reason: pause.reason } : null;
    },

    /**
     * The windows of the other running book refreshes and tenants' admissions (every tenant's and
     * cadence's), as each published it in its memo: what this one shares the fleet with. One without
     * a readable window (an older build, a memo that does not decode) is left out rather than guessed.
     */
    async fleetWindows({ refreshWorkflowId }: { readonly refreshWorkflowId: string }): Promise<PublishedWindow[]> {
      const windows: PublishedWindow[] = [];
      const query = `WorkflowType IN ('${BOOK_REFRESH_WORKFLOW_TYPE}', '${ADMISSION_WORKFLOW_TYPE}') AND ExecutionStatus = 'Running'`;
      for await (const execution of visibilityRows(temporal, query, 100)) {
        const workflowId = execution.execution?.workflowId ?? '';
        // A refresh's and an admission's ids name their tenant; a row whose id names none is not one (its memo's context would check no key).
        if (workflowId === refreshWorkflowId || tenantOfWorkflowId(workflowId) === undefined) continue;
        let published: unknown;
        try {
          published = (await decodeMapFromPayloads(temporal.options.loadedDataConverter, execution.memo?.fields ?? undefined, { namespace, workflowId }))?.[
            BOOK_REFRESH_MEMO.window
          ];
        } catch {
          continue;
        }
        const other = readPublishedWindow(published, Date.now());
        if (other) windows.push(other);
      }
      return windows;
    },

    /** Runs the Schedule skipped because a refresh was still running (overlap SKIP); null without one. */
    async scheduleSkips({ scheduleId }: { readonly scheduleId: string }): Promise<number | null> {
      try {
        return (await temporal.schedule.getHandle(scheduleId).describe()).info.numActionsSkippedOverlap;
      } catch (error) {
        if (error instanceof ScheduleNotFoundError) return null;
        throw error;
      }
    },
  };
}

export type BookActivities = ReturnType<typeof createBookActivities>;

/**
 * Another refresh's published window as it may be used at `now`, or undefined when it is not one
 * (no size, no positive weight): left out rather than guessed. Its crowding is dropped once past
 * its end (that book's children stopped finishing: paused, draining, waiting on the service).
 */
export function readPublishedWindow(published: unknown, now: number): PublishedWindow | undefined {
  if (typeof published !== 'object' || published === null) return undefined;
  const { size, weight, crowding, crowdingUntil } = published as Partial<Record<keyof PublishedWindow, unknown>>;
  if (!(typeof size === 'number' && Number.isFinite(size) && size >= 0 && typeof weight === 'number' && Number.isFinite(weight) && weight > 0))
    return undefined;
  const fresh = typeof crowdingUntil !== 'number' || crowdingUntil >= now;
  return { size, weight, ...(fresh && typeof crowding === 'number' && Number.isFinite(crowding) && crowding > 0 ? { crowding } : {}) };
}
