/**
 * A tenant's book: the saved logins it enrolled for unattended refresh, and the refresh of a whole
 * book as one durable operation. The public surface of the three workflows behind it (names, ids,
 * messages, progress and report), shared by the pipeline client, the activities and the workflows.
 *
 * - The registry lives in Temporal: one small `bookEntryWorkflow` per enrolled login
 *   (`book-entry-<customerId>:<loginId>`), idle until told otherwise, its enrolment in its memo and
 *   its cadence and end-user flag in search attributes, so a book of 100,000 logins is listed through
 *   visibility a page at a time, with no database of our own.
 * - One Schedule per tenant and cadence (`book-<customerId>:<cadence>`) starts `bookRefreshWorkflow`,
 *   which keeps a sliding window of connection children in flight, reads the book a page at a time
 *   and continues as new after each page.
 * - Each page's per-login outcomes are kept as a `bookReportPageWorkflow` record; the refresh's
 *   result is the night's summary.
 * Import-free apart from the SDK's message definitions: the workflow bundle carries it.
 */
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { ProductsInput, Timing } from '../connection/connection-input.js';
import type { SearchAttributePair } from '@temporalio/common';
import { BookCadenceKey, CustomerIdKey } from '../search-attributes.js';
import type { WindowBounds, WindowChange, WindowControl, WindowMemory, WindowView } from '../window/window-definitions.js';

export const BOOK_ENTRY_WORKFLOW_TYPE = 'bookEntryWorkflow';
export const BOOK_REFRESH_WORKFLOW_TYPE = 'bookRefreshWorkflow';
export const BOOK_REPORT_PAGE_WORKFLOW_TYPE = 'bookReportPageWorkflow';

/** The cadence every enrolment gets unless it names one. */
export const DEFAULT_BOOK_CADENCE = 'nightly';

/** `book-entry-<customerId>:<loginId>`: the login's place in its tenant's book. */
export function bookEntryWorkflowId(customerId: string, loginId: string): string {
  return `book-entry-${customerId}:${loginId}`;
}

/**
 * The login an id names when it is one of the tenant's book entries; undefined for any other id (a
 * row forged in visibility under another id: its memo's context would name no tenant, or another).
 */
export function bookEntryLoginOf(workflowId: string, customerId: string): string | undefined {
  const prefix = bookEntryWorkflowId(customerId, '');
  return workflowId.startsWith(prefix) ? workflowId.slice(prefix.length) : undefined;
}

/** `book-<customerId>:<cadence>`: the Schedule that refreshes the book; its runs are `<this>-<scheduled time>`. */
export function bookScheduleId(customerId: string, cadence: string): string {
  return `book-${customerId}:${cadence}`;
}

/**
 * The visibility query of a tenant's enrolled logins (one cadence, or all): its running entries.
 * Customer ids and cadence names are checked before they get here (no quote or control character
 * can occur); JSON's string literal is visibility's.
 */
export function bookEntriesQuery(customerId: string, cadence?: string): string {
  return [
    `WorkflowType = ${JSON.stringify(BOOK_ENTRY_WORKFLOW_TYPE)}`,
    `ExecutionStatus = 'Running'`,
    `${CustomerIdKey.name} = ${JSON.stringify(customerId)}`,
    ...(cadence === undefined ? [] : [`${BookCadenceKey.name} = ${JSON.stringify(cadence)}`]),
  ].join(' AND ');
}

/** A refresh started other than by the Schedule (by hand, through Nexus): `book-<customerId>:<cadence>-<time to the second>`, as the Schedule names its runs. */
export function bookRefreshRunId(customerId: string, cadence: string, at: Date): string {
  return `${bookScheduleId(customerId, cadence)}-${at.toISOString().replace(/\.\d{3}Z$/, 'Z')}`;
}

/** The visibility query of a tenant's book refreshes (one cadence, or all; running, closed or both), checked ids as in bookEntriesQuery. */
export function bookRefreshesQuery(customerId: string, cadence?: string, running?: boolean): string {
  return [
    `WorkflowType = ${JSON.stringify(BOOK_REFRESH_WORKFLOW_TYPE)}`,
    `${CustomerIdKey.name} = ${JSON.stringify(customerId)}`,
    ...(cadence === undefined ? [] : [`${BookCadenceKey.name} = ${JSON.stringify(cadence)}`]),
    ...(running === undefined ? [] : [`ExecutionStatus ${running ? '=' : '!='} 'Running'`]),
  ].join(' AND ');
}

/** What a book refresh starts with in visibility, whoever starts it (the Schedule, a run by hand, a Nexus relay): what the listing of refreshes reads. */
export function bookRefreshAttributes(customerId: string, cadence: string): SearchAttributePair[] {
  return [
    { key: CustomerIdKey, value: customerId },
    { key: BookCadenceKey, value: cadence },
  ];
}

/** `<refresh workflow id>-page-<n>`: the record of one page's per-login outcomes. */
export function bookReportPageId(refreshWorkflowId: string, page: number): string {
  return `${refreshWorkflowId}-page-${page}`;
}

/**
 * A login's connection in one refresh of its book: a business key like a scheduled run's
 * (`refresh-<customerId>:<loginId>-<night>`), so the pipeline's latest-refresh lookup finds it, and
 * unique per night, so the same login is never started twice in one night.
 */
export function bookConnectionWorkflowId(customerId: string, loginId: string, night: string): string {
  return `refresh-${customerId}:${loginId}-${night}`;
}

/** How a book's connection ended, as it tells its refresh. */
export type BookConnectionEnd =
  /**
   * `pollWaitMs`: the part of the connection's time that was its polls' fixed waits (polls × the
   * poll interval): time a busy fleet does not lengthen, so the refresh leaves it out when it judges
   * how crowded the fleet is. Absent from runs begun before it was told.
   */
  | { readonly ended: 'completed'; readonly pollWaitMs?: number | undefined }
  /** The connection's failure type, or how Temporal ended it (Cancelled, Terminated, TimedOut). */
  | { readonly ended: 'failed'; readonly failureType: string };

/**
 * What a book's connection tells the refresh that started it when it ends (its last step, before it
 * closes): which connection (and run: absent from builds before 2026-11-29), and how it ended. A few
 * bytes, where a child's end would carry its whole result into the refresh's history.
 */
export type BookLoginEnded = { readonly workflowId: string; readonly runId?: string | undefined } & BookConnectionEnd;

/** Sent by a book's connection to its refresh (`ConnectionInput.book.refreshWorkflowId`) as it ends. */
export const bookLoginEndedSignal = defineSignal<[BookLoginEnded]>('bookLoginEnded');

/**
 * The memo a refresh starts each connection with: which launch started it, so a start retried after
 * it went through (the worker died before its result was recorded) is told from a login listed twice.
 */
export const BOOK_CONNECTION_MEMO = { launch: 'bookLaunch' } as const;

/** What a login is refreshed with; the entry's memo (`enrolment`). */
export interface BookEnrolment {
  readonly customerId: string;
  readonly loginId: string;
  readonly cadence: string;
  /** `cached`: the saved data; `refresh`: a live refresh at the institution. */
  readonly session: 'cached' | 'refresh';
  readonly products: ProductsInput;
  readonly timing?: Partial<Timing> | undefined;
  readonly enrolledAt: string;
}

/** Why a login is left out of unattended refreshes until its end user is back. */
export interface BookEntryFlag {
  /** The failure type or challenge type that showed it. */
  readonly reason: string;
  /** The connection that showed it. */
  readonly workflowId: string;
  readonly flaggedAt: string;
}

/** The entry's memo keys: the enrolment and, once flagged, the flag. */
export const BOOK_ENTRY_MEMO = { enrolment: 'enrolment', flag: 'flag' } as const;

export interface BookEntryState {
  readonly enrolment: BookEnrolment;
  readonly flag?: BookEntryFlag | undefined;
  /** Set once the login left the book (forgotten or removed). */
  readonly left?: { readonly reason: string; readonly at: string } | undefined;
}

/** Enrols again with new settings (signal-with-start: starts the entry when absent). Clears a flag. */
export const enrolSignal = defineSignal<[BookEnrolment]>('enrol');
/** The login needs its end user: left out of refreshes until enrolled again. */
export const flagEntrySignal = defineSignal<[BookEntryFlag]>('flagEntry');
/** The login leaves the book (forgotten, or removed by the pipeline): the entry ends. */
export const leaveBookSignal = defineSignal<[{ readonly reason: string }]>('leaveBook');
export const bookEntryQuery = defineQuery<BookEntryState>('bookEntry');

/** Logins read (and children started and drained) per run of the refresh before it continues as new. */
export const DEFAULT_BOOK_PAGE_SIZE = 500;
export const BOOK_PAGE_SIZE_LIMITS = { min: 1, max: 1_000 } as const;
/** One login's outcome in a night, as its report page keeps it. */
export type BookOutcomeKind =
  /** The connection completed. */
  | 'refreshed'
  /** Skipped (flagged before the night), or its connection met a challenge nobody could answer: now flagged. */
  | 'needs-end-user'
  /** The connection failed (`failureType` says how). */
  | 'failed'
  /** Forgotten or removed from the book after the page was read: skipped, or its connection ended with it. */
  | 'forgotten'
  /** The entry's record cannot make a connection input (`problem` says why): skipped. */
  | 'malformed'
  /** Its connection was cancelled with the refresh. */
  | 'cancelled'
  /** Already refreshed this night (its connection's id was taken): not started twice. */
  | 'duplicate';

export interface BookOutcome {
  readonly loginId: string;
  readonly outcome: BookOutcomeKind;
  readonly workflowId?: string | undefined;
  /** A ConnectionFailureType, or how Temporal ended the connection (Terminated, TimedOut). */
  readonly failureType?: string | undefined;
  readonly problem?: string | undefined;
  /** From the child's start to its end, as the refresh saw it. */
  readonly durationMs?: number | undefined;
}

export interface BookReportPage {
  readonly refreshWorkflowId: string;
  readonly page: number;
  readonly outcomes: readonly BookOutcome[];
}

export interface BookCounts {
  /** Logins with an outcome so far (every kind). */
  readonly done: number;
  readonly refreshed: number;
  readonly needsEndUser: number;
  readonly failed: number;
  readonly failedByType: Readonly<Record<string, number>>;
  readonly forgotten: number;
  readonly malformed: number;
  readonly cancelled: number;
  readonly duplicate: number;
}

export type BookRefreshStatus = 'running' | 'paused' | 'cancelling' | 'completed' | 'cancelled';

export interface BookProgress {
  readonly customerId: string;
  readonly cadence: string;
  /** The refresh's workflow id: one per tenant, cadence and night. */
  readonly refreshWorkflowId: string;
  readonly night: string;
  readonly status: BookRefreshStatus;
  readonly startedAt: string;
  /** Enrolled logins of the cadence when the refresh began (a count through visibility). */
  readonly total?: number | undefined;
  /** The page being worked on, from 1; pages written so far are 1 .. page - 1. */
  readonly page: number;
  readonly inFlight: number;
  readonly counts: BookCounts;
  readonly window: WindowView;
  /** Children started since the refresh began. */
  readonly started: number;
  /** Time the window held free slots while a page drained before continuing as new (what draining costs). */
  readonly drainMs: number;
  readonly pausedMs: number;
  /**
   * From the recent rate (the last 64 logins given an outcome, in time not paused, across pages: a
   * slow start while the window grows does not weigh on it all night; logins settled as a page is
   * read, malformed or needing their end user, count as they are settled) and what is left; absent
   * until 8 are done.
   */
  readonly estimatedEnd?: string | undefined;
  readonly updatedAt: string;
}

/** The night's summary: the refresh's result; per-login outcomes are in its report pages. */
export interface BookReport extends Omit<BookProgress, 'inFlight' | 'estimatedEnd' | 'updatedAt'> {
  readonly endedAt: string;
  /** Report page ids, `<refresh workflow id>-page-<n>`, one per page read. */
  readonly pages: readonly string[];
  /** Scheduled refreshes of this book skipped while this one ran (overlap policy SKIP). */
  readonly skippedWhileRunning: number;
  /** Window sizes over the night: each change with its reason (at most the last 50). */
  readonly windowChanges: readonly WindowChange[];
}

export interface BookRefreshInput {
  readonly customerId: string;
  readonly cadence: string;
  /** The Schedule that starts it, to count the runs it skipped while this one ran; absent for a start by hand. */
  readonly scheduleId?: string | undefined;
  readonly window?: Partial<WindowBounds> | undefined;
  readonly pageSize?: number | undefined;
  /**
   * How the window reads what it observes (see window-controller.ts); the defaults suit a production
   * fleet. Tests and benchmarks set them to see growth and shrink in a short run.
   */
  readonly control?: Partial<WindowControl> | undefined;
  /** What an earlier run of the same refresh hands over when it continues as new. */
  readonly carried?: BookRefreshCarry | undefined;
  /** Post the refresh's outcome (its counts) here when it ends, as a connection's callback (docs/pipelines.md). */
  readonly callback?: { readonly url: string } | undefined;
}

/** What continues across continue-as-new. */
export interface BookRefreshCarry {
  readonly night: string;
  readonly startedAt: string;
  readonly page: number;
  readonly pageToken?: string | undefined;
  readonly total?: number | undefined;
  readonly counts: BookCounts;
  readonly started: number;
  readonly drainMs: number;
  readonly pausedMs: number;
  readonly paused: boolean;
  readonly window: WindowMemory;
  readonly pages: readonly string[];
  readonly skippedAtStart?: number | undefined;
  /** When the last logins were done, in ms of time not paused (what the estimated end is read from); absent from runs of before. */
  readonly recentDone?: readonly number[] | undefined;
}

export const bookProgressQuery = defineQuery<BookProgress>('bookProgress');
/** Stops starting children (those in flight finish); the report counts paused time. */
export const pauseBookUpdate = defineUpdate<BookProgress, [{ readonly reason?: string }]>('pauseBook');
export const resumeBookUpdate = defineUpdate<BookProgress, [{ readonly reason?: string }]>('resumeBook');
/** Starts no more children and cancels those in flight; the report is written. */
export const cancelBookUpdate = defineUpdate<BookProgress, [{ readonly reason?: string }]>('cancelBook');
/** Pins the window at `size` (within its bounds' limits), or `unpin` gives it back to the controller. */
export const resizeBookUpdate = defineUpdate<BookProgress, [{ readonly size?: number; readonly unpin?: boolean }]>('resizeBook');
