/**
 * The refresh of a tenant's book (one cadence) as one durable operation: a sliding window of
 * connection children, as Temporal's batch samples keep one, sized by what it observes
 * (book-window.ts), so the fleet is never handed more unattended work than it carries.
 *
 * Per run: read one page of the book (a local activity through visibility), start a child per
 * enrolled login while the window has room (a login forgotten since the page was read is skipped,
 * a flagged or malformed one reported), let the page's children finish (the window drains), keep
 * the page's per-login outcomes as a report page, then continue as new with the next page's token.
 * Draining before continuing as new means no child ever outlives the run that started it, so none
 * is lost and none is started twice; its cost is the tail of each page (the progress's `drainMs`).
 *
 * Operators: `bookProgress` (query); `pauseBook`, `resumeBook`, `cancelBook`, `resizeBook`
 * (updates); the Web UI's current details say the same in a line. The result is the night's report.
 * Deterministic code only.
 */
import {
  ApplicationFailure,
  CancellationScope,
  ChildWorkflowFailure,
  ParentClosePolicy,
  WorkflowIdReusePolicy,
  allHandlersFinished,
  condition,
  getExternalWorkflowHandle,
  isCancellation,
  log,
  makeContinueAsNewFunc,
  patched,
  proxyLocalActivities,
  setCurrentDetails,
  setHandler,
  setWorkflowOptions,
  startChild,
  upsertMemo,
  workflowInfo,
} from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import type { BookActivities, BookPageEntry } from '../activities/book-activities.js';
import {
  BOOK_PAGE_SIZE_LIMITS,
  BOOK_REFRESH_MEMO,
  DEFAULT_BOOK_PAGE_SIZE,
  DEFAULT_WINDOW_BOUNDS,
  DEFAULT_WINDOW_CONTROL,
  WINDOW_LIMITS,
  BOOK_LOGIN_WORKFLOW_TYPE,
  bookConnectionWorkflowId,
  bookEntryWorkflowId,
  bookLoginWorkflowId,
  bookProgressQuery,
  bookReportPageId,
  cancelBookUpdate,
  flagEntrySignal,
  pauseBookUpdate,
  resizeBookUpdate,
  resumeBookUpdate,
  type BookCounts,
  type BookOutcome,
  type BookProgress,
  type BookRefreshInput,
  type BookRefreshStatus,
  type BookReport,
  type PublishedWindow,
  type WindowBounds,
  type WindowControl,
} from '../contract/book-definitions.js';
import { CustomerIdKey, LoginIdKey } from '../contract/search-attributes.js';
import { failureTypeOf, type bookLoginWorkflow } from './book-login.js';
import type { bookReportPageWorkflow } from './book-report-page.js';
import { bookMetrics } from './book-metrics.js';
import { WindowController } from './book-window.js';
import { SteadyClock } from './steady-clock.js';

/** Reads of Temporal only (visibility, describe): quick, and outside the request budget. */
const book = proxyLocalActivities<BookActivities>({
  startToCloseTimeout: '1m',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s' },
});

/** Logins whose enrolment is checked in one visibility query just before they start. */
const ENROLMENT_CHECK_CHUNK = 50;
const CUSTOMER_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$/;
export const CADENCE_PATTERN = /^[a-z0-9][a-z0-9-]{0,39}$/;

const EMPTY_COUNTS: BookCounts = Object.freeze({ done: 0, refreshed: 0, needsEndUser: 0, failed: 0, failedByType: {}, forgotten: 0, malformed: 0, cancelled: 0, duplicate: 0 });

interface Settings {
  readonly customerId: string;
  readonly cadence: string;
  readonly scheduleId?: string | undefined;
  readonly bounds: WindowBounds;
  readonly pageSize: number;
  readonly control: WindowControl;
}

/** Refuses an input the client would have refused (a start by hand, `temporal workflow start`), naming each field. */
function settingsOf(input: BookRefreshInput | undefined): Settings {
  const problems: string[] = [];
  const whole = (value: unknown, min: number, max: number) => Number.isInteger(value) && (value as number) >= min && (value as number) <= max;
  if (typeof input?.customerId !== 'string' || !CUSTOMER_ID.test(input.customerId)) problems.push('customerId: must be a customer id (letters, digits, ".", "_", "-")');
  if (typeof input?.cadence !== 'string' || !CADENCE_PATTERN.test(input.cadence)) problems.push('cadence: must be lower-case letters, digits and "-", at most 40');
  const bounds = { ...DEFAULT_WINDOW_BOUNDS, ...(input?.window ?? {}) };
  for (const name of ['floor', 'ceiling', 'start'] as const) {
    if (!whole(bounds[name], WINDOW_LIMITS.min, WINDOW_LIMITS.max)) problems.push(`window.${name}: must be a whole number from ${WINDOW_LIMITS.min} to ${WINDOW_LIMITS.max}`);
  }
  if (bounds.floor > bounds.ceiling) problems.push(`window: floor ${bounds.floor} is above ceiling ${bounds.ceiling}`);
  const pageSize = input?.pageSize ?? DEFAULT_BOOK_PAGE_SIZE;
  if (!whole(pageSize, BOOK_PAGE_SIZE_LIMITS.min, BOOK_PAGE_SIZE_LIMITS.max)) problems.push(`pageSize: must be a whole number from ${BOOK_PAGE_SIZE_LIMITS.min} to ${BOOK_PAGE_SIZE_LIMITS.max}`);
  const control = { ...DEFAULT_WINDOW_CONTROL, ...(input?.control ?? {}) };
  if (!(control.growBelow >= 1 && control.shrinkAbove > control.growBelow)) problems.push('control: growBelow must be at least 1 and below shrinkAbove');
  if (!(control.shrinkFactor > 0 && control.shrinkFactor < 1)) problems.push('control.shrinkFactor: must be between 0 and 1');
  if (!(control.slackMs >= 0 && control.throttleCheckMs >= 0 && control.fleetCheckMs >= 0)) problems.push('control: slackMs, throttleCheckMs and fleetCheckMs must not be negative');
  if (problems.length > 0) throw ApplicationFailure.create({ type: 'InvalidBookRefreshInput', message: `invalid book refresh input: ${problems.join('; ')}`, nonRetryable: true });
  return { customerId: input!.customerId, cadence: input!.cadence, scheduleId: input!.scheduleId, bounds: { ...bounds, start: Math.min(bounds.ceiling, Math.max(bounds.floor, bounds.start)) }, pageSize, control };
}

/** The night a run of the Schedule belongs to: the scheduled time Temporal appended to its id; else when it began. */
function nightOf(workflowId: string, customerId: string, cadence: string, startTime: Date): string {
  const prefix = `book-${customerId}:${cadence}-`;
  const stamp = workflowId.startsWith(prefix) ? workflowId.slice(prefix.length) : '';
  return /^\d{4}-\d{2}-\d{2}T[\d:.]+Z$/.test(stamp) ? stamp : startTime.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function withOutcome(counts: BookCounts, outcome: BookOutcome): BookCounts {
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

export async function bookRefreshWorkflow(input: BookRefreshInput): Promise<BookReport> {
  const settings = settingsOf(input);
  const { customerId, cadence, pageSize } = settings;
  const info = workflowInfo();
  const carried = input.carried;
  const night = carried?.night ?? nightOf(info.workflowId, customerId, cadence, info.startTime);
  const window = new WindowController(settings.bounds, settings.control, carried?.window);
  // Runs begun before books shared the fleet keep to their own window (their histories have no memo to replay).
  const sharesFleet = patched('book-fleet-share');
  // Runs begun before a published crowding had an end keep publishing it without one.
  const expiresCrowding = sharesFleet && patched('book-crowding-expiry');
  // Runs begun before it read Date.now() after a local activity, which a replay may read otherwise (steady-clock.ts).
  const clock = new SteadyClock(patched('book-steady-clock'));
  const scheduleId = settings.scheduleId;
  const weight = info.priority?.fairnessWeight ?? 1;
  let published: PublishedWindow | undefined;
  let publishedAt = Number.NEGATIVE_INFINITY;
  const metrics = bookMetrics(customerId, cadence);
  const startedAt = carried?.startedAt ?? clock.iso();
  const pages = [...(carried?.pages ?? [])];
  const page = carried?.page ?? 1;
  let counts = carried?.counts ?? EMPTY_COUNTS;
  let started = carried?.started ?? 0;
  let drainMs = carried?.drainMs ?? 0;
  let pausedMs = carried?.pausedMs ?? 0;
  let paused = carried?.paused ?? false;
  let pausedSince = paused ? clock.now() : undefined;
  let total = carried?.total;
  let cancelled: string | undefined;
  let status: BookRefreshStatus = paused ? 'paused' : 'running';
  const inFlight = new Map<string, { readonly loginId: string; readonly askedAt: number }>();
  const outcomes: BookOutcome[] = [];
  // Children in their own scope: cancelling the refresh cancels them (ParentClosePolicy would too, but only once the parent closes).
  const children = new CancellationScope();

  const progress = (): BookProgress => {
    const now = clock.now();
    const elapsed = now - Date.parse(startedAt) - pausedMs - (pausedSince === undefined ? 0 : now - pausedSince);
    const left = total === undefined ? undefined : Math.max(0, total - counts.done);
    const estimatedEnd = left !== undefined && counts.done > 0 && elapsed > 0 && status !== 'completed' && status !== 'cancelled' ? new Date(now + (left * elapsed) / counts.done).toISOString() : undefined;
    return {
      customerId,
      cadence,
      refreshWorkflowId: info.workflowId,
      night,
      status,
      startedAt,
      total,
      page,
      inFlight: inFlight.size,
      counts,
      window: window.view,
      started,
      drainMs,
      pausedMs: pausedMs + (pausedSince === undefined ? 0 : now - pausedSince),
      estimatedEnd,
      updatedAt: new Date(now).toISOString(),
    };
  };
  const describe = () => {
    const { size, lastChange, share } = window.view;
    const failed = Object.entries(counts.failedByType).map(([type, n]) => `${type} ${n}`).join(', ');
    setCurrentDetails(
      `Book ${customerId} (${cadence}), night ${night}: ${status}; ${counts.done}${total === undefined ? '' : ` of ${total}`} done, ${inFlight.size} in flight, window ${size}${share ? ` (share ${share.size.toFixed(1)} of ${share.fleetSize} across ${share.refreshes} books)` : ''}` +
        `${lastChange ? ` (${lastChange.reason})` : ''}; refreshed ${counts.refreshed}, needs end user ${counts.needsEndUser}, failed ${counts.failed}${failed ? ` (${failed})` : ''}; page ${page}`,
    );
    metrics.window(size, inFlight.size);
    publishWindow();
  };
  /** The window the other books share the fleet with: what this one holds room for (none while paused or cancelling). */
  const publishWindow = () => {
    if (!sharesFleet) return;
    const crowding = window.crowding;
    const crowdingUntil = expiresCrowding ? window.crowdingUntil : undefined;
    const next: PublishedWindow = {
      size: paused || cancelled ? 0 : window.size,
      weight,
      ...(crowding === undefined ? {} : { crowding: Math.round(crowding * 10) / 10 }),
      ...(crowding === undefined || crowdingUntil === undefined ? {} : { crowdingUntil }),
    };
    if (published?.size === next.size && published.weight === next.weight) {
      // A new crowding (or its renewal) alone is told at most as often as the others read it (each is an event in history).
      const same = published.crowding === next.crowding && (!expiresCrowding || published.crowdingUntil === next.crowdingUntil);
      if (same || clock.now() - publishedAt < settings.control.fleetCheckMs) return;
    }
    published = next;
    publishedAt = clock.now();
    upsertMemo({ [BOOK_REFRESH_MEMO.window]: next });
  };
  const record = (outcome: BookOutcome) => {
    outcomes.push(outcome);
    counts = withOutcome(counts, outcome);
    metrics.outcome(outcome.outcome);
    describe();
  };

  setHandler(bookProgressQuery, progress);
  const ended = () => status === 'completed' || status === 'cancelled';
  setHandler(
    pauseBookUpdate,
    (request) => {
      clock.woke();
      if (!paused && !cancelled) {
        paused = true;
        pausedSince = clock.now();
        status = 'paused';
        log.info('book refresh paused', { customerId, cadence, reason: request?.reason });
        describe();
      }
      return progress();
    },
    { validator: (_request) => { if (ended() || cancelled) throw new Error(`the refresh is ${cancelled ? 'being cancelled' : status}: nothing to pause`); }, description: 'Start no more connections until resumed; those in flight finish.' },
  );
  setHandler(
    resumeBookUpdate,
    (_request) => {
      clock.woke();
      if (paused) {
        paused = false;
        pausedMs += clock.now() - (pausedSince ?? clock.now());
        pausedSince = undefined;
        status = cancelled ? 'cancelling' : 'running';
        describe();
      }
      return progress();
    },
    { validator: (_request) => { if (ended() || cancelled) throw new Error(`the refresh is ${cancelled ? 'being cancelled' : status}: nothing to resume`); }, description: 'Start connections again after a pause.' },
  );
  setHandler(
    cancelBookUpdate,
    (request) => {
      clock.woke();
      cancelled ??= String(request?.reason ?? 'cancelled by an operator').slice(0, 300);
      status = 'cancelling';
      children.cancel();
      describe();
      return progress();
    },
    { validator: (_request) => { if (ended()) throw new Error(`the refresh has ${status}: nothing to cancel`); }, description: 'Start no more connections and cancel those in flight; the report is still written.' },
  );
  setHandler(
    resizeBookUpdate,
    (request: { readonly size?: number; readonly unpin?: boolean }) => {
      clock.woke();
      if (request.unpin) window.unpin(clock.now());
      else window.pin(request.size as number, clock.now());
      describe();
      return progress();
    },
    {
      validator: (request: { readonly size?: number; readonly unpin?: boolean } | undefined) => {
        if (ended()) throw new Error(`the refresh has ${status}: nothing to resize`);
        if (request?.unpin === true && request.size === undefined) return;
        const size = request?.size;
        if (!(Number.isInteger(size) && (size as number) >= WINDOW_LIMITS.min && (size as number) <= WINDOW_LIMITS.max)) {
          throw new Error(`size must be a whole number from ${WINDOW_LIMITS.min} to ${WINDOW_LIMITS.max} (or unpin: true alone), got ${JSON.stringify(size)}`);
        }
      },
      description: 'Pin the window at a size (an operator overrides the controller), or unpin it.',
    },
  );

  let lastThrottleCheck = Number.NEGATIVE_INFINITY;
  let lastFleetCheck = Number.NEGATIVE_INFINITY;
  /**
   * What the window hears from outside its children: whether the service throttled the tenant (at
   * most every throttleCheckMs) and the windows the other running books hold (every fleetCheckMs).
   * Called only from the refresh's own sequence (waiting for room, draining), never from a child's
   * completion: whether a local activity is still in flight is not the same on replay (its result is
   * in history at once), so no decision may hang on it; and each time is taken before the call, as
   * the time a result comes back is not the same on replay either.
   */
  const lookAround = async () => {
    const at = clock.now();
    if (at - lastThrottleCheck >= settings.control.throttleCheckMs) {
      lastThrottleCheck = at;
      const pause = await clock.local(() => book.tenantThrottle({ customerId }));
      if (pause) window.observeThrottle(pause.until, pause.reason, at);
    }
    if (sharesFleet && at - lastFleetCheck >= settings.control.fleetCheckMs) {
      lastFleetCheck = at;
      window.observeFleet(await clock.local(() => book.fleetWindows({ refreshWorkflowId: info.workflowId })), weight);
    }
  };

  const launch = (entry: Extract<BookPageEntry, { kind: 'refresh' }>) => {
    const workflowId = bookConnectionWorkflowId(customerId, entry.loginId, night);
    const askedAt = clock.now();
    inFlight.set(workflowId, { loginId: entry.loginId, askedAt });
    started += 1;
    const finish = (outcome: BookOutcome, timed: boolean, pollWaitMs = 0) => {
      const windowFull = inFlight.size >= window.size;
      inFlight.delete(workflowId);
      const durationMs = outcome.durationMs ?? 0;
      window.observeFinish(durationMs, timed, clock.now(), windowFull, durationMs - pollWaitMs);
      record(outcome);
    };
    void children
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
        clock.woke();
        window.observeStart(clock.now() - askedAt);
        return login.result();
      })
      .then(
        async (end) => {
          clock.woke();
          const base = { loginId: entry.loginId, workflowId, durationMs: clock.now() - askedAt };
          if (end.ended === 'completed') {
            finish({ ...base, outcome: 'refreshed' }, true, end.pollWaitMs);
            return undefined;
          }
          finish(end.ended === 'duplicate' ? { ...base, outcome: 'duplicate' } : await outcomeOfFailure(base, end.failureType), false);
          return undefined;
        },
        (error: unknown) => {
          clock.woke();
          const base = { loginId: entry.loginId, workflowId, durationMs: clock.now() - askedAt };
          // The login's workflow itself: its id taken this night, cancelled with the refresh, or ended by hand.
          if (error instanceof WorkflowExecutionAlreadyStartedError) finish({ ...base, outcome: 'duplicate' }, false);
          else if (isCancellation(error) || (error instanceof ChildWorkflowFailure && isCancellation(error.cause))) finish({ ...base, outcome: 'cancelled' }, false);
          else finish({ ...base, outcome: 'failed', failureType: error instanceof ChildWorkflowFailure ? failureTypeOf(error) : 'Unknown' }, false);
        },
      )
      .catch((error: unknown) => {
        // Only a bug lands here (every outcome is caught above): keep the window moving, and say so.
        log.error('book refresh: a child outcome could not be recorded', { workflowId, error: error instanceof Error ? error.message : String(error) });
        if (inFlight.delete(workflowId)) record({ loginId: entry.loginId, outcome: 'failed', workflowId, failureType: 'Unknown' });
      });
  };

  /** How a connection that did not complete is reported: needing its end user (flagged), forgotten, cancelled or failed. */
  const outcomeOfFailure = async (base: Pick<BookOutcome, 'loginId' | 'workflowId' | 'durationMs'>, failureType: string): Promise<BookOutcome> => {
    if (failureType === 'Cancelled') return { ...base, outcome: 'cancelled' };
    if (failureType === 'EndUserActionRequired') {
      // Left out of later nights until the pipeline enrols it again (after its end user signed in).
      await getExternalWorkflowHandle(bookEntryWorkflowId(customerId, base.loginId))
        .signal(flagEntrySignal, { reason: failureType, workflowId: base.workflowId ?? '', flaggedAt: clock.iso() })
        .catch(() => log.warn('book refresh: the entry to flag has gone', { loginId: base.loginId }));
      return { ...base, outcome: 'needs-end-user', failureType };
    }
    // A forget deletes the login's running connections: the login has left the book.
    if (failureType === 'Terminated' && (await clock.local(() => book.stillEnrolled({ customerId, loginIds: [base.loginId] }))).length === 0) return { ...base, outcome: 'forgotten' };
    return { ...base, outcome: 'failed', failureType };
  };

  // The page's logins that can start, and how far the loop got (a cancellation reports the rest).
  let refreshes: Extract<BookPageEntry, { kind: 'refresh' }>[] = [];
  let index = 0;
  describe();
  try {
    if (!carried) {
      total = await clock.local(() => book.countBook({ customerId, cadence }));
      log.info('book refresh started', { customerId, cadence, night, total });
    }
    const skippedAtStart = carried ? carried.skippedAtStart : scheduleId ? ((await clock.local(() => book.scheduleSkips({ scheduleId }))) ?? undefined) : undefined;
    const read = await clock.local(() => book.readBookPage({ customerId, cadence, pageSize, pageToken: carried?.pageToken }));
    await lookAround();
    refreshes = [];
    for (const entry of read.entries) {
      if (entry.kind === 'flagged') record({ loginId: entry.loginId, outcome: 'needs-end-user', problem: entry.flag });
      else if (entry.kind === 'malformed') {
        log.warn('book entry skipped: malformed record', { loginId: entry.loginId, problem: entry.problem });
        record({ loginId: entry.loginId, outcome: 'malformed', problem: entry.problem });
      } else refreshes.push(entry);
    }

    const enrolled = new Set<string>();
    let checkedUpTo = 0;
    for (; index < refreshes.length; index += 1) {
      await waitForRoom();
      if (cancelled) break;
      if (index >= checkedUpTo) {
        // A login forgotten since the page was read is skipped: checked in chunks, just before they start.
        const chunk = refreshes.slice(index, index + Math.min(ENROLMENT_CHECK_CHUNK, Math.max(window.size, 1)));
        for (const loginId of await clock.local(() => book.stillEnrolled({ customerId, loginIds: chunk.map((entry) => entry.loginId) }))) enrolled.add(loginId);
        checkedUpTo = index + chunk.length;
      }
      const entry = refreshes[index] as Extract<BookPageEntry, { kind: 'refresh' }>;
      if (!enrolled.has(entry.loginId)) {
        record({ loginId: entry.loginId, outcome: 'forgotten', problem: 'left the book after its page was read' });
        continue;
      }
      launch(entry);
    }
    // Logins of the page a cancellation kept from starting are reported as such.
    for (const entry of refreshes.slice(index)) record({ loginId: entry.loginId, outcome: 'cancelled', problem: `not started: ${cancelled ?? 'cancelled'}` });

    await drain();
    await writeReportPage();

    if (read.nextPageToken && !cancelled) {
      await condition(allHandlersFinished);
      log.info('book refresh: page done, continuing as new', { customerId, cadence, page, done: counts.done });
      // The next page's run starts on the current build (this one was pinned to the build it began on).
      return await makeContinueAsNewFunc<typeof bookRefreshWorkflow>({ initialVersioningBehavior: 'AUTO_UPGRADE' })({
        ...input,
        carried: {
          night,
          startedAt,
          page: page + 1,
          pageToken: read.nextPageToken,
          total,
          counts,
          started,
          drainMs,
          pausedMs: pausedMs + (pausedSince === undefined ? 0 : clock.now() - pausedSince),
          paused,
          window: window.carried,
          pages,
          skippedAtStart,
        },
      });
    }
    return await finishReport(skippedAtStart);
  } catch (error) {
    if (!isCancellation(error)) throw error;
    // Cancelled as a workflow (Web UI, `temporal workflow cancel`): the children were cancelled with
    // it; let them end, keep the page's outcomes and the report, as the cancel update does.
    cancelled ??= 'the refresh workflow was cancelled';
    status = 'cancelling';
    return await CancellationScope.nonCancellable(async () => {
      for (const entry of refreshes.slice(index)) record({ loginId: entry.loginId, outcome: 'cancelled', problem: `not started: ${cancelled ?? 'cancelled'}` });
      await drain();
      await writeReportPage();
      return finishReport(carried?.skippedAtStart);
    });
  }

  async function waitForRoom(): Promise<void> {
    // Before each start: a throttle or the other books' windows may change the room there is.
    await lookAround();
    await waitWatching(() => cancelled !== undefined || (!paused && inFlight.size < window.size));
  }

  async function drain(): Promise<void> {
    const since = clock.now();
    await waitWatching(() => inFlight.size === 0);
    drainMs += clock.now() - since;
  }

  /**
   * Waits for `ready`; while children are in flight and nothing moves for longer than a child
   * takes, looks at their ages (a stuck service shrinks the window before they end) and at a throttle.
   */
  async function waitWatching(ready: () => boolean): Promise<void> {
    for (;;) {
      const checkMs = paused || inFlight.size === 0 ? undefined : window.stallCheckMs;
      if (checkMs === undefined) {
        await condition(() => ready() || (!paused && inFlight.size > 0 && window.stallCheckMs !== undefined));
        if (ready()) return;
        continue;
      }
      if (await condition(ready, checkMs)) return;
      // The timer fired: its task's time.
      clock.woke();
      // A throttle first: children waiting out its Retry-After are not stuck.
      await lookAround();
      const now = clock.now();
      window.observeInFlight([...inFlight.values()].map((child) => now - child.askedAt), now);
      describe();
    }
  }

  async function writeReportPage(): Promise<void> {
    const workflowId = bookReportPageId(info.workflowId, page);
    try {
      await startChild<typeof bookReportPageWorkflow>('bookReportPageWorkflow', {
        workflowId,
        args: [{ refreshWorkflowId: info.workflowId, page, outcomes }],
        parentClosePolicy: ParentClosePolicy.ABANDON,
        typedSearchAttributes: [{ key: CustomerIdKey, value: customerId }],
        staticSummary: `Report page ${page} of ${info.workflowId}`,
      });
    } catch (error) {
      // Written already (a run retried after a reset): the record stands.
      if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
    }
    pages.push(workflowId);
  }

  async function finishReport(skippedAtStart: number | undefined): Promise<BookReport> {
    const skippedNow = scheduleId && skippedAtStart !== undefined ? await clock.local(() => book.scheduleSkips({ scheduleId })) : null;
    if (pausedSince !== undefined) pausedMs += clock.now() - pausedSince;
    pausedSince = undefined;
    status = cancelled ? 'cancelled' : 'completed';
    describe();
    const { inFlight: _inFlight, estimatedEnd: _estimatedEnd, updatedAt: _updatedAt, ...summary } = progress();
    const report: BookReport = {
      ...summary,
      endedAt: clock.iso(),
      pages,
      skippedWhileRunning: skippedNow === null || skippedAtStart === undefined ? 0 : Math.max(0, skippedNow - skippedAtStart),
      windowChanges: window.changes,
    };
    log.info('book refresh ended', { customerId, cadence, night, status, done: counts.done, refreshed: counts.refreshed, failed: counts.failed });
    await condition(allHandlersFinished);
    return report;
  }
}

/**
 * Pinned per page: a run (one page, minutes) finishes on the build it began on, so a deploy that
 * changes how the window decides never replays a run's history under other rules; each page's run
 * continues as new onto the current build (initialVersioningBehavior AUTO_UPGRADE). A refresh runs
 * for hours and still takes every deploy, a page later.
 */
setWorkflowOptions({ versioningBehavior: 'PINNED' }, bookRefreshWorkflow);
