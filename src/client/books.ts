/**
 * A tenant's book of saved logins, refreshed as one operation: enrol and remove logins, list the
 * book (a page at a time, through visibility), schedule its refresh (one Temporal Schedule per
 * tenant and cadence), run it now, follow its progress, pause, resume, cancel or resize its window,
 * and read its report (the night's summary and per-login pages). Moving per-login refresh Schedules
 * into the book is one call (`migrateSchedules`).
 *
 * Everything it throws is a `ConnectionClientError` subclass from `./errors.js`.
 */
import {
  ScheduleAlreadyRunning,
  ScheduleNotFoundError,
  WorkflowNotFoundError,
  type Client,
  type ScheduleDescription,
  type WorkflowHandle,
} from '@temporalio/client';
import { TypedSearchAttributes } from '@temporalio/common';
import type { z } from 'zod';
import { parseOrRefuse } from '../validation/parse-or-refuse.js';
import {
  BOOK_ENTRY_WORKFLOW_TYPE,
  BOOK_REFRESH_WORKFLOW_TYPE,
  bookEntryWorkflowId,
  bookEntriesQuery,
  bookRefreshAttributes,
  bookRefreshRunId,
  bookScheduleId,
  cancelBookUpdate,
  leaveBookSignal,
  pauseBookUpdate,
  resizeBookUpdate,
  resumeBookUpdate,
  type BookProgress,
  type BookRefreshInput,
  type BookReport,
  type BookReportPage,
} from '../contract/book/book-definitions.js';
import { type WindowBounds } from '../contract/window/window-definitions.js';
import { DEFAULT_PRIORITY_POLICY, startPriority, type PriorityPolicy } from '../contract/priority.js';
import { EndUserChallengeKey } from '../contract/search-attributes.js';
import { CallbackInput } from '../contract/connection/connection-input.js';
import {
  BookEnrolmentInput,
  BookListInput,
  BookRef,
  BookScheduleInput,
  ResizeInput,
  type BookEnrolmentArgs,
  type BookListArgs,
  type BookRefArgs,
  type BookScheduleArgs,
  type ResizeArgs,
} from './book-input.js';
import { BookEntryNotFoundError, BookRefreshNotFoundError, InvalidBookRequestError, RefreshNotUnattendedError } from './errors.js';
import type { BookRefreshRefusedError } from './errors.js';
import { cadenceArgsOf, parseLoginRef, type LoginRef } from './refresh-schedule-input.js';
import type { EndUserFlag, RefreshSchedules } from './schedules.js';
import { visibilityPage } from '../temporal/visibility-rows.js';
import { entriesOfRows, entryOf, type BookEntrySummary, type BookPageOfEntries } from './book-entries.js';
import { migrateSchedules, type MigrationOutcome } from './book-migration.js';
import { bookErrorOf, listRefreshes, refreshProgress, refreshReport, refreshReportPage, updateRefresh, type BookRefreshSummary } from './book-refresh-runs.js';
import { connectionEnrolment, enrolmentOf, entryStartOf } from './book-enrolment.js';
import { bookScheduleOptions, bookScheduleSummaryOf, type BookScheduleSummary } from './book-schedule.js';

export interface BooksClientOptions {
  readonly client: Client;
  /** Where the book's entries live (a workflow per login). */
  readonly taskQueue: string;
  /** Where its refreshes run, and so their logins and connections (UNATTENDED_POOL=separate); default `taskQueue`. */
  readonly unattendedTaskQueue?: string | undefined;
  readonly address?: string | undefined;
  /** Book refreshes (and so their connections) start with the `scheduled` class's priority and the tenant's weight. */
  readonly priority?: PriorityPolicy | undefined;
  /** Per-login Schedules and the end-user flags connections left (ConnectionsClient passes its own). */
  readonly schedules: Pick<RefreshSchedules, 'endUserFlag'>;
  /** The window's bounds and page size a Schedule or a run gets unless it names its own (BOOK_WINDOW_*, BOOK_PAGE_SIZE). */
  readonly defaults?: { readonly window?: Partial<WindowBounds> | undefined; readonly pageSize?: number | undefined } | undefined;
}

function parse<T extends z.ZodType>(schema: T, value: unknown, what: string): z.infer<T> {
  return parseOrRefuse(schema, value, (problem, cause) => new InvalidBookRequestError(`${what}: ${problem}`, { cause }));
}

export class BooksClient {
  private readonly client: Client;
  private readonly taskQueue: string;
  private readonly refreshTaskQueue: string;
  private readonly address: string | undefined;
  private readonly priority: PriorityPolicy;
  private readonly schedules: Pick<RefreshSchedules, 'endUserFlag'>;
  private readonly defaults: NonNullable<BooksClientOptions['defaults']>;

  constructor(options: BooksClientOptions) {
    this.client = options.client;
    this.taskQueue = options.taskQueue;
    this.refreshTaskQueue = options.unattendedTaskQueue ?? options.taskQueue;
    this.address = options.address;
    this.priority = options.priority ?? DEFAULT_PRIORITY_POLICY;
    this.schedules = options.schedules;
    this.defaults = options.defaults ?? {};
  }

  /**
   * Enrols a saved login in its tenant's book (or changes its enrolment, which also clears a flag).
   * Refused with RefreshNotUnattendedError when a connection of the login showed it needs its end user,
   * unless `evenIfFlagged` (its end user has since signed in again).
   */
  async enrol(request: BookEnrolmentArgs, options: { readonly evenIfFlagged?: boolean } = {}): Promise<BookEntrySummary> {
    const input = parse(BookEnrolmentInput, request, 'enrolment');
    if (!options.evenIfFlagged) {
      const flag: EndUserFlag | undefined = await this.schedules.endUserFlag(input);
      if (flag) throw new RefreshNotUnattendedError(input.customerId, input.loginId, flag.challengeType, flag.workflowId, flag.reason);
    }
    const enrolment = enrolmentOf(input);
    const start = entryStartOf(enrolment, this.taskQueue, this.priority);
    try {
      await this.client.workflow.signalWithStart(BOOK_ENTRY_WORKFLOW_TYPE, start);
    } catch (error) {
      throw this.mapError(error);
    }
    return { ...enrolment, workflowId: start.workflowId };
  }

  /**
   * Enrols the login a connection saved (or used), once it completed: with that connection's products
   * and timing unless others are given, its session as the refresh's (`cached`, or `refresh` for a live
   * refresh). InvalidBookRequestError when the connection did not complete.
   */
  async enrolFromConnection(
    workflowId: string,
    options: Partial<Pick<BookEnrolmentArgs, 'cadence' | 'session' | 'products' | 'timing'>> & { readonly evenIfFlagged?: boolean } = {},
  ): Promise<BookEntrySummary> {
    const enrolment = await connectionEnrolment(this.client, this.address, workflowId);
    const { evenIfFlagged, ...chosen } = options;
    return this.enrol(
      {
        ...enrolment,
        ...chosen,
      },
      { evenIfFlagged: evenIfFlagged ?? false },
    );
  }

  /** Takes the login out of its book (its connections and saved data stay: forgetting is `logins.forget`). */
  async remove(ref: LoginRef, reason = 'removed by the pipeline'): Promise<'removed' | 'none'> {
    const { customerId, loginId } = parseLoginRef(ref);
    try {
      await this.client.workflow.getHandle(bookEntryWorkflowId(customerId, loginId)).signal(leaveBookSignal, { reason });
      return 'removed';
    } catch (error) {
      if (error instanceof WorkflowNotFoundError) return 'none';
      throw this.mapError(error);
    }
  }

  /** The login's enrolment and flag; BookEntryNotFoundError when it is not in a book. */
  async entry(ref: LoginRef): Promise<BookEntrySummary> {
    const { customerId, loginId } = parseLoginRef(ref);
    const workflowId = bookEntryWorkflowId(customerId, loginId);
    try {
      const description = await this.client.workflow.getHandle(workflowId).describe();
      if (description.status.name !== 'RUNNING') throw new BookEntryNotFoundError(customerId, loginId);
      return entryOf(workflowId, description.memo);
    } catch (error) {
      if (error instanceof WorkflowNotFoundError) throw new BookEntryNotFoundError(customerId, loginId, { cause: error });
      throw this.mapError(error);
    }
  }

  /** One page of a tenant's book (newest enrolment first); `nextPageToken` brings the next. */
  async list(request: BookListArgs): Promise<BookPageOfEntries> {
    const input = parse(BookListInput, request, 'list');
    const query = [
      bookEntriesQuery(input.customerId, input.cadence),
      ...(input.needsEndUser === undefined ? [] : [`${EndUserChallengeKey.name} ${input.needsEndUser ? 'IS NOT NULL' : 'IS NULL'}`]),
    ].join(' AND ');
    try {
      const page = await visibilityPage(this.client, query, input.pageSize ?? 100, input.pageToken);
      const { entries, unreadable } = await entriesOfRows(this.client, input.customerId, page.rows);
      return { entries, ...(unreadable.length > 0 ? { unreadable } : {}), ...(page.nextPageToken ? { nextPageToken: page.nextPageToken } : {}) };
    } catch (error) {
      throw this.mapError(error);
    }
  }

  /** Logins enrolled (in one cadence, or all). */
  async count(request: { readonly customerId: string; readonly cadence?: string }): Promise<number> {
    const input = parse(BookListInput, request, 'count');
    const query = bookEntriesQuery(input.customerId, input.cadence);
    try {
      return (await this.client.workflow.count(query)).count;
    } catch (error) {
      throw this.mapError(error);
    }
  }

  /** Creates or replaces the Schedule that refreshes one cadence of a tenant's book (paused state kept unless given). */
  async schedule(request: BookScheduleArgs): Promise<BookScheduleSummary & { readonly created: boolean }> {
    const input = parse(BookScheduleInput, request, 'schedule');
    const scheduleId = bookScheduleId(input.customerId, input.cadence);
    const refreshInput = this.refreshInput(input.customerId, input.cadence, scheduleId, input.window, input.pageSize);
    const { spec, attributes, action, policies, note } = bookScheduleOptions(input, scheduleId, refreshInput, this.refreshTaskQueue, this.priority);
    let created = true;
    let paused = input.paused;
    try {
      await this.client.schedule.create({ scheduleId, spec, action, policies, state: { paused: input.paused, note }, typedSearchAttributes: attributes });
    } catch (error) {
      if (!(error instanceof ScheduleAlreadyRunning)) throw this.mapError(error);
      created = false;
      try {
        await this.client.schedule.getHandle(scheduleId).update((previous: ScheduleDescription) => {
          paused = request.paused === undefined ? previous.state.paused : input.paused;
          return { spec, action, policies, state: { paused, note }, typedSearchAttributes: attributes };
        });
      } catch (updateError) {
        throw this.mapError(updateError);
      }
    }
    // Just made: what was asked is what it is (a describe right after a create can be refused on a new server).
    return {
      scheduleId,
      customerId: input.customerId,
      cadence: input.cadence,
      when: cadenceArgsOf(input.when),
      window: refreshInput.window,
      pageSize: refreshInput.pageSize,
      paused,
      note,
      nextRunsAt: [],
      recentRuns: [],
      created,
    };
  }

  /** The book's Schedule with its upcoming and recent runs. */
  async describeSchedule(ref: BookRefArgs): Promise<BookScheduleSummary> {
    const { customerId, cadence } = parse(BookRef, ref, 'book');
    const scheduleId = bookScheduleId(customerId, cadence);
    try {
      return bookScheduleSummaryOf(scheduleId, customerId, cadence, await this.client.schedule.getHandle(scheduleId).describe());
    } catch (error) {
      if (error instanceof ScheduleNotFoundError) throw new BookRefreshNotFoundError(`schedule ${JSON.stringify(scheduleId)}`, { cause: error });
      throw this.mapError(error);
    }
  }

  /** Deletes the book's Schedule (a refresh running now goes on); 'none' when it had none. */
  async unschedule(ref: BookRefArgs): Promise<'deleted' | 'none'> {
    const { customerId, cadence } = parse(BookRef, ref, 'book');
    try {
      await this.client.schedule.getHandle(bookScheduleId(customerId, cadence)).delete();
      return 'deleted';
    } catch (error) {
      if (error instanceof ScheduleNotFoundError) return 'none';
      throw this.mapError(error);
    }
  }

  /**
   * Refreshes the book now, with its Schedule's window and page size if it has one. A refresh of the
   * book already running is returned instead (`started: false`): one at a time, as the Schedule's SKIP.
   * With `callback`, the refresh posts its counts there when it ends (the worker checks the URL against
   * the tenant's CALLBACK_URLS before each post: docs/pipelines.md).
   */
  async run(
    ref: BookRefArgs,
    options: {
      readonly window?: Partial<WindowBounds>;
      readonly pageSize?: number;
      readonly control?: BookRefreshInput['control'];
      readonly callback?: { readonly url: string };
    } = {},
  ): Promise<{ readonly refreshWorkflowId: string; readonly started: boolean }> {
    const { customerId, cadence } = parse(BookRef, ref, 'book');
    const running = (await this.refreshes({ customerId, cadence, limit: 1, running: true }))[0];
    if (running) return { refreshWorkflowId: running.refreshWorkflowId, started: false };
    let scheduled: BookRefreshInput | undefined;
    try {
      const action = (await this.client.schedule.getHandle(bookScheduleId(customerId, cadence)).describe()).action;
      if (action.type === 'startWorkflow') scheduled = action.args?.[0] as BookRefreshInput | undefined;
    } catch (error) {
      if (!(error instanceof ScheduleNotFoundError)) throw this.mapError(error);
    }
    const window = options.window ? parse(BookScheduleInput.shape.window, options.window, 'window') : scheduled?.window;
    const input: BookRefreshInput = {
      ...this.refreshInput(customerId, cadence, undefined, window, options.pageSize ?? scheduled?.pageSize),
      ...(options.control ? { control: options.control } : {}),
      ...(options.callback ? { callback: { url: parse(CallbackInput.shape.url, options.callback.url, 'callback.url') } } : {}),
    };
    const refreshWorkflowId = bookRefreshRunId(customerId, cadence, new Date());
    try {
      await this.client.workflow.start(BOOK_REFRESH_WORKFLOW_TYPE, {
        workflowId: refreshWorkflowId,
        taskQueue: this.refreshTaskQueue,
        args: [input],
        typedSearchAttributes: new TypedSearchAttributes(bookRefreshAttributes(customerId, cadence)),
        staticSummary: `Refresh of the ${cadence} book of ${customerId} (run by hand)`,
        priority: startPriority(this.priority, 'scheduled', customerId),
      });
    } catch (error) {
      throw this.mapError(error);
    }
    return { refreshWorkflowId, started: true };
  }

  /** Refreshes of a tenant's book, newest first. */
  async refreshes(filter: {
    readonly customerId: string;
    readonly cadence?: string;
    readonly limit?: number;
    readonly running?: boolean;
  }): Promise<BookRefreshSummary[]> {
    const input = parse(BookListInput, { customerId: filter.customerId, ...(filter.cadence ? { cadence: filter.cadence } : {}) }, 'refreshes');
    const limit = Math.min(Math.max(1, Math.trunc(filter.limit ?? 20)), 1000);
    return listRefreshes(this.client, this.address, input.customerId, input.cadence, filter.running, limit);
  }

  /**
   * Where a refresh is: done, in flight, the window and why, outcomes by kind, estimated end. An
   * ended refresh answers from its report (no worker has to replay it).
   */
  async progress(refreshWorkflowId: string): Promise<BookProgress> {
    return refreshProgress(this.client, this.address, refreshWorkflowId);
  }

  async pause(refreshWorkflowId: string, reason?: string): Promise<BookProgress> {
    return this.update(refreshWorkflowId, 'pause', (handle) => handle.executeUpdate(pauseBookUpdate, { args: [{ ...(reason ? { reason } : {}) }] }));
  }

  async resume(refreshWorkflowId: string): Promise<BookProgress> {
    return this.update(refreshWorkflowId, 'resume', (handle) => handle.executeUpdate(resumeBookUpdate, { args: [{}] }));
  }

  /** Starts no more connections and cancels those in flight; the report is still written. */
  async cancel(refreshWorkflowId: string, reason?: string): Promise<BookProgress> {
    return this.update(refreshWorkflowId, 'cancel', (handle) => handle.executeUpdate(cancelBookUpdate, { args: [{ ...(reason ? { reason } : {}) }] }));
  }

  /** Pins the window at `{ size }`, or `{ unpin: true }` gives it back to the controller. */
  async resize(refreshWorkflowId: string, request: ResizeArgs): Promise<BookProgress> {
    const input = parse(ResizeInput, request, 'resize');
    return this.update(refreshWorkflowId, 'resize', (handle) => handle.executeUpdate(resizeBookUpdate, { args: [input] }));
  }

  /** The night's summary of a refresh that has ended; BookReportNotReadyError while it runs. */
  async report(refreshWorkflowId: string): Promise<BookReport> {
    return refreshReport(this.client, this.address, refreshWorkflowId);
  }

  /** One page of a refresh's per-login outcomes (pages count from 1; the report lists them). */
  async reportPage(refreshWorkflowId: string, page: number): Promise<BookReportPage> {
    return refreshReportPage(this.client, this.address, refreshWorkflowId, page);
  }

  /**
   * Moves a tenant's per-login refresh Schedules into its book: each login is enrolled with its
   * schedule's session, products and timing, then its schedule is deleted (kept with `keepSchedules`,
   * and then both refresh it). Logins that need their end user are left with their schedule.
   */
  async migrateSchedules(
    request: { readonly customerId: string; readonly cadence?: string; readonly keepSchedules?: boolean },
    schedules: RefreshSchedules,
  ): Promise<MigrationOutcome> {
    const { customerId, cadence } = parse(BookRef, { customerId: request.customerId, ...(request.cadence ? { cadence: request.cadence } : {}) }, 'migration');
    return migrateSchedules((enrolment) => this.enrol(enrolment), schedules, customerId, cadence, request.keepSchedules);
  }

  private refreshInput(
    customerId: string,
    cadence: string,
    scheduleId: string | undefined,
    window: Partial<WindowBounds> | undefined,
    pageSize: number | undefined,
  ): BookRefreshInput {
    const bounds = { ...(this.defaults.window ?? {}), ...(window ?? {}) };
    const size = pageSize ?? this.defaults.pageSize;
    return {
      customerId,
      cadence,
      ...(scheduleId ? { scheduleId } : {}),
      ...(Object.keys(bounds).length > 0 ? { window: bounds } : {}),
      ...(size === undefined ? {} : { pageSize: size }),
    };
  }

  private update(
    refreshWorkflowId: string,
    request: BookRefreshRefusedError['request'],
    act: (handle: WorkflowHandle) => Promise<BookProgress>,
  ): Promise<BookProgress> {
    return updateRefresh(this.client, this.address, refreshWorkflowId, request, act);
  }

  private mapError(error: unknown, workflowId?: string): Error {
    return bookErrorOf(this.address, error, workflowId);
  }
}
