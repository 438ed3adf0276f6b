/**
 * Scheduled refresh of saved logins: one Temporal Schedule per login of a tenant
 * (`refresh-<customerId>:<loginId>`), whose action is the ordinary connection workflow (a cached
 * session or a live refresh of the LoginId, with the products chosen here), marked unattended: a run
 * that meets a challenge ends at once as EndUserActionRequired and flags the login. Overlap policy
 * SKIP: a run still going when the next is due makes that one skip. Runs are workflows
 * `refresh-<customerId>:<loginId>-<scheduled time>`, findable by LoginId.
 *
 * A login known to need its end user (a connection of it met a two-step or trusted-device challenge,
 * or a scheduled run met any challenge; the EndUserChallenge search attribute) is refused up front
 * with RefreshNotUnattendedError.
 *
 * A schedule is described by querying the scheduler workflow behind it, which answers only once it
 * has run its first workflow task: on a server that has just started, that waits for the server's own
 * scheduler worker. Reads wait for it within `describeWaitMs`; a schedule written but not yet
 * describable is still reported as written (see `schedule`).
 */
import { setTimeout as delay } from 'node:timers/promises';
import { DEFAULT_PRIORITY_POLICY, startPriority, type PriorityPolicy } from '../contract/priority.js';
import {
  ScheduleAlreadyRunning,
  ScheduleNotFoundError,
  ServiceError,
  type Client,
  type ScheduleDescription,
  type ScheduleOptions,
  type WorkflowStartOptions,
} from '@temporalio/client';
import { TypedSearchAttributes } from '@temporalio/common';
import { z } from 'zod';
import { describeIssues } from '../aggregator/schemas.js';
import { ConnectionInput, type ProductsInput } from '../contract/connection/connection-input.js';
import { isScheduledRefreshId, refreshScheduleId } from '../contract/login-keys.js';
import { describeEndUserChallenge } from '../workflows/connection/challenges.js';
import { CONNECTION_WORKFLOW_TYPE, type ConnectionResult } from '../contract/connection/connection-definitions.js';
import { ConnectionStatusKey, CustomerIdKey, EndUserChallengeKey, LoginIdKey } from '../contract/search-attributes.js';
import type { ConnectionSummary } from './connection-summary.js';
import {
  ConnectionFailedError,
  InvalidScheduleError,
  RefreshNotUnattendedError,
  RefreshScheduleNotFoundError,
  RefreshScheduleNotReadyError,
  grpcCodeOf,
  type ConnectionEndType,
} from './errors.js';
import { clientErrorOf } from './temporal-errors.js';
import {
  cadenceArgsOf,
  formatCadenceDuration,
  parseLoginRef,
  RefreshScheduleInput,
  type LoginRef,
  type RefreshCadenceArgs,
  type RefreshScheduleArgs,
} from './refresh-schedule-input.js';
import { transientCodeOf } from './transient-retry.js';
import { quoteVisibilityValue } from './visibility.js';
import { listedExecutions } from '../temporal/visibility-rows.js';

export type { LoginRef } from './refresh-schedule-input.js';

/** A schedule as the pipeline sees it. */
export interface RefreshScheduleSummary {
  readonly scheduleId: string;
  readonly customerId: string;
  readonly loginId: string;
  readonly session: 'cached' | 'refresh';
  readonly products: ProductsInput;
  readonly cadence: RefreshCadenceArgs;
  readonly paused: boolean;
  readonly note?: string | undefined;
  /** Upcoming scheduled times (before jitter), ISO 8601. */
  readonly nextRunsAt: readonly string[];
  /** Most recent runs, oldest first. */
  readonly recentRuns: readonly { readonly workflowId: string; readonly scheduledAt: string; readonly startedAt: string }[];
}

/** What `schedule` answers: the schedule as read back after it was written, or as written when it could not be read back yet. */
export type ScheduledRefresh = RefreshScheduleSummary & {
  /** false when the login's schedule existed and was replaced. */
  readonly created: boolean;
  /**
   * Set when the schedule was written but could not be read back (its scheduler had not answered
   * yet, on a server that has just started): the summary is what was written, with no upcoming or
   * recent runs; `describe` has them once the scheduler answers.
   */
  readonly readBackError?: string | undefined;
};

/** Why a login cannot be refreshed unattended, from the connection that showed it. */
export interface EndUserFlag {
  readonly challengeType: string;
  readonly reason: string;
  readonly workflowId: string;
  readonly flaggedAt: string;
}

/** The latest connection of a login (scheduled run or not) and how it ended. */
export interface LatestRefresh extends ConnectionSummary {
  readonly trigger: 'schedule' | 'pipeline';
  readonly outcome:
    | { readonly kind: 'running' }
    | { readonly kind: 'completed'; readonly result: ConnectionResult }
    | { readonly kind: 'failed'; readonly type: ConnectionEndType; readonly reason: string; readonly serviceCode?: string | undefined };
}

/** The two reads of connections that the schedules make: ConnectionsClient's `list` and `result`. */
export interface ConnectionReads {
  list(filter: { readonly customerId: string; readonly loginId: string; readonly limit: number }): Promise<ConnectionSummary[]>;
  result(workflowId: string): Promise<ConnectionResult>;
}

export interface RefreshSchedulesOptions {
  readonly client: Client;
  readonly taskQueue: string;
  /** Reads the runs' results and failures, typed as ConnectionsClient types them (ConnectionsClient passes itself). */
  readonly connections: ConnectionReads;
  readonly address?: string | undefined;
  /** Scheduled runs start with the `scheduled` class's priority and the tenant's weight. */
  readonly priority?: PriorityPolicy | undefined;
  /** How long a read waits for a schedule whose scheduler has not answered yet; default 10 s (the server alone would hold it 30 s). */
  readonly describeWaitMs?: number | undefined;
}

const ListSchedulesFilter = z.strictObject({
  customerId: z.string().min(1).max(200).optional(),
  loginId: z.string().min(1).max(200).optional(),
  /** At most this many (default 100, at most 1000). */
  limit: z.number().int().min(1).max(1000).optional(),
});
export type ListSchedulesFilter = z.input<typeof ListSchedulesFilter>;

/** A run missed while Temporal was down is still taken within this window (then SKIP applies). */
const CATCHUP_WINDOW = '1 hour';

const DEFAULT_DESCRIBE_WAIT_MS = 10_000;
const NOT_READY_FIRST_BACKOFF_MS = 200;
const NOT_READY_MAX_BACKOFF_MS = 2_000;
const DEADLINE_SLACK_MS = 100;
/** gRPC codes (numbers fixed by the gRPC spec): FAILED_PRECONDITION is the server's WorkflowNotReady. */
const CANCELLED = 1;
const FAILED_PRECONDITION = 9;
/** WorkflowNotReady's messages for a query to a workflow that has not run (or keeps failing) its workflow task. */
const WORKFLOW_NOT_READY = /workflow task is not scheduled yet|workflow task in failed state|workflow state is not ready/i;

/**
 * The code of a refusal that says the schedule's scheduler has not answered yet, or undefined.
 * Until the scheduler's first workflow task has run, the server holds a describe's query and answers
 * DEADLINE_EXCEEDED when the call's deadline passes ("context deadline exceeded" after its own 30 s
 * without one), or refuses it as FAILED_PRECONDITION WorkflowNotReady; a server still starting may
 * also answer UNAVAILABLE or RESOURCE_EXHAUSTED.
 */
function notReadyCodeOf(error: unknown): string | undefined {
  const transient = transientCodeOf(error);
  if (transient !== undefined) return transient;
  const details = error instanceof ServiceError ? (error.cause as { details?: unknown } | undefined)?.details : undefined;
  return grpcCodeOf(error) === FAILED_PRECONDITION && typeof details === 'string' && WORKFLOW_NOT_READY.test(details) ? 'FAILED_PRECONDITION' : undefined;
}

export class RefreshSchedules {
  private readonly client: Client;
  private readonly taskQueue: string;
  private readonly connections: ConnectionReads;
  private readonly address: string | undefined;
  private readonly priority: PriorityPolicy;
  private readonly describeWaitMs: number;

  constructor(options: RefreshSchedulesOptions) {
    this.client = options.client;
    this.taskQueue = options.taskQueue;
    this.connections = options.connections;
    this.address = options.address;
    this.priority = options.priority ?? DEFAULT_PRIORITY_POLICY;
    this.describeWaitMs = options.describeWaitMs ?? DEFAULT_DESCRIBE_WAIT_MS;
  }

  /**
   * Schedules the refresh of a saved login, or replaces the login's schedule (its paused state is
   * kept unless `paused` is given). Refused with RefreshNotUnattendedError when the login is known to
   * need its end user; InvalidScheduleError names each bad field. Once Temporal has taken the schedule
   * this never throws: when it cannot be read back yet, the answer is what was written (`readBackError`).
   */
  async schedule(request: RefreshScheduleArgs): Promise<ScheduledRefresh> {
    const parsed = RefreshScheduleInput.safeParse(request);
    if (!parsed.success) throw new InvalidScheduleError(describeIssues(parsed.error), { cause: parsed.error });
    const input = parsed.data;
    const connectionInput = ConnectionInput.safeParse({
      customerId: input.customerId,
      session: { kind: input.session, loginId: input.loginId },
      products: input.products,
      ...(input.timing ? { timing: input.timing } : {}),
      unattended: true,
    });
    if (!connectionInput.success) throw new InvalidScheduleError(describeIssues(connectionInput.error), { cause: connectionInput.error });

    const flag = await this.endUserFlag(input);
    if (flag) throw new RefreshNotUnattendedError(input.customerId, input.loginId, flag.challengeType, flag.workflowId, flag.reason);

    const scheduleId = refreshScheduleId(input.customerId, input.loginId);
    const cadence = input.cadence;
    const spec: ScheduleOptions['spec'] =
      cadence.kind === 'daily'
        ? { calendars: [{ hour: cadence.at.hour, minute: cadence.at.minute }], timezone: cadence.timeZone, jitter: cadence.jitter }
        : { intervals: [{ every: cadence.every }], jitter: cadence.jitter };
    const identity = new TypedSearchAttributes([
      { key: CustomerIdKey, value: input.customerId },
      { key: LoginIdKey, value: input.loginId },
    ]);
    // SDK 1.24's action type omits `priority`, which its encoder reads (schedule-helpers compilePriority).
    const action: ScheduleOptions['action'] & Pick<WorkflowStartOptions, 'priority'> = {
      type: 'startWorkflow',
      workflowType: CONNECTION_WORKFLOW_TYPE,
      // Temporal appends each run's scheduled time, so every run has its own id.
      workflowId: scheduleId,
      taskQueue: this.taskQueue,
      args: [connectionInput.data],
      typedSearchAttributes: identity.updateCopy([{ key: ConnectionStatusKey, value: 'Authorizing' }]),
      staticSummary: `Scheduled ${input.session} refresh of login ${input.loginId}`,
      // Unattended: after live end users and pipelines, before forget and retention.
      priority: startPriority(this.priority, 'scheduled', input.customerId),
    };
    const policies: ScheduleOptions['policies'] = { overlap: 'SKIP', catchupWindow: CATCHUP_WINDOW, pauseOnFailure: false };
    const note = input.note ?? `${input.session} refresh of login ${input.loginId}`;
    let created = true;
    let paused = input.paused;
    try {
      await this.client.schedule.create({ scheduleId, spec, action, policies, state: { paused, note }, typedSearchAttributes: identity });
    } catch (error) {
      if (!(error instanceof ScheduleAlreadyRunning)) throw this.mapError(scheduleId, error);
      created = false;
    }
    if (!created) {
      // The login already has a schedule: it now follows this request (paused state kept unless given).
      // The SDK's update describes first, so it too waits for a scheduler that has not answered yet.
      try {
        await this.whileNotReady(scheduleId, () =>
          this.client.schedule.getHandle(scheduleId).update((previous: ScheduleDescription) => {
            paused = request.paused === undefined ? previous.state.paused : input.paused;
            return { spec, action, policies, state: { paused, note }, typedSearchAttributes: identity };
          }),
        );
      } catch (error) {
        throw this.mapError(scheduleId, error);
      }
    }
    // Temporal has the schedule: reading it back can no longer turn this call into a failure.
    try {
      return { ...(await this.describe(input)), created };
    } catch (error) {
      const written: RefreshScheduleSummary = {
        scheduleId,
        customerId: input.customerId,
        loginId: input.loginId,
        session: input.session,
        products: connectionInput.data.products,
        cadence: cadenceArgsOf(input.cadence),
        paused,
        note,
        nextRunsAt: [],
        recentRuns: [],
      };
      return { ...written, created, readBackError: error instanceof Error ? error.message : String(error) };
    }
  }

  /**
   * The login's schedule, with its upcoming and recent runs. RefreshScheduleNotReadyError when its
   * scheduler has not answered within `describeWaitMs` (a server that has just started).
   */
  async describe(ref: LoginRef): Promise<RefreshScheduleSummary> {
    const { customerId, loginId } = parseLoginRef(ref);
    const scheduleId = refreshScheduleId(customerId, loginId);
    try {
      const summary = summarizeRefresh(await this.whileNotReady(scheduleId, () => this.client.schedule.getHandle(scheduleId).describe()));
      if (!summary) throw new RefreshScheduleNotFoundError(scheduleId);
      return summary;
    } catch (error) {
      throw this.mapError(scheduleId, error);
    }
  }

  /** Refresh schedules, e.g. every schedule of one tenant: `list({ customerId })`. */
  async list(filter: ListSchedulesFilter = {}): Promise<RefreshScheduleSummary[]> {
    const parsed = ListSchedulesFilter.safeParse(filter);
    if (!parsed.success) throw new InvalidScheduleError(`list filter: ${describeIssues(parsed.error)}`, { cause: parsed.error });
    const { limit = 100, customerId, loginId } = parsed.data;
    const clauses: string[] = [];
    if (customerId !== undefined) clauses.push(`${CustomerIdKey.name} = ${quoteVisibilityValue(customerId)}`);
    if (loginId !== undefined) clauses.push(`${LoginIdKey.name} = ${quoteVisibilityValue(loginId)}`);
    const out: RefreshScheduleSummary[] = [];
    try {
      for await (const listed of this.client.schedule.list({ pageSize: Math.min(limit, 100), ...(clauses.length ? { query: clauses.join(' AND ') } : {}) })) {
        if (!listed.scheduleId.startsWith('refresh-')) continue;
        // The listing leaves out the action (session and products): each is described.
        let description: ScheduleDescription;
        try {
          description = await this.whileNotReady(listed.scheduleId, () => this.client.schedule.getHandle(listed.scheduleId).describe());
        } catch (error) {
          if (error instanceof ScheduleNotFoundError) continue; // deleted since it was listed
          // Just created, on a server that has just started: a later listing has it, as visibility's lag allows.
          if (error instanceof RefreshScheduleNotReadyError) continue;
          throw error;
        }
        const summary = summarizeRefresh(description);
        if (summary) out.push(summary);
        if (out.length >= limit) break;
      }
    } catch (error) {
      throw this.mapError(undefined, error);
    }
    return out;
  }

  /** Stops runs until unpaused (a note says why, in the Web UI too). */
  async pause(ref: LoginRef, note = 'paused by the pipeline'): Promise<void> {
    await this.onHandle(ref, (handle) => handle.pause(note));
  }

  async unpause(ref: LoginRef, note = 'unpaused by the pipeline'): Promise<void> {
    await this.onHandle(ref, (handle) => handle.unpause(note));
  }

  /** Runs the refresh now (skipped if a run is still going: overlap policy SKIP). */
  async trigger(ref: LoginRef): Promise<void> {
    await this.onHandle(ref, (handle) => handle.trigger());
  }

  /** Deletes the login's schedule (runs already started finish); 'none' when it had none. */
  async delete(ref: LoginRef): Promise<'deleted' | 'none'> {
    try {
      await this.onHandle(ref, (handle) => handle.delete());
      return 'deleted';
    } catch (error) {
      if (error instanceof RefreshScheduleNotFoundError) return 'none';
      throw error;
    }
  }

  /**
   * The login's most recent connection (a scheduled run or any other), found by LoginId in
   * visibility, with its result or failure; undefined when it has none (or they were forgotten).
   */
  async latestRefresh(ref: LoginRef): Promise<LatestRefresh | undefined> {
    const { customerId, loginId } = parseLoginRef(ref);
    const candidates = await this.connections.list({ customerId, loginId, limit: 100 });
    // Visibility lists running executions first, then by close time: the newest start is among them.
    const latest = candidates.reduce<ConnectionSummary | undefined>(
      (newest, run) => (newest === undefined || run.startedAt > newest.startedAt ? run : newest),
      undefined,
    );
    if (!latest) return undefined;
    const trigger = isScheduledRefreshId(latest.workflowId) ? 'schedule' : 'pipeline';
    if (latest.executionStatus === 'RUNNING') return { ...latest, trigger, outcome: { kind: 'running' } };
    try {
      return { ...latest, trigger, outcome: { kind: 'completed', result: await this.connections.result(latest.workflowId) } };
    } catch (error) {
      if (!(error instanceof ConnectionFailedError)) throw error;
      return { ...latest, trigger, outcome: { kind: 'failed', type: error.type, reason: error.reason, serviceCode: error.serviceCode } };
    }
  }

  /** Why the login cannot be refreshed unattended, or undefined when nothing says so. */
  async endUserFlag(ref: LoginRef): Promise<EndUserFlag | undefined> {
    const { customerId, loginId } = parseLoginRef(ref);
    const query = [
      `WorkflowType = ${quoteVisibilityValue(CONNECTION_WORKFLOW_TYPE)}`,
      `${CustomerIdKey.name} = ${quoteVisibilityValue(customerId)}`,
      `${LoginIdKey.name} = ${quoteVisibilityValue(loginId)}`,
      `${EndUserChallengeKey.name} IS NOT NULL`,
    ].join(' AND ');
    try {
      for await (const info of listedExecutions(this.client, query, 1)) {
        const challengeType = info.typedSearchAttributes.get(EndUserChallengeKey) ?? 'unknown';
        return {
          challengeType,
          reason: `it needs its end user: ${describeEndUserChallenge(challengeType)}`,
          workflowId: info.workflowId,
          flaggedAt: info.startTime.toISOString(),
        };
      }
    } catch (error) {
      throw this.mapError(undefined, error);
    }
    return undefined;
  }

  private async onHandle(ref: LoginRef, act: (handle: ReturnType<Client['schedule']['getHandle']>) => Promise<unknown>): Promise<void> {
    const { customerId, loginId } = parseLoginRef(ref);
    const scheduleId = refreshScheduleId(customerId, loginId);
    try {
      await act(this.client.schedule.getHandle(scheduleId));
    } catch (error) {
      throw this.mapError(scheduleId, error);
    }
  }

  /**
   * Runs `call` (a describe, or an update, which describes first) again while the schedule's
   * scheduler has not answered, until `describeWaitMs` has passed: then RefreshScheduleNotReadyError.
   * The deadline bounds each call too, since the server holds a query to such a scheduler for 30 s.
   */
  private async whileNotReady<T>(scheduleId: string, call: () => Promise<T>): Promise<T> {
    const startedAt = Date.now();
    const deadline = startedAt + this.describeWaitMs;
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.client.connection.withDeadline(deadline, call);
      } catch (error) {
        // Our deadline ended the call; when the server's cancel of it arrives first, grpc-js says CANCELLED
        // (the server's deadline and ours are the same instant, measured on two clocks).
        const endedByDeadline = grpcCodeOf(error) === CANCELLED && Date.now() + DEADLINE_SLACK_MS >= deadline;
        const code = notReadyCodeOf(error) ?? (endedByDeadline ? 'DEADLINE_EXCEEDED' : undefined);
        if (code === undefined) throw error;
        const now = Date.now();
        if (now >= deadline) throw new RefreshScheduleNotReadyError(scheduleId, code, attempt, now - startedAt, { cause: error });
        await delay(Math.min(NOT_READY_MAX_BACKOFF_MS, NOT_READY_FIRST_BACKOFF_MS * 2 ** Math.min(attempt - 1, 10), deadline - now));
      }
    }
  }

  private mapError(scheduleId: string | undefined, error: unknown): Error {
    return clientErrorOf(error, this.address, (known) =>
      known instanceof ScheduleNotFoundError && scheduleId !== undefined ? new RefreshScheduleNotFoundError(scheduleId, { cause: known }) : undefined,
    );
  }
}

/** A refresh schedule as the pipeline sees it, read back from its spec and action; undefined for another kind of schedule. */
function summarizeRefresh(schedule: ScheduleDescription): RefreshScheduleSummary | undefined {
  const action = schedule.action;
  const input =
    action.type === 'startWorkflow' && action.workflowType === CONNECTION_WORKFLOW_TYPE ? (action.args?.[0] as ConnectionInput | undefined) : undefined;
  const cadence = cadenceOf(schedule.spec);
  if (!input || input.session.kind === 'live' || !cadence) return undefined;
  return {
    scheduleId: schedule.scheduleId,
    customerId: input.customerId,
    loginId: input.session.loginId,
    session: input.session.kind,
    products: input.products,
    cadence,
    paused: schedule.state.paused,
    note: schedule.state.note,
    nextRunsAt: schedule.info.nextActionTimes.map((time) => time.toISOString()),
    recentRuns: schedule.info.recentActions.map((run) => ({
      workflowId: run.action.workflow.workflowId,
      scheduledAt: run.scheduledAt.toISOString(),
      startedAt: run.takenAt.toISOString(),
    })),
  };
}

/** The cadence a spec was made from (one calendar at HH:MM, or one interval). */
function cadenceOf(spec: ScheduleDescription['spec']): RefreshCadenceArgs | undefined {
  const jitter = formatCadenceDuration(spec.jitter ?? 0);
  const interval = spec.intervals?.[0];
  if (interval) return { kind: 'interval', every: formatCadenceDuration(Number(interval.every)), jitter };
  const calendar = spec.calendars?.[0];
  const hour = calendar?.hour[0]?.start;
  const minute = calendar?.minute[0]?.start;
  if (hour === undefined || minute === undefined) return undefined;
  return { kind: 'daily', at: `${String(hour).padStart(2, '0')}:${String(minute).padStart(2, '0')}`, timeZone: spec.timezone ?? 'UTC', jitter };
}
