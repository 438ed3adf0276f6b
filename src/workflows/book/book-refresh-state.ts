/**
 * What a book refresh's run holds, what operators see and do to it (the query and the updates) and
 * what its connections tell it (their ends), apart from its sequence (book-refresh-run.ts extends
 * it): the counts, the pause and cancel, the window's pin, the progress and the state published for
 * the Web UI and the other books. Nothing here makes a local activity call (the run's second replay
 * rule, book-refresh-run.ts's header): it publishes, signals, and asks the connections to cancel;
 * time is read from the one `SteadyClock`, woken by each update and each end.
 */
import { CancellationScope, getExternalWorkflowHandle, log, setCurrentDetails, workflowInfo, type WorkflowInfo } from '@temporalio/workflow';
import type { BookPageEntry } from '../../activities/book-activities.js';
import {
  bookEntryWorkflowId,
  flagEntrySignal,
  type BookCounts,
  type BookLoginEnded,
  type BookOutcome,
  type BookProgress,
  type BookRefreshCarry,
  type BookRefreshInput,
  type BookRefreshStatus,
} from '../../contract/book/book-definitions.js';
import { WINDOW_LIMITS } from '../../contract/window/window-definitions.js';
import { EMPTY_COUNTS, countOutcome } from './book-counts.js';
import { bookMetrics } from './book-metrics.js';
import { nightOf, type BookRefreshSettings } from './book-refresh-input.js';
import { WindowController } from '../window/window-controller.js';
import { WindowMemo } from '../window/window-memo.js';
import { endProblem } from '../window/connection-window-end.js';
import { SteadyClock } from '../steady-clock.js';
import { estimateEnd } from './book-estimate.js';

/** Logins done the estimated end's fallback rate is read over (book-estimate.ts). */
const RATE_OVER = 64;

export type RefreshEntry = Extract<BookPageEntry, { kind: 'refresh' }>;
export type OutcomeBase = Pick<BookOutcome, 'loginId' | 'workflowId' | 'durationMs'>;

/**
 * A connection started and not yet heard from; `checkedAt`: when Temporal was last asked about it
 * (checkSilent); `closedSeenAt`: Temporal showed it closed, its word not yet here.
 */
export interface InFlightConnection {
  readonly loginId: string;
  readonly askedAt: number;
  checkedAt?: number;
  closedSeenAt?: number;
}

export abstract class BookRefreshState {
  protected readonly clock = new SteadyClock();
  protected readonly info: WorkflowInfo = workflowInfo();
  protected readonly window: WindowController;
  protected readonly metrics: ReturnType<typeof bookMetrics>;
  protected readonly weight: number;
  protected readonly night: string;
  protected readonly startedAt: string;
  protected readonly page: number;
  protected readonly pages: string[];
  protected counts: BookCounts;
  protected started: number;
  protected drainMs: number;
  protected pausedMs: number;
  protected paused: boolean;
  protected pausedSince: number | undefined;
  protected total: number | undefined;
  protected cancelled: string | undefined;
  protected status: BookRefreshStatus;
  /** Connections started and not yet heard from, by workflow id. */
  protected readonly inFlight = new Map<string, InFlightConnection>();
  protected readonly outcomes: BookOutcome[] = [];
  /** When the last RATE_OVER logins were done, in ms of time not paused. */
  protected readonly recentDone: number[];
  protected readonly windowMemo: WindowMemo;

  constructor(
    protected readonly input: BookRefreshInput,
    protected readonly settings: BookRefreshSettings,
  ) {
    const carried = input.carried;
    const { customerId, cadence } = settings;
    this.night = carried?.night ?? nightOf(this.info.workflowId, customerId, cadence, this.info.startTime);
    this.window = new WindowController(settings.bounds, settings.control, carried?.window);
    this.windowMemo = new WindowMemo(settings.control.fleetCheckMs);
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
    this.recentDone = [...(carried?.recentDone ?? [])];
  }

  /** Time paused so far, the pause going on included. */
  protected pausedTotal(now: number): number {
    return this.pausedMs + (this.pausedSince === undefined ? 0 : now - this.pausedSince);
  }

  /** Time not paused, in ms since the epoch less every pause so far (a clock that stops while paused). */
  protected activeNow(): number {
    const now = this.clock.now();
    return now - this.pausedTotal(now);
  }

  // ---- What operators see and do (the query and the updates) ----

  progress(): BookProgress {
    const now = this.clock.now();
    const { counts, total, status } = this;
    const left = total === undefined ? undefined : Math.max(0, total - counts.done);
    const estimatedEnd = left !== undefined && status !== 'completed' && status !== 'cancelled' ? this.estimateEnd(now, left) : undefined;
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
      pausedMs: this.pausedTotal(now),
      estimatedEnd,
      updatedAt: new Date(now).toISOString(),
    };
  }

  /** Now plus what is left at the rate the window sustains (book-estimate.ts). While paused: as if resumed now. */
  protected estimateEnd(now: number, left: number): string | undefined {
    const view = this.window.view;
    const end = estimateEnd({
      now,
      left,
      windowSize: view.size,
      recentFinishMs: view.recentFinishMs,
      recentDone: this.recentDone,
      activeNow: this.activeNow(),
      ramp: this.window.ramp(now),
    });
    return end === undefined ? undefined : new Date(end).toISOString();
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
    this.cancelInFlight();
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

  // ---- What connections tell it ----

  /** A connection told its end (`bookLoginEndedSignal`); one not in flight (told twice, or forged) is ignored. */
  loginEnded(told: BookLoginEnded | undefined): void {
    this.clock.woke();
    const problem = endProblem(told);
    const end = problem === undefined ? (told as BookLoginEnded) : undefined;
    const child = end === undefined ? undefined : this.inFlight.get(end.workflowId);
    if (end === undefined || child === undefined) {
      log.warn('book refresh: an end for no connection in flight, ignored', {
        problem: problem ?? 'not in flight',
        workflowId: String(told?.workflowId).slice(0, 200),
      });
      return;
    }
    const base: OutcomeBase = { loginId: child.loginId, workflowId: end.workflowId, durationMs: this.clock.now() - child.askedAt };
    if (end.ended === 'completed') this.finish(base, { ...base, outcome: 'refreshed' }, end.pollWaitMs);
    else {
      this.finishFailed(base, end.failureType).catch((error: unknown) => {
        // Only a bug lands here: keep the window moving, and say so.
        log.error('book refresh: a connection outcome could not be recorded', {
          workflowId: base.workflowId,
          error: error instanceof Error ? error.message : String(error),
        });
      });
    }
  }

  /**
   * A connection ended: out of the window, its time observed, its outcome recorded (`undefined`: told
   * later, from the refresh's own sequence). Only a child that completed says how crowded the fleet is.
   */
  protected finish(base: OutcomeBase, outcome: BookOutcome | undefined, pollWaitMs?: number): void {
    const workflowId = base.workflowId ?? '';
    const windowFull = this.inFlight.size >= this.window.size;
    this.inFlight.delete(workflowId);
    const durationMs = base.durationMs ?? 0;
    const timed = outcome?.outcome === 'refreshed';
    this.window.observeFinish(durationMs, timed, this.clock.now(), windowFull, durationMs - (pollWaitMs ?? 0));
    if (outcome) this.record(outcome);
  }

  /** A connection that did not complete: needing its end user (its entry flagged), cancelled or failed. */
  protected async finishFailed(base: OutcomeBase, failureType: string): Promise<void> {
    if (failureType === 'Cancelled') return this.finish(base, { ...base, outcome: 'cancelled' });
    if (failureType === 'EndUserActionRequired') {
      // Left out of later nights until the pipeline enrols it again (after its end user signed in).
      await getExternalWorkflowHandle(bookEntryWorkflowId(this.settings.customerId, base.loginId))
        .signal(flagEntrySignal, { reason: failureType, workflowId: base.workflowId ?? '', flaggedAt: this.clock.iso() })
        .catch(() => log.warn('book refresh: the entry to flag has gone', { loginId: base.loginId }));
      return this.finish(base, { ...base, outcome: 'needs-end-user', failureType });
    }
    return this.finish(base, { ...base, outcome: 'failed', failureType });
  }

  /** Asks each connection in flight to cancel (asked again, it is harmless; one that has closed says so, and is let be). */
  protected cancelInFlight(): void {
    for (const workflowId of this.inFlight.keys()) {
      void CancellationScope.nonCancellable(() => getExternalWorkflowHandle(workflowId).cancel()).catch(() => undefined);
    }
  }

  protected record(outcome: BookOutcome): void {
    this.outcomes.push(outcome);
    this.recentDone.push(this.activeNow());
    if (this.recentDone.length > RATE_OVER) this.recentDone.splice(0, this.recentDone.length - RATE_OVER);
    this.counts = countOutcome(this.counts, outcome);
    this.metrics.outcome(outcome.outcome);
    this.publishState();
  }

  /** Tells the state where it is read: the Web UI's current details, the window's gauges and the memo the other books read. */
  protected publishState(): void {
    const { customerId, cadence } = this.settings;
    const { counts, total, status } = this;
    const { size, lastChange, share } = this.window.view;
    const failed = Object.entries(counts.failedByType)
      .map(([type, n]) => `${type} ${n}`)
      .join(', ');
    setCurrentDetails(
      `Book ${customerId} (${cadence}), night ${this.night}: ${status}; ${counts.done}${total === undefined ? '' : ` of ${total}`} done, ${this.inFlight.size} in flight, window ${size}${share ? ` (share ${share.size.toFixed(1)} of ${share.fleetSize} across ${share.refreshes} books)` : ''}` +
        `${lastChange ? ` (${lastChange.reason})` : ''}; refreshed ${counts.refreshed}, needs end user ${counts.needsEndUser}, failed ${counts.failed}${failed ? ` (${failed})` : ''}; page ${this.page}`,
    );
    this.metrics.window(size, this.inFlight.size);
    this.windowMemo.publish(this.window, this.weight, !this.paused && !this.cancelled, this.clock.now());
  }

  /** What the next page's run starts from. */
  protected carry(pageToken: string, skippedAtStart: number | undefined): BookRefreshCarry {
    return {
      night: this.night,
      startedAt: this.startedAt,
      page: this.page + 1,
      pageToken,
      total: this.total,
      counts: this.counts,
      started: this.started,
      drainMs: this.drainMs,
      pausedMs: this.pausedTotal(this.clock.now()),
      paused: this.paused,
      window: this.window.carried,
      pages: this.pages,
      skippedAtStart,
      recentDone: this.recentDone,
    };
  }
}
