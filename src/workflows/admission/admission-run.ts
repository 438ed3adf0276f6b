/**
 * One run of a tenant's admission (admission.ts wires it to Temporal): the unattended connections
 * waiting for room, those admitted and not yet ended, and the window that says how many may be in
 * flight, the book's own (window-controller.ts, within ADMISSION_WINDOW_BOUNDS), judged on the admitted connections' times and shared
 * with the books by weight. Deterministic code only, under the two rules a book refresh's run keeps
 * (book-refresh-run.ts): time read from one `SteadyClock`, and no local activity started from a
 * handler (every call to Temporal is made by the run's own sequence).
 *
 * A connection that asks is queued (admission-queue.ts); granting sends it a signal; one that cannot
 * be delivered (the run has ended, or never was: a forged request) gives its room back. A start the
 * product's client held is found in visibility once a client wakes the run (admission-held-looks.ts),
 * and begun when it is granted room. The connection tells its end with the
 * same signal a book's connection sends its refresh; one admitted that never tells (terminated) is
 * found by asking Temporal, as a book does.
 */
import {
  ApplicationFailure,
  allHandlersFinished,
  condition,
  getExternalWorkflowHandle,
  log,
  proxyLocalActivities,
  setCurrentDetails,
  workflowInfo,
  type WorkflowInfo,
} from '@temporalio/workflow';
import type { AdmissionActivities } from '../../activities/admission-activities.js';
import type { BookActivities } from '../../activities/book-activities.js';
import type { BookStartActivities } from '../../activities/book-start-activities.js';
import type { LivePathActivities } from '../../activities/live-path-activities.js';
import {
  ADMISSION_DISCOVER_EVERY_MS,
  ADMISSION_DISCOVER_SOON_MS,
  ADMISSION_GRANTS_PER_RUN,
  ADMISSION_IDLE_MS,
  ADMISSION_QUEUE_LIMIT,
  ADMISSION_WINDOW_BOUNDS,
  admissionGrantSignal,
  type AdmissionCarry,
  type AdmissionInput,
  type AdmissionRequest,
  type AdmissionState,
  type AdmissionSummary,
  type AdmissionWake,
  type AdmittedConnection,
} from '../../contract/admission/admission-definitions.js';
import { DEFAULT_PRIORITY_KEYS } from '../../contract/priority.js';
import { type BookLoginEnded } from '../../contract/book/book-definitions.js';
import { DEFAULT_WINDOW_CONTROL, type WindowBounds, type WindowControl } from '../../contract/window/window-definitions.js';
import { ID_SEGMENT_PATTERN, ID_SEGMENT_RULE } from '../../contract/ids.js';
import { WindowController } from '../window/window-controller.js';
import { endProblem } from '../window/connection-window-end.js';
import { SteadyClock } from '../steady-clock.js';
import { WindowMemo } from '../window/window-memo.js';
import { FleetLook, WatchTimer } from '../window/window-watch.js';
import { AdmissionQueue, endedRun, requestProblem, runKey } from './admission-queue.js';
import { HeldLooks } from './admission-held-looks.js';
import { SILENT_CHECK_CHUNK, silentDue, silentFinding } from '../window/silent-check.js';
import { TEMPORAL_CALL_RETRY } from '../../retry/activity-retry.js';

/** Calls to Temporal only (visibility, describe, signal-with-start), never to the service: quick and outside the request budget. */
const temporal = proxyLocalActivities<
  Pick<BookActivities, 'tenantThrottle' | 'fleetWindows'> &
    LivePathActivities &
    Pick<BookStartActivities, 'connectionsClosed'> &
    Pick<AdmissionActivities, 'releaseHeldConnections' | 'heldConnections'>
>({
  startToCloseTimeout: '1m',
  retry: TEMPORAL_CALL_RETRY,
});

/** Held starts released by one local activity (the window's ceiling: a round's grants at once). */
const RELEASE_CHUNK = 50;
export interface AdmissionSettings {
  readonly customerId: string;
  readonly bounds: WindowBounds;
  readonly control: WindowControl;
}

/** The input's settings; an `InvalidAdmissionInput` failure (not retried) for a start by hand that names no tenant. */
export function admissionSettings(input: AdmissionInput | undefined): AdmissionSettings {
  if (typeof input?.customerId !== 'string' || !ID_SEGMENT_PATTERN.test(input.customerId)) {
    throw ApplicationFailure.create({ type: 'InvalidAdmissionInput', message: `invalid admission input: customerId ${ID_SEGMENT_RULE}`, nonRetryable: true });
  }
  return { customerId: input.customerId, bounds: ADMISSION_WINDOW_BOUNDS, control: DEFAULT_WINDOW_CONTROL };
}

export type AdmissionEnd = { readonly summary: AdmissionSummary } | { readonly next: AdmissionCarry };

export class AdmissionRun {
  private readonly clock = new SteadyClock();
  private readonly info: WorkflowInfo = workflowInfo();
  private readonly window: WindowController;
  private readonly windowMemo: WindowMemo;
  private readonly weight: number;
  /** Ordered by priority key, then arrival. Each run of a workflow id is its own entry, here and in flight. */
  private readonly queue: AdmissionQueue;
  /** By `runKey`. */
  private readonly inFlight = new Map<string, AdmittedConnection>();
  private granted: number;
  private refused: number;
  private grantedThisRun = 0;
  /** Grant signals commanded and not yet delivered (or refused): the run hands over only once none is. */
  private grantsPending = 0;
  /** Held starts granted room and not yet released (the run's sequence releases them next). */
  private readonly toRelease: AdmittedConnection[] = [];
  private readonly watch: WatchTimer;
  private readonly fleet: FleetLook;
  private lastSilentCheck = Number.NEGATIVE_INFINITY;
  /** Looks for held starts, paced by clients' wakes. */
  private readonly looks: HeldLooks;

  constructor(
    input: AdmissionInput,
    private readonly settings: AdmissionSettings,
  ) {
    const carried = input.carried;
    this.window = new WindowController(settings.bounds, settings.control, carried?.window);
    this.windowMemo = new WindowMemo(settings.control.fleetCheckMs);
    this.weight = this.info.priority?.fairnessWeight ?? 1;
    // Runs let go lately are kept with the queue: visibility may show one running a while after it closed.
    this.queue = new AdmissionQueue(carried?.queue, carried?.lettingGo);
    for (const admitted of carried?.inFlight ?? []) this.inFlight.set(runKey(admitted), admitted);
    this.granted = carried?.granted ?? 0;
    this.refused = carried?.refused ?? 0;
    this.looks = new HeldLooks(carried);
    this.watch = new WatchTimer(this.clock);
    this.fleet = new FleetLook(
      this.clock,
      this.window,
      { customerId: settings.customerId, workflowId: this.info.workflowId, weight: this.weight, control: settings.control },
      temporal,
    );
  }

  state(): AdmissionState {
    return {
      customerId: this.settings.customerId,
      queued: this.queue.length,
      queuedByPriority: this.queue.byPriority,
      inFlight: this.inFlight.size,
      granted: this.granted,
      refused: this.refused,
      window: this.window.view,
      updatedAt: this.clock.iso(),
    };
  }

  // ---- What connections send (signals) ----

  /**
   * A connection asks for room. Asked again by the same run: queued once (granted again if it was: its
   * wait timed out first). Another run of the same id is an entry of its own: an earlier run's entry
   * goes when it tells its end or its grant cannot reach it, so no request can push another out.
   */
  request(asked: AdmissionRequest | undefined): void {
    this.clock.woke();
    this.enqueue(asked);
  }

  /** A client held a start of this tenant (or several): look for them in visibility, now and while it keeps waking this run. */
  wake(told: AdmissionWake | undefined): void {
    this.clock.woke();
    // Not this tenant's wake (an unsealed one reads as a marker): refused, as a request would be.
    if (told?.customerId !== this.settings.customerId) return this.refuse('a wake that names another tenant, or none');
    this.looks.woke(this.clock.now());
  }

  private enqueue(asked: AdmissionRequest | undefined): void {
    const problem = requestProblem(asked, this.settings.customerId);
    if (problem !== undefined) return this.refuse(problem);
    const request = asked as AdmissionRequest;
    const admitted = this.inFlight.get(runKey(request));
    // Released already (a held start's grant begins it): a client's second request for it changes nothing.
    if (admitted !== undefined) return request.held === true ? undefined : this.sendGrant(admitted);
    if (!this.queue.offer(request, this.clock.now()))
      this.refuse(`the queue holds ${ADMISSION_QUEUE_LIMIT} connections already (the connection asks again later)`);
  }

  /** A connection told its end: admitted, its room is free and its time observed; queued (cancelled while waiting), it leaves the queue. */
  ended(told: BookLoginEnded | undefined): void {
    this.clock.woke();
    const problem = endProblem(told);
    const end = problem === undefined ? (told as BookLoginEnded) : undefined;
    if (end === undefined) return void log.warn('admission: a malformed end, ignored', { problem });
    const ofRun = endedRun(end);
    const admitted = [...this.inFlight.values()].find(ofRun);
    if (admitted !== undefined) {
      const now = this.clock.now();
      // Full with connections waiting: a window that had room to spare says nothing about growing.
      const windowFull = this.inFlight.size >= this.window.size && this.queue.length > 0;
      this.letGo(admitted);
      const durationMs = now - admitted.grantedAt;
      const busyMs = durationMs - (end.ended === 'completed' ? (end.pollWaitMs ?? 0) : 0);
      this.window.observeFinish(durationMs, end.ended === 'completed', now, windowFull, busyMs);
      return;
    }
    if (!this.queue.remove(ofRun)) log.warn('admission: an end for no connection here, ignored', { workflowId: end.workflowId.slice(0, 200) });
  }

  /** A run leaves the window (its room is free); a held one is remembered a while so a look does not queue it again. */
  private letGo(admitted: AdmittedConnection): void {
    this.inFlight.delete(runKey(admitted));
    if (this.looks.on && admitted.held === true) this.queue.letGo(admitted.runId, this.clock.now());
  }

  private refuse(problem: string): void {
    this.refused += 1;
    log.warn('admission request refused', { customerId: this.settings.customerId, problem: problem.slice(0, 300) });
  }

  // ---- The run's sequence ----

  /** Grants room as the window makes it, until the run has granted its share (then continues as new) or nothing came for a while. */
  async run(): Promise<AdmissionEnd> {
    for (;;) {
      await this.fleet.lookAround();
      await this.discoverHeld();
      this.grantRoom();
      await this.releaseHeld();
      this.publishState();
      if (this.grantedThisRun >= ADMISSION_GRANTS_PER_RUN || workflowInfo().continueAsNewSuggested) return { next: await this.handOver() };
      if (this.queue.length === 0 && this.inFlight.size === 0) {
        // Woken lately: held starts may reach visibility yet (a client wakes a run once a second at most).
        if (this.looks.wokenLately(this.clock.now())) {
          await this.waitToDiscover(() => this.queue.length > 0 || this.inFlight.size > 0);
          continue;
        }
        if (await condition(() => this.queue.length > 0 || this.inFlight.size > 0 || this.looks.due, ADMISSION_IDLE_MS)) continue;
        await condition(() => this.grantsPending === 0 && allHandlersFinished());
        // A request (or a wake) that came meanwhile is served by this run (a later one starts the next run).
        if (this.queue.length > 0 || this.inFlight.size > 0 || this.looks.due) continue;
        log.info('admission idle: ending', { customerId: this.settings.customerId, granted: this.granted });
        return { summary: { customerId: this.settings.customerId, granted: this.granted, refused: this.refused, endedAt: this.clock.iso() } };
      }
      await this.waitWatching(
        () => (this.queue.length > 0 && this.inFlight.size < this.window.size) || (this.queue.length === 0 && this.inFlight.size === 0) || this.looks.due,
      );
    }
  }

  /**
   * Queues the held starts visibility shows that this run has not seen, the earliest first, as far as
   * the queue has room (the rest stay held on the server, found at a later look). At the pace
   * `discoverEveryMs` gives, or on a wake unless a look was a moment ago; only within a minute of a
   * client's wake.
   */
  private async discoverHeld(): Promise<void> {
    if (!this.looks.take(this.clock.now(), () => this.discoverEveryMs())) return;
    const limit = ADMISSION_QUEUE_LIMIT - this.queue.length;
    if (limit <= 0) return;
    const known = this.queue.known(
      [...this.inFlight.values()].map((admitted) => admitted.runId),
      this.clock.now(),
    );
    const found = await this.clock.local(() => temporal.heldConnections({ customerId: this.settings.customerId, known, limit }));
    for (const { workflowId, runId, priorityKey } of found)
      this.enqueue({ workflowId, runId, priorityKey: priorityKey ?? DEFAULT_PRIORITY_KEYS.scheduled, held: true });
  }

  /** Between looks for held starts: sooner while the window has room for more than it holds and queues. */
  private discoverEveryMs(): number {
    return this.queue.length + this.inFlight.size < this.window.size ? ADMISSION_DISCOVER_SOON_MS : ADMISSION_DISCOVER_EVERY_MS;
  }

  /** With nothing queued or in flight after a wake: the next look's time, a wake, or `ready`. */
  private async waitToDiscover(ready: () => boolean): Promise<void> {
    this.watch.arm(this.discoverEveryMs());
    await condition(() => ready() || this.looks.due || this.watch.due);
    if (this.watch.due) this.watch.looked();
  }

  private grantRoom(): void {
    const now = this.clock.now();
    while (this.queue.length > 0 && this.inFlight.size < this.window.size) {
      const admitted = this.queue.grant(now);
      this.inFlight.set(runKey(admitted), admitted);
      this.granted += 1;
      this.grantedThisRun += 1;
      if (admitted.held === true) this.toRelease.push(admitted);
      else this.sendGrant(admitted);
    }
  }

  /**
   * Begins the held starts granted room: a signal-with-start carries the grant and ends the start
   * delay (local-activity-side, as workflow code cannot send one). One that is no longer the id's
   * running run (terminated while held, or never held at all) gives its room back.
   */
  private async releaseHeld(): Promise<void> {
    while (this.toRelease.length > 0) {
      const batch = this.toRelease.splice(0, RELEASE_CHUNK);
      const runs = batch.map(({ workflowId, runId }) => ({ workflowId, runId }));
      const outcomes = await this.clock.local(() => temporal.releaseHeldConnections({ runs, admissionRunId: this.info.runId }));
      batch.forEach((admitted, index) => {
        if (outcomes[index] === 'released') return;
        this.letGo(admitted);
        log.info('admission: a held connection is no longer running: its room is free', { workflowId: admitted.workflowId });
      });
    }
  }

  /** Signals the run it admits; one that cannot be reached (it has ended, or never was) gives its room back. */
  private sendGrant(admitted: AdmittedConnection): void {
    this.grantsPending += 1;
    getExternalWorkflowHandle(admitted.workflowId, admitted.runId)
      .signal(admissionGrantSignal, { admissionRunId: this.info.runId })
      .catch(() => {
        this.clock.woke();
        this.letGo(admitted);
        log.info('admission: a granted connection could not be told (it has ended): its room is free', { workflowId: admitted.workflowId });
      })
      .finally(() => {
        this.grantsPending -= 1;
      });
  }

  /** What the next run starts from, once every grant commanded here is delivered (a closing run's signals are dropped). */
  private async handOver(): Promise<AdmissionCarry> {
    await condition(() => this.grantsPending === 0 && allHandlersFinished());
    log.info('admission: continuing as new', {
      customerId: this.settings.customerId,
      granted: this.granted,
      queued: this.queue.length,
      inFlight: this.inFlight.size,
    });
    return {
      window: this.window.carried,
      queue: this.queue.entries,
      inFlight: [...this.inFlight.values()],
      granted: this.granted,
      refused: this.refused,
      ...(this.looks.on ? { discovering: true, lastWakeAt: this.looks.lastWakeAt, lettingGo: this.queue.carriedLettingGo } : {}),
    };
  }

  /**
   * Waits for `ready`; while connections are in flight, every best connection's time or so looks at
   * their ages (a stuck service shrinks the window before they end) and at a throttle, and every
   * `silentCheckMs` asks Temporal about those silent for long.
   */
  private async waitWatching(ready: () => boolean): Promise<void> {
    for (;;) {
      if (this.inFlight.size === 0) {
        await condition(() => ready() || this.inFlight.size > 0);
        if (ready()) return;
        continue;
      }
      const lookMs = this.looks.wokenLately(this.clock.now()) ? this.discoverEveryMs() : Number.POSITIVE_INFINITY;
      this.watch.arm(Math.min(this.window.stallCheckMs ?? Number.POSITIVE_INFINITY, this.settings.control.silentCheckMs, lookMs));
      await condition(() => ready() || this.watch.due);
      if (ready()) return;
      this.watch.looked();
      await this.fleet.lookAround();
      await this.discoverHeld();
      const now = this.clock.now();
      this.window.observeInFlight(
        [...this.inFlight.values()].map((admitted) => now - admitted.grantedAt),
        now,
      );
      await this.checkSilent(now);
      this.publishState();
    }
  }

  /** Admitted connections silent for `silentCheckMs`, read from Temporal (the 50 least recently read): one closed without a word frees its room. */
  private async checkSilent(now: number): Promise<void> {
    const { silentCheckMs } = this.settings.control;
    if (now - this.lastSilentCheck < silentCheckMs) return;
    this.lastSilentCheck = now;
    const due = silentDue(this.inFlight.values(), (admitted) => ({ ...admitted, since: admitted.grantedAt }), now, silentCheckMs, SILENT_CHECK_CHUNK);
    if (due.length === 0) return;
    for (const admitted of due) this.inFlight.set(runKey(admitted), { ...admitted, checkedAt: now });
    const read = await this.clock.local(() => temporal.connectionsClosed({ workflowIds: [...new Set(due.map((admitted) => admitted.workflowId))] }));
    const current = new Map(read.map((entry) => [entry.workflowId, entry]));
    for (const { workflowId, runId } of due) {
      const admitted = this.inFlight.get(runKey({ workflowId, runId }));
      const latest = current.get(workflowId);
      if (admitted === undefined || latest === undefined) continue;
      const finding = silentFinding({ ...admitted, since: admitted.grantedAt }, latest);
      if (finding === 'running') continue;
      if (finding === 'closed') {
        this.inFlight.set(runKey(admitted), { ...admitted, closedSeenAt: now });
        continue;
      }
      log.warn('admission: a connection closed without telling its end; its room is free', { workflowId, runId, status: latest.status });
      this.letGo(admitted);
    }
  }

  /** The Web UI's current details and the memo the books read. */
  private publishState(): void {
    const { size, lastChange, share } = this.window.view;
    setCurrentDetails(
      `Admission of ${this.settings.customerId}'s unattended connections: ${this.queue.length} queued, ${this.inFlight.size} in flight, window ${size}` +
        `${share ? ` (share ${share.size.toFixed(1)} of ${share.fleetSize} across ${share.refreshes} windows)` : ''}${lastChange ? ` (${lastChange.reason})` : ''}; granted ${this.granted}, refused ${this.refused}`,
    );
    // Idle (nothing queued or in flight), it holds no room, so its weight leaves the books' shares.
    this.windowMemo.publish(this.window, this.weight, this.queue.length > 0 || this.inFlight.size > 0, this.clock.now());
  }
}
