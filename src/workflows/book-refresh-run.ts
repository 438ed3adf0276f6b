/**
 * One run of a book refresh (one page of the book): the state it owns, what operators may do to it,
 * and its sequence. book-refresh.ts wires it to Temporal (handlers, continue-as-new); the window's
 * rules are book-window.ts's. Deterministic code only.
 *
 * Two rules keep replay exact, and this class is where they hold:
 * - **Time is read from one clock** (`SteadyClock`): after a local activity it keeps the time from
 *   before it, and each entry point from history (an update, a child's start or end, a timer) wakes
 *   it first, so a reading is the same in a run and on replay.
 * - **No local activity runs from a child's completion:** whether one is still in flight is not the
 *   same on replay (its result is in history at once), so nothing may hang on it. The refresh's own
 *   sequence (waiting for room, draining) makes every local-activity call; a child that ended
 *   `Terminated` waits there to be told forgotten from failed.
 */
import {
  CancellationScope,
  ChildWorkflowFailure,
  ParentClosePolicy,
  WorkflowIdReusePolicy,
  allHandlersFinished,
  condition,
  getExternalWorkflowHandle,
  isCancellation,
  log,
  proxyLocalActivities,
  setCurrentDetails,
  startChild,
  upsertMemo,
  workflowInfo,
  type WorkflowInfo,
} from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import type { BookActivities, BookPageEntry } from '../activities/book-activities.js';
import {
  BOOK_LOGIN_WORKFLOW_TYPE,
  BOOK_REFRESH_MEMO,
  WINDOW_LIMITS,
  bookConnectionWorkflowId,
  bookEntryWorkflowId,
  bookLoginWorkflowId,
  bookReportPageId,
  flagEntrySignal,
  type BookCounts,
  type BookOutcome,
  type BookProgress,
  type BookRefreshCarry,
  type BookRefreshInput,
  type BookRefreshStatus,
  type BookReport,
  type PublishedWindow,
} from '../contract/book-definitions.js';
import { CustomerIdKey, LoginIdKey } from '../contract/search-attributes.js';
import { EMPTY_COUNTS, countOutcome } from './book-counts.js';
import { failureTypeOf, type bookLoginWorkflow } from './book-login.js';
import { bookMetrics } from './book-metrics.js';
import type { bookReportPageWorkflow } from './book-report-page.js';
import { nightOf, type BookRefreshSettings } from './book-refresh-input.js';
import { WindowController } from './book-window.js';
import { SteadyClock } from './steady-clock.js';

/** Reads of Temporal only (visibility, describe): quick, and outside the request budget. */
const book = proxyLocalActivities<BookActivities>({
  startToCloseTimeout: '1m',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s' },
});

/** Logins whose enrolment is checked in one visibility query. */
const ENROLMENT_CHECK_CHUNK = 50;

type RefreshEntry = Extract<BookPageEntry, { kind: 'refresh' }>;
type OutcomeBase = Pick<BookOutcome, 'loginId' | 'workflowId' | 'durationMs'>;

/** How a run ends: its report, or the next page's run to continue as. */
export type BookRefreshEnd = { readonly report: BookReport } | { readonly next: BookRefreshCarry };

export class BookRefreshRun {
  private readonly clock = new SteadyClock();
  private readonly info: WorkflowInfo = workflowInfo();
  private readonly window: WindowController;
  private readonly metrics: ReturnType<typeof bookMetrics>;
  private readonly weight: number;
  private readonly night: string;
  private readonly startedAt: string;
  private readonly page: number;
  private readonly pages: string[];
  private counts: BookCounts;
  private started: number;
  private drainMs: number;
  private pausedMs: number;
  private paused: boolean;
  private pausedSince: number | undefined;
  private total: number | undefined;
  private cancelled: string | undefined;
  private status: BookRefreshStatus;
  private readonly inFlight = new Map<string, { readonly loginId: string; readonly askedAt: number }>();
  private readonly outcomes: BookOutcome[] = [];
  /** Children that ended `Terminated`: forgotten (left the book) or failed, told from the refresh's own sequence. */
  private readonly terminated: OutcomeBase[] = [];
  /** Children in their own scope: cancelling the refresh cancels them (ParentClosePolicy would too, but only once the parent closes). */
  private readonly children = new CancellationScope();
  private published: PublishedWindow | undefined;
  private publishedAt = Number.NEGATIVE_INFINITY;
  private lastThrottleCheck = Number.NEGATIVE_INFINITY;
  private lastFleetCheck = Number.NEGATIVE_INFINITY;
  /** The page's logins that can start, and how far the run got (a cancellation reports the rest). */
  private refreshes: RefreshEntry[] = [];
  private index = 0;

  constructor(
    private readonly input: BookRefreshInput,
    private readonly settings: BookRefreshSettings,
  ) {
    const carried = input.carried;
    const { customerId, cadence } = settings;
    this.night = carried?.night ?? nightOf(this.info.workflowId, customerId, cadence, this.info.startTime);
    this.window = new WindowController(settings.bounds, settings.control, carried?.window);
    this.weight = this.info.priority?.fairnessWeight ?? 1;
    this.metrics = bookMetrics(customerId, cadence);
    this.startedAt = carried?.startedAt ?? this.clock.iso();
    this.pages = [...(carried?.pages ?? [])];
    this.page = carried?.page ?? 1;
    this.counts = carried?.counts ?? EMPTY_COUNTS;
    this.started = carried?.started ?? 0;
    this.drainMs = carried?.drainMs ?? 0;
    this.pausedMs = carried?.pausedMs ?? 0;
    this.paused = carried?.paused ?? false;
    this.pausedSince = this.paused ? this.clock.now() : undefined;
    this.total = carried?.total;
    this.status = this.paused ? 'paused' : 'running';
  }

  // ---- What operators see and do (the query and the updates) ----

  progress(): BookProgress {
    const now = this.clock.now();
    const { counts, total, status } = this;
    const elapsed = now - Date.parse(this.startedAt) - this.pausedMs - (this.pausedSince === undefined ? 0 : now - this.pausedSince);
    const left = total === undefined ? undefined : Math.max(0, total - counts.done);
    const estimatedEnd = left !== undefined && counts.done > 0 && elapsed > 0 && status !== 'completed' && status !== 'cancelled' ? new Date(now + (left * elapsed) / counts.done).toISOString() : undefined;
    return {
      customerId: this.settings.customerId,
      cadence: this.settings.cadence,
      refreshWorkflowId: this.info.workflowId,
      night: this.night,
      status,
      startedAt: this.startedAt,
      total,
      page: this.page,
      inFlight: this.inFlight.size,
      counts,
      window: this.window.view,
      started: this.started,
      drainMs: this.drainMs,
      pausedMs: this.pausedMs + (this.pausedSince === undefined ? 0 : now - this.pausedSince),
      estimatedEnd,
      updatedAt: new Date(now).toISOString(),
    };
  }

  /** Why an update that needs a live refresh is refused now; undefined when it may go ahead. */
  refusal(update: 'pause' | 'resume' | 'cancel' | 'resize'): string | undefined {
    const ended = this.status === 'completed' || this.status === 'cancelled';
    if (update === 'cancel' || update === 'resize') return ended ? `the refresh has ${this.status}: nothing to ${update}` : undefined;
    return ended || this.cancelled ? `the refresh is ${this.cancelled ? 'being cancelled' : this.status}: nothing to ${update}` : undefined;
  }

  pause(reason: string | undefined): BookProgress {
    this.clock.woke();
    if (!this.paused && !this.cancelled) {
      this.paused = true;
      this.pausedSince = this.clock.now();
      this.status = 'paused';
      log.info('book refresh paused', { customerId: this.settings.customerId, cadence: this.settings.cadence, reason });
      this.publishState();
    }
    return this.progress();
  }

  resume(): BookProgress {
    this.clock.woke();
    if (this.paused) {
      this.paused = false;
      this.pausedMs += this.clock.now() - (this.pausedSince ?? this.clock.now());
      this.pausedSince = undefined;
      this.status = this.cancelled ? 'cancelling' : 'running';
      this.publishState();
    }
    return this.progress();
  }

  cancel(reason: string | undefined): BookProgress {
    this.clock.woke();
    this.cancelled ??= String(reason ?? 'cancelled by an operator').slice(0, 300);
    this.status = 'cancelling';
    this.children.cancel();
    this.publishState();
    return this.progress();
  }

  /** An operator's window size, or back to the controller. */
  resize(request: { readonly size?: number; readonly unpin?: boolean }): BookProgress {
    this.clock.woke();
    if (request.unpin) this.window.unpin(this.clock.now());
    else this.window.pin(request.size as number, this.clock.now());
    this.publishState();
    return this.progress();
  }

  /** Why a resize request is malformed; undefined when it is well formed. */
  static resizeProblem(request: { readonly size?: number; readonly unpin?: boolean } | undefined): string | undefined {
    if (request?.unpin === true && request.size === undefined) return undefined;
    const size = request?.size;
    if (Number.isInteger(size) && (size as number) >= WINDOW_LIMITS.min && (size as number) <= WINDOW_LIMITS.max) return undefined;
    return `size must be a whole number from ${WINDOW_LIMITS.min} to ${WINDOW_LIMITS.max} (or unpin: true alone), got ${JSON.stringify(size)}`;
  }

  // ---- The run's sequence ----

  /** Reads the page, starts its logins through the window, drains, writes the report page; then the report or the next page. */
  async run(): Promise<BookRefreshEnd> {
    const { customerId, cadence, pageSize, scheduleId } = this.settings;
    const carried = this.input.carried;
    this.publishState();
    try {
      if (!carried) {
        this.total = await this.clock.local(() => book.countBook({ customerId, cadence }));
        log.info('book refresh started', { customerId, cadence, night: this.night, total: this.total });
      }
      const skippedAtStart = carried ? carried.skippedAtStart : scheduleId ? ((await this.clock.local(() => book.scheduleSkips({ scheduleId }))) ?? undefined) : undefined;
      const read = await this.clock.local(() => book.readBookPage({ customerId, cadence, pageSize, pageToken: carried?.pageToken }));
      await this.lookAround();
      this.refreshes = [];
      for (const entry of read.entries) {
        if (entry.kind === 'flagged') this.record({ loginId: entry.loginId, outcome: 'needs-end-user', problem: entry.flag });
        else if (entry.kind === 'malformed') {
          log.warn('book entry skipped: malformed record', { loginId: entry.loginId, problem: entry.problem });
          this.record({ loginId: entry.loginId, outcome: 'malformed', problem: entry.problem });
        } else this.refreshes.push(entry);
      }
      await this.startPage();
      await this.drain();
      await this.writeReportPage();
      if (read.nextPageToken && !this.cancelled) {
        // Updates in flight answer before the run hands over (a cancellation meanwhile still ends it here, with its report).
        await condition(allHandlersFinished);
        log.info('book refresh: page done, continuing as new', { customerId, cadence, page: this.page, done: this.counts.done });
        return { next: this.carry(read.nextPageToken, skippedAtStart) };
      }
      return { report: await this.finishReport(skippedAtStart) };
    } catch (error) {
      if (!isCancellation(error)) throw error;
      // Cancelled as a workflow (Web UI, `temporal workflow cancel`): the children were cancelled with
      // it; let them end, keep the page's outcomes and the report, as the cancel update does.
      this.cancelled ??= 'the refresh workflow was cancelled';
      this.status = 'cancelling';
      return await CancellationScope.nonCancellable(async () => {
        this.reportNotStarted();
        await this.drain();
        await this.writeReportPage();
        return { report: await this.finishReport(carried?.skippedAtStart) };
      });
    }
  }

  /** Starts each of the page's logins still enrolled as the window makes room, until the page is done or the refresh cancelled. */
  private async startPage(): Promise<void> {
    const enrolled = new Set<string>();
    let checkedUpTo = 0;
    for (; this.index < this.refreshes.length; this.index += 1) {
      await this.waitForRoom();
      if (this.cancelled) break;
      if (this.index >= checkedUpTo) {
        // A login forgotten since the page was read is skipped: checked in chunks, just before they start.
        const chunk = this.refreshes.slice(this.index, this.index + Math.min(ENROLMENT_CHECK_CHUNK, Math.max(this.window.size, 1)));
        for (const loginId of await this.clock.local(() => book.stillEnrolled({ customerId: this.settings.customerId, loginIds: chunk.map((entry) => entry.loginId) }))) enrolled.add(loginId);
        checkedUpTo = this.index + chunk.length;
      }
      const entry = this.refreshes[this.index] as RefreshEntry;
      if (!enrolled.has(entry.loginId)) {
        this.record({ loginId: entry.loginId, outcome: 'forgotten', problem: 'left the book after its page was read' });
        continue;
      }
      this.launch(entry);
    }
    this.reportNotStarted();
  }

  /** Logins of the page a cancellation kept from starting are reported as such (once). */
  private reportNotStarted(): void {
    for (const entry of this.refreshes.slice(this.index)) this.record({ loginId: entry.loginId, outcome: 'cancelled', problem: `not started: ${this.cancelled ?? 'cancelled'}` });
    this.index = this.refreshes.length;
  }

  private launch(entry: RefreshEntry): void {
    const { customerId, cadence } = this.settings;
    const { night, info } = this;
    const workflowId = bookConnectionWorkflowId(customerId, entry.loginId, night);
    const askedAt = this.clock.now();
    this.inFlight.set(workflowId, { loginId: entry.loginId, askedAt });
    this.started += 1;
    const ended = () => {
      this.clock.woke();
      return { loginId: entry.loginId, workflowId, durationMs: this.clock.now() - askedAt };
    };
    void this.children
      .run(async () => {
        // Through the login's own workflow, which answers only how the connection ended (book-login.ts).
        const login = await startChild<typeof bookLoginWorkflow>(BOOK_LOGIN_WORKFLOW_TYPE, {
          workflowId: bookLoginWorkflowId(customerId, entry.loginId, night),
          args: [{ connectionWorkflowId: workflowId, input: entry.input, summary: `Book refresh (${cadence}) of login ${entry.loginId}, night ${night}` }],
          // Ends with the refresh only if the refresh is terminated; a refresh that continues as new has drained first.
          parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
          // One per login and night, even if the login shows up twice.
          workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
          typedSearchAttributes: [
            { key: CustomerIdKey, value: customerId },
            { key: LoginIdKey, value: entry.loginId },
          ],
          // The refresh's own priority (the scheduled class, the tenant's fairness key and weight).
          ...(info.priority ? { priority: info.priority } : {}),
          staticSummary: `Login ${entry.loginId} in the ${cadence} refresh of ${customerId}, night ${night}`,
        });
        this.clock.woke();
        this.window.observeStart(this.clock.now() - askedAt);
        return login.result();
      })
      .then(
        async (end) => {
          const base = ended();
          if (end.ended === 'completed') this.finish(base, { ...base, outcome: 'refreshed' }, end.pollWaitMs);
          else if (end.ended === 'duplicate') this.finish(base, { ...base, outcome: 'duplicate' });
          else await this.finishFailed(base, end.failureType);
        },
        (error: unknown) => {
          const base = ended();
          // The login's workflow itself: its id taken this night, cancelled with the refresh, or ended by hand.
          if (error instanceof WorkflowExecutionAlreadyStartedError) this.finish(base, { ...base, outcome: 'duplicate' });
          else if (isCancellation(error) || (error instanceof ChildWorkflowFailure && isCancellation(error.cause))) this.finish(base, { ...base, outcome: 'cancelled' });
          else this.finish(base, { ...base, outcome: 'failed', failureType: error instanceof ChildWorkflowFailure ? failureTypeOf(error) : 'Unknown' });
        },
      )
      .catch((error: unknown) => {
        // Only a bug lands here (every outcome is caught above): keep the window moving, and say so.
        log.error('book refresh: a child outcome could not be recorded', { workflowId, error: error instanceof Error ? error.message : String(error) });
        if (this.inFlight.delete(workflowId)) this.record({ loginId: entry.loginId, outcome: 'failed', workflowId, failureType: 'Unknown' });
      });
  }

  /**
   * A child ended: out of the window, its time observed, its outcome recorded (`undefined`: told
   * later, from the refresh's own sequence). Only a child that completed says how crowded the fleet is.
   */
  private finish(base: OutcomeBase, outcome: BookOutcome | undefined, pollWaitMs?: number): void {
    const workflowId = base.workflowId ?? '';
    const windowFull = this.inFlight.size >= this.window.size;
    this.inFlight.delete(workflowId);
    const durationMs = base.durationMs ?? 0;
    const timed = outcome?.outcome === 'refreshed';
    this.window.observeFinish(durationMs, timed, this.clock.now(), windowFull, durationMs - (pollWaitMs ?? 0));
    if (outcome) this.record(outcome);
  }

  /** A connection that did not complete: needing its end user (its entry flagged), cancelled, terminated (told later) or failed. */
  private async finishFailed(base: OutcomeBase, failureType: string): Promise<void> {
    if (failureType === 'Cancelled') return this.finish(base, { ...base, outcome: 'cancelled' });
    if (failureType === 'Terminated') {
      // A forget terminates the login's running connections; whether this one was is read from the book, later.
      this.terminated.push(base);
      return this.finish(base, undefined);
    }
    if (failureType === 'EndUserActionRequired') {
      // Left out of later nights until the pipeline enrols it again (after its end user signed in).
      await getExternalWorkflowHandle(bookEntryWorkflowId(this.settings.customerId, base.loginId))
        .signal(flagEntrySignal, { reason: failureType, workflowId: base.workflowId ?? '', flaggedAt: this.clock.iso() })
        .catch(() => log.warn('book refresh: the entry to flag has gone', { loginId: base.loginId }));
      return this.finish(base, { ...base, outcome: 'needs-end-user', failureType });
    }
    return this.finish(base, { ...base, outcome: 'failed', failureType });
  }

  /** Tells each terminated child forgotten (its login left the book) or failed: one visibility read per chunk. */
  private async settleTerminated(): Promise<void> {
    while (this.terminated.length > 0) {
      const chunk = this.terminated.slice(0, ENROLMENT_CHECK_CHUNK);
      const enrolled = new Set(await this.clock.local(() => book.stillEnrolled({ customerId: this.settings.customerId, loginIds: chunk.map((base) => base.loginId) })));
      // Removed only once read: a cancellation during the read leaves them for the drain that follows.
      this.terminated.splice(0, chunk.length);
      for (const base of chunk) this.record(enrolled.has(base.loginId) ? { ...base, outcome: 'failed', failureType: 'Terminated' } : { ...base, outcome: 'forgotten' });
    }
  }

  private async waitForRoom(): Promise<void> {
    await this.settleTerminated();
    // Before each start: a throttle or the other books' windows may change the room there is.
    await this.lookAround();
    await this.waitWatching(() => this.cancelled !== undefined || (!this.paused && this.inFlight.size < this.window.size));
  }

  private async drain(): Promise<void> {
    const since = this.clock.now();
    await this.waitWatching(() => this.inFlight.size === 0);
    this.drainMs += this.clock.now() - since;
    await this.settleTerminated();
  }

  /**
   * Waits for `ready`; while children are in flight and nothing moves for longer than a child
   * takes, looks at their ages (a stuck service shrinks the window before they end) and at a throttle.
   */
  private async waitWatching(ready: () => boolean): Promise<void> {
    for (;;) {
      const checkMs = this.paused || this.inFlight.size === 0 ? undefined : this.window.stallCheckMs;
      if (checkMs === undefined) {
        await condition(() => ready() || (!this.paused && this.inFlight.size > 0 && this.window.stallCheckMs !== undefined));
        if (ready()) return;
        continue;
      }
      if (await condition(ready, checkMs)) return;
      // The timer fired: its task's time.
      this.clock.woke();
      // A throttle first: children waiting out its Retry-After are not stuck.
      await this.lookAround();
      const now = this.clock.now();
      this.window.observeInFlight([...this.inFlight.values()].map((child) => now - child.askedAt), now);
      this.publishState();
    }
  }

  /**
   * What the window hears from outside its children: whether the service throttled the tenant (at
   * most every throttleCheckMs) and the windows the other running books hold (every fleetCheckMs).
   * Each time is taken before the call: the time a result comes back is not the same on replay.
   */
  private async lookAround(): Promise<void> {
    const { customerId, control } = this.settings;
    const at = this.clock.now();
    if (at - this.lastThrottleCheck >= control.throttleCheckMs) {
      this.lastThrottleCheck = at;
      const pause = await this.clock.local(() => book.tenantThrottle({ customerId }));
      if (pause) this.window.observeThrottle(pause.until, pause.reason, at);
    }
    if (at - this.lastFleetCheck >= control.fleetCheckMs) {
      this.lastFleetCheck = at;
      this.window.observeFleet(await this.clock.local(() => book.fleetWindows({ refreshWorkflowId: this.info.workflowId })), this.weight);
    }
  }

  // ---- What it records ----

  private record(outcome: BookOutcome): void {
    this.outcomes.push(outcome);
    this.counts = countOutcome(this.counts, outcome);
    this.metrics.outcome(outcome.outcome);
    this.publishState();
  }

  /** Tells the state where it is read: the Web UI's current details, the window's gauges and the memo the other books read. */
  private publishState(): void {
    const { customerId, cadence } = this.settings;
    const { counts, total, status } = this;
    const { size, lastChange, share } = this.window.view;
    const failed = Object.entries(counts.failedByType).map(([type, n]) => `${type} ${n}`).join(', ');
    setCurrentDetails(
      `Book ${customerId} (${cadence}), night ${this.night}: ${status}; ${counts.done}${total === undefined ? '' : ` of ${total}`} done, ${this.inFlight.size} in flight, window ${size}${share ? ` (share ${share.size.toFixed(1)} of ${share.fleetSize} across ${share.refreshes} books)` : ''}` +
        `${lastChange ? ` (${lastChange.reason})` : ''}; refreshed ${counts.refreshed}, needs end user ${counts.needsEndUser}, failed ${counts.failed}${failed ? ` (${failed})` : ''}; page ${this.page}`,
    );
    this.metrics.window(size, this.inFlight.size);
    this.publishWindow();
  }

  /** The window the other books share the fleet with: what this one holds room for (none while paused or cancelling). */
  private publishWindow(): void {
    const crowding = this.window.crowding;
    const crowdingUntil = this.window.crowdingUntil;
    const next: PublishedWindow = {
      size: this.paused || this.cancelled ? 0 : this.window.size,
      weight: this.weight,
      ...(crowding === undefined ? {} : { crowding: Math.round(crowding * 10) / 10 }),
      ...(crowding === undefined || crowdingUntil === undefined ? {} : { crowdingUntil }),
    };
    const published = this.published;
    if (published?.size === next.size && published.weight === next.weight) {
      // A new crowding (or its renewal) alone is told at most as often as the others read it (each is an event in history).
      const same = published.crowding === next.crowding && published.crowdingUntil === next.crowdingUntil;
      if (same || this.clock.now() - this.publishedAt < this.settings.control.fleetCheckMs) return;
    }
    this.published = next;
    this.publishedAt = this.clock.now();
    upsertMemo({ [BOOK_REFRESH_MEMO.window]: next });
  }

  private async writeReportPage(): Promise<void> {
    const workflowId = bookReportPageId(this.info.workflowId, this.page);
    try {
      await startChild<typeof bookReportPageWorkflow>('bookReportPageWorkflow', {
        workflowId,
        args: [{ refreshWorkflowId: this.info.workflowId, page: this.page, outcomes: this.outcomes }],
        parentClosePolicy: ParentClosePolicy.ABANDON,
        typedSearchAttributes: [{ key: CustomerIdKey, value: this.settings.customerId }],
        staticSummary: `Report page ${this.page} of ${this.info.workflowId}`,
      });
    } catch (error) {
      // Written already (a run retried after a reset): the record stands.
      if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
    }
    this.pages.push(workflowId);
  }

  /** What the next page's run starts from. */
  private carry(pageToken: string, skippedAtStart: number | undefined): BookRefreshCarry {
    return {
      night: this.night,
      startedAt: this.startedAt,
      page: this.page + 1,
      pageToken,
      total: this.total,
      counts: this.counts,
      started: this.started,
      drainMs: this.drainMs,
      pausedMs: this.pausedMs + (this.pausedSince === undefined ? 0 : this.clock.now() - this.pausedSince),
      paused: this.paused,
      window: this.window.carried,
      pages: this.pages,
      skippedAtStart,
    };
  }

  private async finishReport(skippedAtStart: number | undefined): Promise<BookReport> {
    const { customerId, cadence, scheduleId } = this.settings;
    const skippedNow = scheduleId && skippedAtStart !== undefined ? await this.clock.local(() => book.scheduleSkips({ scheduleId })) : null;
    if (this.pausedSince !== undefined) this.pausedMs += this.clock.now() - this.pausedSince;
    this.pausedSince = undefined;
    this.status = this.cancelled ? 'cancelled' : 'completed';
    this.publishState();
    const { inFlight: _inFlight, estimatedEnd: _estimatedEnd, updatedAt: _updatedAt, ...summary } = this.progress();
    log.info('book refresh ended', { customerId, cadence, night: this.night, status: this.status, done: this.counts.done, refreshed: this.counts.refreshed, failed: this.counts.failed });
    await condition(allHandlersFinished);
    return {
      ...summary,
      endedAt: this.clock.iso(),
      pages: this.pages,
      skippedWhileRunning: skippedNow === null || skippedAtStart === undefined ? 0 : Math.max(0, skippedNow - skippedAtStart),
      windowChanges: this.window.changes,
    };
  }
}
