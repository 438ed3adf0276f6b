/**
 * One run of a book refresh (one page of the book): the state it owns, what operators may do to it,
 * and its sequence. book-refresh.ts wires it to Temporal (handlers, continue-as-new); the window's
 * rules are window-controller.ts's. Deterministic code only.
 *
 * Two rules keep replay exact, and this class is where they hold:
 * - **Time is read from one clock** (`SteadyClock`): after a local activity it keeps the time from
 *   before it, and each entry point from history (an update, a connection's end signal, a timer)
 *   wakes it first, so a reading is the same in a run and on replay.
 * - **No local activity runs from a connection's end:** whether one is still in flight is not the
 *   same on replay (its result is in history at once), so nothing may hang on it. The refresh's own
 *   sequence (waiting for room, draining) makes every local-activity call; a connection found
 *   terminated waits there to be told forgotten from failed.
 *
 * The connections are not children (one workflow per login, its result out of this history): each
 * signals its end (`bookLoginEnded`), and those that close without a word are found by asking
 * Temporal (`checkSilent`).
 */
import {
  CancellationScope,
  ParentClosePolicy,
  allHandlersFinished,
  condition,
  isCancellation,
  log,
  proxyLocalActivities,
  startChild,
} from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import type { BookActivities } from '../../activities/book-activities.js';
import type { BookStartActivities } from '../../activities/book-start-activities.js';
import type { LivePathActivities } from '../../activities/live-path-activities.js';
import {
  bookConnectionWorkflowId,
  bookReportPageId,
  type BookRefreshCarry,
  type BookRefreshInput,
  type BookReport,
} from '../../contract/book/book-definitions.js';
import { CustomerIdKey } from '../../contract/search-attributes.js';
import type { bookReportPageWorkflow } from './book-report-page.js';
import type { BookRefreshSettings } from './book-refresh-input.js';
import { BookRefreshState, type OutcomeBase, type RefreshEntry } from './book-refresh-state.js';
import { silentDue, silentFinding } from '../window/silent-check.js';
import { FleetLook, WatchTimer } from '../window/window-watch.js';
import { TEMPORAL_CALL_RETRY } from '../../retry/activity-retry.js';

/**
 * Calls to Temporal only, never to the service: reads (visibility, describe) and the starts of the
 * page's connections, quick and outside the request budget. A start is retried until it lands
 * (safe: src/activities/book-start-activities.ts).
 */
const book = proxyLocalActivities<BookActivities & BookStartActivities & LivePathActivities>({
  startToCloseTimeout: '1m',
  retry: TEMPORAL_CALL_RETRY,
});

/** Logins whose enrolment is checked in one visibility query. */
const ENROLMENT_CHECK_CHUNK = 50;

/** How a run ends: its report, or the next page's run to continue as. */
export type BookRefreshEnd = { readonly report: BookReport } | { readonly next: BookRefreshCarry };

export class BookRefreshRun extends BookRefreshState {
  /** Connections found terminated: forgotten (left the book) or failed, told from the refresh's own sequence. */
  private readonly terminated: OutcomeBase[] = [];
  private lastSilentCheck = Number.NEGATIVE_INFINITY;
  private readonly watch: WatchTimer;
  private readonly fleet: FleetLook;
  /** The page's logins that can start, and how far the run got (a cancellation reports the rest). */
  private refreshes: RefreshEntry[] = [];
  private index = 0;

  constructor(input: BookRefreshInput, settings: BookRefreshSettings) {
    super(input, settings);
    this.watch = new WatchTimer(this.clock);
    // What the window hears from outside its connections: a throttle of the tenant, the other books' windows.
    this.fleet = new FleetLook(
      this.clock,
      this.window,
      { customerId: settings.customerId, workflowId: this.info.workflowId, weight: this.weight, control: settings.control },
      book,
    );
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
      const skippedAtStart = carried
        ? carried.skippedAtStart
        : scheduleId
          ? ((await this.clock.local(() => book.scheduleSkips({ scheduleId }))) ?? undefined)
          : undefined;
      const read = await this.clock.local(() => book.readBookPage({ customerId, cadence, pageSize, pageToken: carried?.pageToken }));
      await this.fleet.lookAround();
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
      // Cancelled as a workflow (Web UI, `temporal workflow cancel`): cancel the connections in flight,
      // let them end, keep the page's outcomes and the report, as the cancel update does.
      this.cancelled ??= 'the refresh workflow was cancelled';
      this.status = 'cancelling';
      return await CancellationScope.nonCancellable(async () => {
        this.cancelInFlight();
        this.reportNotStarted();
        await this.drain();
        await this.writeReportPage();
        return { report: await this.finishReport(carried?.skippedAtStart) };
      });
    }
  }

  /**
   * Starts the page's logins still enrolled as the window makes room (each opening's room in one
   * batch), until the page is done or the refresh cancelled.
   */
  private async startPage(): Promise<void> {
    const { customerId } = this.settings;
    const enrolled = new Set<string>();
    let checkedUpTo = 0;
    while (this.index < this.refreshes.length) {
      await this.waitForRoom();
      if (this.cancelled) break;
      const batch: { readonly entry: RefreshEntry; readonly workflowId: string }[] = [];
      const room = Math.max(1, this.window.size - this.inFlight.size);
      while (batch.length < room && this.index < this.refreshes.length && !this.cancelled) {
        if (this.index >= checkedUpTo) {
          // A login forgotten since the page was read is skipped: checked in chunks, just before they start.
          const chunk = this.refreshes.slice(this.index, this.index + Math.min(ENROLMENT_CHECK_CHUNK, Math.max(this.window.size, 1)));
          for (const loginId of await this.clock.local(() => book.stillEnrolled({ customerId, loginIds: chunk.map((entry) => entry.loginId) })))
            enrolled.add(loginId);
          checkedUpTo = this.index + chunk.length;
        }
        const entry = this.refreshes[this.index] as RefreshEntry;
        this.index += 1;
        const workflowId = bookConnectionWorkflowId(customerId, entry.loginId, this.night);
        if (!enrolled.has(entry.loginId)) this.record({ loginId: entry.loginId, outcome: 'forgotten', problem: 'left the book after its page was read' });
        // Listed twice on the page: one connection a night (a login listed on two pages is told by Temporal, at its start).
        else if (this.inFlight.has(workflowId) || batch.some((taken) => taken.workflowId === workflowId))
          this.record({ loginId: entry.loginId, workflowId, outcome: 'duplicate' });
        else batch.push({ entry, workflowId });
      }
      if (this.cancelled) {
        for (const { entry } of batch) this.record({ loginId: entry.loginId, outcome: 'cancelled', problem: `not started: ${this.cancelled}` });
        break;
      }
      if (batch.length > 0) await this.launch(batch);
    }
    this.reportNotStarted();
  }

  /** Logins of the page a cancellation kept from starting are reported as such (once). */
  private reportNotStarted(): void {
    for (const entry of this.refreshes.slice(this.index))
      this.record({ loginId: entry.loginId, outcome: 'cancelled', problem: `not started: ${this.cancelled ?? 'cancelled'}` });
    this.index = this.refreshes.length;
  }

  /**
   * Starts a batch of connections, each told to report its end to this refresh (its `book` input):
   * they are not children, so their results never enter this history. In flight from before the
   * start, so an end that arrives while the start's result is still on its way is not missed.
   */
  private async launch(batch: readonly { readonly entry: RefreshEntry; readonly workflowId: string }[]): Promise<void> {
    const { customerId, cadence } = this.settings;
    const { night, info } = this;
    const askedAt = this.clock.now();
    const requests = batch.map(({ entry, workflowId }) => {
      this.inFlight.set(workflowId, { loginId: entry.loginId, askedAt });
      this.started += 1;
      return {
        workflowId,
        input: { ...entry.input, book: { refreshWorkflowId: info.workflowId } },
        launch: `${info.runId}:${this.started}`,
        summary: `Login ${entry.loginId} in the ${cadence} refresh of ${customerId}, night ${night}`,
      };
    });
    this.publishState();
    // Never cut short: a start that went through is a connection in flight, cancelled below if need be.
    const results = await CancellationScope.nonCancellable(() =>
      this.clock.local(() => book.startBookConnections({ starts: requests, priority: info.priority })),
    );
    for (const result of results) {
      if (result.outcome === 'started') {
        this.window.observeStart(result.startMs);
        continue;
      }
      const child = this.inFlight.get(result.workflowId);
      if (child === undefined) continue;
      this.inFlight.delete(result.workflowId);
      this.record({ loginId: child.loginId, workflowId: result.workflowId, outcome: 'duplicate' });
    }
    if (this.cancelled) this.cancelInFlight();
  }

  /** Tells each terminated child forgotten (its login left the book) or failed: one visibility read per chunk. */
  private async settleTerminated(): Promise<void> {
    while (this.terminated.length > 0) {
      const chunk = this.terminated.slice(0, ENROLMENT_CHECK_CHUNK);
      const enrolled = new Set(
        await this.clock.local(() => book.stillEnrolled({ customerId: this.settings.customerId, loginIds: chunk.map((base) => base.loginId) })),
      );
      // Removed only once read: a cancellation during the read leaves them for the drain that follows.
      this.terminated.splice(0, chunk.length);
      for (const base of chunk)
        this.record(enrolled.has(base.loginId) ? { ...base, outcome: 'failed', failureType: 'Terminated' } : { ...base, outcome: 'forgotten' });
    }
  }

  private async waitForRoom(): Promise<void> {
    await this.settleTerminated();
    // Before each start: a throttle or the other books' windows may change the room there is.
    await this.fleet.lookAround();
    await this.waitWatching(() => this.cancelled !== undefined || (!this.paused && this.inFlight.size < this.window.size));
  }

  private async drain(): Promise<void> {
    const since = this.clock.now();
    await this.waitWatching(() => this.inFlight.size === 0);
    this.drainMs += this.clock.now() - since;
    await this.settleTerminated();
  }

  /**
   * Waits for `ready`; while connections are in flight, every best connection's time or so looks at
   * their ages (a stuck service shrinks the window before they end) and at a throttle, and every
   * `silentCheckMs` asks Temporal about those silent for long (one ended without a word never sends one).
   */
  private async waitWatching(ready: () => boolean): Promise<void> {
    for (;;) {
      if (this.inFlight.size === 0) {
        await condition(() => ready() || this.inFlight.size > 0);
        if (ready()) return;
        continue;
      }
      const stallMs = this.paused ? undefined : this.window.stallCheckMs;
      this.watch.arm(Math.min(stallMs ?? Number.POSITIVE_INFINITY, this.settings.control.silentCheckMs));
      await condition(() => ready() || this.watch.due);
      if (ready()) return;
      this.watch.looked();
      // A throttle first: connections waiting out its Retry-After are not stuck.
      await this.fleet.lookAround();
      const now = this.clock.now();
      if (stallMs !== undefined)
        this.window.observeInFlight(
          [...this.inFlight.values()].map((child) => now - child.askedAt),
          now,
        );
      await this.checkSilent(now);
      this.publishState();
    }
  }

  /**
   * Connections in flight for longer than `silentCheckMs`, read from Temporal (at most every
   * `silentCheckMs`, the 50 least recently read): one a forget or an operator terminated is told forgotten or failed
   * from the book (settleTerminated), one timed out failed. One closed otherwise sent its end before it
   * closed, so it is in this history already; if it still is not here at the next check (it failed
   * before it knew its refresh), it is counted failed.
   */
  private async checkSilent(now: number): Promise<void> {
    const { silentCheckMs } = this.settings.control;
    if (now - this.lastSilentCheck < silentCheckMs) return;
    this.lastSilentCheck = now;
    const due = silentDue(this.inFlight, ([, child]) => ({ ...child, since: child.askedAt }), now, silentCheckMs, ENROLMENT_CHECK_CHUNK);
    if (due.length === 0) return;
    for (const [, child] of due) child.checkedAt = now;
    const silent = due.map(([workflowId]) => workflowId);
    for (const { workflowId, status } of await this.clock.local(() => book.connectionsClosed({ workflowIds: silent }))) {
      const child = this.inFlight.get(workflowId);
      const finding = child === undefined ? 'running' : silentFinding({ ...child, since: child.askedAt }, { status });
      if (child === undefined || finding === 'running') continue;
      const base: OutcomeBase = { loginId: child.loginId, workflowId, durationMs: now - child.askedAt };
      if (finding === 'terminated') {
        // A forget terminates the login's running connections; whether this one was is read from the book.
        this.terminated.push(base);
        this.finish(base, undefined);
      } else if (finding === 'timed-out') this.finish(base, { ...base, outcome: 'failed', failureType: 'TimedOut' });
      else if (finding === 'closed') child.closedSeenAt = now;
      else {
        log.warn('book refresh: a connection closed without telling its end', { workflowId, status });
        this.finish(base, { ...base, outcome: 'failed', failureType: 'Unknown' });
      }
    }
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

  private async finishReport(skippedAtStart: number | undefined): Promise<BookReport> {
    const { customerId, cadence, scheduleId } = this.settings;
    const skippedNow = scheduleId && skippedAtStart !== undefined ? await this.clock.local(() => book.scheduleSkips({ scheduleId })) : null;
    if (this.pausedSince !== undefined) this.pausedMs += this.clock.now() - this.pausedSince;
    this.pausedSince = undefined;
    this.status = this.cancelled ? 'cancelled' : 'completed';
    this.publishState();
    this.metrics.ended();
    const { inFlight: _inFlight, estimatedEnd: _estimatedEnd, updatedAt: _updatedAt, ...summary } = this.progress();
    log.info('book refresh ended', {
      customerId,
      cadence,
      night: this.night,
      status: this.status,
      done: this.counts.done,
      refreshed: this.counts.refreshed,
      failed: this.counts.failed,
    });
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
