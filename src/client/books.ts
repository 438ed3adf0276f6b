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
  WorkflowFailedError,
  ScheduleNotFoundError,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
  type Client,
  type ScheduleDescription,
  type ScheduleOptions,
  type WorkflowHandle,
  type WorkflowStartOptions,
} from '@temporalio/client';
import { TypedSearchAttributes } from '@temporalio/common';
import { decodeFromPayloadsAtIndex, decodeMapFromPayloads } from '../sdk/internals.js';
import type { z } from 'zod';
import { describeIssues } from '../aggregator/schemas.js';
import {
  BOOK_ENTRY_MEMO,
  BOOK_ENTRY_WORKFLOW_TYPE,
  BOOK_REFRESH_WORKFLOW_TYPE,
  bookEntryLoginOf,
  bookEntryWorkflowId,
  bookEntriesQuery,
  bookProgressQuery,
  bookReportPageId,
  bookRefreshAttributes,
  bookRefreshRunId,
  bookRefreshesQuery,
  bookScheduleId,
  cancelBookUpdate,
  enrolSignal,
  leaveBookSignal,
  pauseBookUpdate,
  resizeBookUpdate,
  resumeBookUpdate,
  type BookEnrolment,
  type BookEntryFlag,
  type BookProgress,
  type BookRefreshInput,
  type BookReport,
  type BookReportPage,
} from '../contract/book/book-definitions.js';
import { type WindowBounds } from '../contract/window/window-definitions.js';
import type { ConnectionInput } from '../contract/connection/connection-input.js';
import type { ConnectionResult } from '../contract/connection/connection-definitions.js';
import { DEFAULT_PRIORITY_POLICY, startPriority, type PriorityPolicy } from '../contract/priority.js';
import { BookCadenceKey, CustomerIdKey, EndUserChallengeKey, LoginIdKey } from '../contract/search-attributes.js';
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
import {
  BookEntryNotFoundError,
  BookRefreshNotFoundError,
  BookRefreshRefusedError,
  BookReportNotReadyError,
  InvalidBookRequestError,
  RefreshNotUnattendedError,
} from './errors.js';
import { clientErrorOf } from './temporal-errors.js';
import { cadenceArgsOf, formatCadenceDuration, parseLoginRef, type LoginRef, type RefreshCadenceArgs } from './refresh-schedule-input.js';
import type { EndUserFlag, RefreshSchedules } from './schedules.js';
import { unreadableQueryError } from './unreadable-history.js';
import { listedExecutions, visibilityPage } from '../temporal/visibility-rows.js';

/** A login's place in the book, as the pipeline sees it. */
export interface BookEntrySummary extends BookEnrolment {
  readonly workflowId: string;
  /** Set while the login is left out of refreshes: it needs its end user. */
  readonly flag?: BookEntryFlag | undefined;
}

export interface BookPageOfEntries {
  readonly entries: readonly BookEntrySummary[];
  /** Rows of the page whose record this client cannot open (sealed with a key not of this tenant's, or by none), with why; absent when none. */
  readonly unreadable?: readonly { readonly workflowId: string; readonly problem: string }[] | undefined;
  /** Pass it back for the next page; absent on the last. */
  readonly nextPageToken?: string | undefined;
}

export interface BookScheduleSummary {
  readonly scheduleId: string;
  readonly customerId: string;
  readonly cadence: string;
  readonly when: RefreshCadenceArgs;
  readonly window?: Partial<WindowBounds> | undefined;
  readonly pageSize?: number | undefined;
  readonly paused: boolean;
  readonly note?: string | undefined;
  readonly nextRunsAt: readonly string[];
  readonly recentRuns: readonly { readonly workflowId: string; readonly scheduledAt: string }[];
}

/** One refresh of a book as visibility knows it. */
export interface BookRefreshSummary {
  readonly refreshWorkflowId: string;
  readonly customerId: string;
  readonly cadence: string;
  /** RUNNING, COMPLETED, FAILED, CANCELLED, TERMINATED, ... */
  readonly executionStatus: string;
  readonly startedAt: string;
  readonly closedAt?: string | undefined;
  /** The workflow that started it as its child (a Nexus relay), if any; absent for the Schedule's and those run by hand. */
  readonly parentWorkflowId?: string | undefined;
}

export interface MigrationOutcome {
  /** Logins enrolled from their per-login Schedules. */
  readonly enrolled: readonly string[];
  /** Per-login Schedules deleted after their login was enrolled (none with `keepSchedules`). */
  readonly schedulesDeleted: number;
  /** Schedules left as they were, and why (a login that needs its end user, a schedule of another kind). */
  readonly skipped: readonly { readonly scheduleId: string; readonly reason: string }[];
}

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

/** A missed nightly run is still taken within this window (then SKIP applies). */
const CATCHUP_WINDOW = '1 hour';

function parse<T extends z.ZodType>(schema: T, value: unknown, what: string): z.infer<T> {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new InvalidBookRequestError(`${what}: ${describeIssues(parsed.error)}`, { cause: parsed.error });
  return parsed.data;
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
    const enrolment: BookEnrolment = {
      customerId: input.customerId,
      loginId: input.loginId,
      cadence: input.cadence,
      session: input.session,
      products: input.products,
      ...(input.timing ? { timing: input.timing } : {}),
      enrolledAt: new Date().toISOString(),
    };
    const workflowId = bookEntryWorkflowId(input.customerId, input.loginId);
    try {
      await this.client.workflow.signalWithStart(BOOK_ENTRY_WORKFLOW_TYPE, {
        workflowId,
        taskQueue: this.taskQueue,
        args: [enrolment],
        signal: enrolSignal,
        signalArgs: [enrolment],
        memo: { [BOOK_ENTRY_MEMO.enrolment]: enrolment },
        typedSearchAttributes: new TypedSearchAttributes([
          { key: CustomerIdKey, value: input.customerId },
          { key: LoginIdKey, value: input.loginId },
          { key: BookCadenceKey, value: input.cadence },
        ]),
        staticSummary: `Login ${input.loginId} in the ${input.cadence} book of ${input.customerId}`,
        // An entry only waits for messages: ahead of connections so an enrolment lands at once.
        priority: startPriority(this.priority, 'pipeline', input.customerId),
      });
    } catch (error) {
      throw this.mapError(error);
    }
    return { ...enrolment, workflowId };
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
    const handle = this.client.workflow.getHandle(workflowId);
    let result: ConnectionResult;
    let input: ConnectionInput;
    try {
      result = (await handle.result()) as ConnectionResult;
      const started = (await handle.fetchHistory()).events?.[0]?.workflowExecutionStartedEventAttributes;
      input = await decodeFromPayloadsAtIndex<ConnectionInput>(this.client.options.loadedDataConverter, 0, started?.input?.payloads, {
        namespace: this.client.options.namespace,
        workflowId,
      });
    } catch (error) {
      if (error instanceof WorkflowFailedError)
        throw new InvalidBookRequestError(
          `connection ${workflowId} did not complete (${error.cause?.message ?? error.message}): there is no saved login to enrol`,
          { cause: error },
        );
      throw this.mapError(error, workflowId);
    }
    const { evenIfFlagged, ...chosen } = options;
    return this.enrol(
      {
        customerId: result.customerId,
        loginId: result.loginId,
        session: input.session.kind === 'refresh' ? 'refresh' : 'cached',
        products: input.products,
        ...(input.timing ? { timing: { pollIntervalMs: input.timing.pollIntervalMs, pollTimeoutMs: input.timing.pollTimeoutMs } } : {}),
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
      const entries: BookEntrySummary[] = [];
      const unreadable: { workflowId: string; problem: string }[] = [];
      for (const execution of page.rows) {
        const workflowId = execution.execution?.workflowId ?? '';
        // One row that cannot be opened is named, not allowed to fail the page (the rest are the tenant's).
        if (bookEntryLoginOf(workflowId, input.customerId) === undefined) {
          unreadable.push({ workflowId, problem: `its workflow id is not one of ${input.customerId}'s book entries` });
          continue;
        }
        try {
          const memo = await decodeMapFromPayloads(this.client.options.loadedDataConverter, execution.memo?.fields ?? undefined, {
            namespace: this.client.options.namespace,
            workflowId,
          });
          const enrolment = memo?.[BOOK_ENTRY_MEMO.enrolment] as Partial<BookEnrolment> | undefined;
          if (typeof enrolment !== 'object' || enrolment === null || typeof enrolment.products !== 'object' || enrolment.products === null) {
            unreadable.push({ workflowId, problem: 'it has no enrolment record' });
            continue;
          }
          entries.push(entryOf(workflowId, memo));
        } catch (error) {
          unreadable.push({ workflowId, problem: (error instanceof Error ? error.message : String(error)).slice(0, 300) });
        }
      }
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
    const when = input.when;
    const spec: ScheduleOptions['spec'] =
      when.kind === 'daily'
        ? { calendars: [{ hour: when.at.hour, minute: when.at.minute }], timezone: when.timeZone, jitter: when.jitter }
        : { intervals: [{ every: when.every }], jitter: when.jitter };
    const refreshInput = this.refreshInput(input.customerId, input.cadence, scheduleId, input.window, input.pageSize);
    const attributes = new TypedSearchAttributes(bookRefreshAttributes(input.customerId, input.cadence));
    // SDK 1.24's action type omits `priority`, which its encoder reads (schedule-helpers compilePriority).
    const action: ScheduleOptions['action'] & Pick<WorkflowStartOptions, 'priority'> = {
      type: 'startWorkflow',
      workflowType: BOOK_REFRESH_WORKFLOW_TYPE,
      // Temporal appends each run's scheduled time: the night's id.
      workflowId: scheduleId,
      taskQueue: this.refreshTaskQueue,
      args: [refreshInput],
      typedSearchAttributes: attributes,
      staticSummary: `Refresh of the ${input.cadence} book of ${input.customerId}`,
      priority: startPriority(this.priority, 'scheduled', input.customerId),
    };
    // SKIP: a refresh still running when the next is due makes that one skip (its report counts it).
    const policies: ScheduleOptions['policies'] = { overlap: 'SKIP', catchupWindow: CATCHUP_WINDOW, pauseOnFailure: false };
    const note = input.note ?? `${input.cadence} refresh of the book of ${input.customerId}`;
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
      when: cadenceArgsOf(when),
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
      const description = await this.client.schedule.getHandle(scheduleId).describe();
      const action = description.action;
      const input = action.type === 'startWorkflow' ? (action.args?.[0] as BookRefreshInput | undefined) : undefined;
      const interval = description.spec.intervals?.[0];
      const calendar = description.spec.calendars?.[0];
      const hour = calendar?.hour[0]?.start ?? 0;
      const minute = calendar?.minute[0]?.start ?? 0;
      const jitter = Number(description.spec.jitter ?? 0);
      const when: RefreshCadenceArgs = interval
        ? { kind: 'interval', every: formatCadenceDuration(Number(interval.every)), jitter: formatCadenceDuration(jitter) }
        : {
            kind: 'daily',
            at: `${String(hour).padStart(2, '0')}:${String(minute).padStart(2, '0')}`,
            timeZone: description.spec.timezone ?? 'UTC',
            jitter: formatCadenceDuration(jitter),
          };
      return {
        scheduleId,
        customerId,
        cadence,
        when,
        window: input?.window,
        pageSize: input?.pageSize,
        paused: description.state.paused,
        note: description.state.note,
        nextRunsAt: description.info.nextActionTimes.map((time) => time.toISOString()),
        recentRuns: description.info.recentActions.map((run) => ({ workflowId: run.action.workflow.workflowId, scheduledAt: run.scheduledAt.toISOString() })),
      };
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
    const query = bookRefreshesQuery(input.customerId, input.cadence, filter.running);
    const out: BookRefreshSummary[] = [];
    try {
      // Without memos: a listing needs none, and one this process cannot open must not fail it.
      for await (const info of listedExecutions(this.client, query, Math.min(limit, 100))) {
        // A refresh that continued as new is listed once per run: the current run stands for it.
        if (info.status.name === 'CONTINUED_AS_NEW' || out.some((known) => known.refreshWorkflowId === info.workflowId)) continue;
        out.push({
          refreshWorkflowId: info.workflowId,
          customerId: info.typedSearchAttributes.get(CustomerIdKey) ?? input.customerId,
          cadence: info.typedSearchAttributes.get(BookCadenceKey) ?? input.cadence ?? '',
          executionStatus: info.status.name,
          startedAt: info.startTime.toISOString(),
          closedAt: info.closeTime?.toISOString(),
          ...(info.parentExecution?.workflowId ? { parentWorkflowId: info.parentExecution.workflowId } : {}),
        });
        if (out.length >= limit) break;
      }
    } catch (error) {
      throw this.mapError(error);
    }
    return out;
  }

  /**
   * Where a refresh is: done, in flight, the window and why, outcomes by kind, estimated end. An
   * ended refresh answers from its report (no worker has to replay it).
   */
  async progress(refreshWorkflowId: string): Promise<BookProgress> {
    const handle = this.handle(refreshWorkflowId);
    try {
      return await handle.query(bookProgressQuery);
    } catch (error) {
      const ended = await this.endedProgress(handle).catch(() => undefined);
      if (ended) return ended;
      throw (await unreadableQueryError(this.client, refreshWorkflowId, error)) ?? this.mapError(error, refreshWorkflowId);
    }
  }

  private async endedProgress(handle: WorkflowHandle): Promise<BookProgress | undefined> {
    if ((await handle.describe()).status.name === 'RUNNING') return undefined;
    const { endedAt, pages: _pages, skippedWhileRunning: _skipped, windowChanges: _changes, ...summary } = (await handle.result()) as BookReport;
    return { ...summary, inFlight: 0, updatedAt: endedAt };
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
    const handle = this.handle(refreshWorkflowId);
    try {
      const description = await handle.describe();
      if (description.status.name === 'RUNNING') throw new BookReportNotReadyError(refreshWorkflowId);
      return (await handle.result()) as BookReport;
    } catch (error) {
      throw this.mapError(error, refreshWorkflowId);
    }
  }

  /** One page of a refresh's per-login outcomes (pages count from 1; the report lists them). */
  async reportPage(refreshWorkflowId: string, page: number): Promise<BookReportPage> {
    if (!Number.isInteger(page) || page < 1) throw new InvalidBookRequestError(`page: must be a whole number from 1, got ${JSON.stringify(page)}`);
    const pageId = bookReportPageId(refreshWorkflowId, page);
    try {
      return (await this.client.workflow.getHandle(pageId).result()) as BookReportPage;
    } catch (error) {
      if (error instanceof WorkflowNotFoundError) throw await this.missingPage(refreshWorkflowId, page, error);
      throw this.mapError(error, pageId);
    }
  }

  /** Why a report page is not there: its refresh is still running (not written yet), or no such page or refresh. */
  private async missingPage(refreshWorkflowId: string, page: number, cause: WorkflowNotFoundError): Promise<Error> {
    try {
      const description = await this.handle(refreshWorkflowId).describe();
      if (description.status.name === 'RUNNING') return new BookReportNotReadyError(refreshWorkflowId, { cause, page });
    } catch (error) {
      return this.mapError(error, refreshWorkflowId);
    }
    return this.mapError(cause, bookReportPageId(refreshWorkflowId, page));
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
    const enrolled: string[] = [];
    const skipped: { scheduleId: string; reason: string }[] = [];
    let schedulesDeleted = 0;
    for (const summary of await schedules.list({ customerId, limit: 1000 })) {
      try {
        await this.enrol({ customerId, loginId: summary.loginId, cadence, session: summary.session, products: summary.products });
      } catch (error) {
        if (!(error instanceof RefreshNotUnattendedError || error instanceof InvalidBookRequestError)) throw error;
        skipped.push({ scheduleId: summary.scheduleId, reason: error.message });
        continue;
      }
      enrolled.push(summary.loginId);
      if (!request.keepSchedules && (await schedules.delete({ customerId, loginId: summary.loginId })) === 'deleted') schedulesDeleted += 1;
    }
    return { enrolled, schedulesDeleted, skipped };
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

  private handle(refreshWorkflowId: string): WorkflowHandle {
    if (typeof refreshWorkflowId !== 'string' || !refreshWorkflowId.startsWith('book-')) {
      throw new InvalidBookRequestError(
        `refresh id: must be a book refresh's workflow id (book-<customerId>:<cadence>-<time>), got ${JSON.stringify(String(refreshWorkflowId).slice(0, 100))}`,
      );
    }
    return this.client.workflow.getHandle(refreshWorkflowId);
  }

  private async update(
    refreshWorkflowId: string,
    request: BookRefreshRefusedError['request'],
    act: (handle: WorkflowHandle) => Promise<BookProgress>,
  ): Promise<BookProgress> {
    const handle = this.handle(refreshWorkflowId);
    try {
      return await act(handle);
    } catch (error) {
      if (error instanceof WorkflowUpdateFailedError)
        throw new BookRefreshRefusedError(refreshWorkflowId, request, error.cause?.message ?? error.message, { cause: error });
      // An update to a closed workflow is answered "not found": say that it has ended, if it has.
      if (error instanceof WorkflowNotFoundError) {
        const status = await handle.describe().then(
          (description) => description.status.name,
          () => undefined,
        );
        if (status !== undefined && status !== 'RUNNING')
          throw new BookRefreshRefusedError(refreshWorkflowId, request, `the refresh has ended (${status})`, { cause: error });
      }
      throw this.mapError(error, refreshWorkflowId);
    }
  }

  private mapError(error: unknown, workflowId?: string): Error {
    return clientErrorOf(error, this.address, (known) =>
      known instanceof WorkflowNotFoundError && workflowId !== undefined
        ? new BookRefreshNotFoundError(JSON.stringify(workflowId), { cause: known })
        : undefined,
    );
  }
}

function entryOf(workflowId: string, memo: Record<string, unknown> | undefined): BookEntrySummary {
  const enrolment = memo?.[BOOK_ENTRY_MEMO.enrolment] as BookEnrolment;
  const flag = memo?.[BOOK_ENTRY_MEMO.flag] as BookEntryFlag | undefined;
  return { ...enrolment, workflowId, ...(flag ? { flag } : {}) };
}
