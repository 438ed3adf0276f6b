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
 */
import { DEFAULT_PRIORITY_POLICY, startPriority, type PriorityPolicy } from '../contract/priority.js';
import { ScheduleAlreadyRunning, ScheduleNotFoundError, ServiceError, type Client, type ScheduleDescription, type ScheduleOptions, type WorkflowStartOptions } from '@temporalio/client';
import { TypedSearchAttributes } from '@temporalio/common';
import { z } from 'zod';
import { describeIssues } from '../aggregator/schemas.js';
import { ConnectionInput, type ProductsInput } from '../contract/connection-input.js';
import { isScheduledRefreshId, refreshScheduleId } from '../contract/login-keys.js';
import { describeEndUserChallenge } from '../workflows/challenges.js';
import { CONNECTION_WORKFLOW_TYPE, type ConnectionResult } from '../contract/connection-definitions.js';
import { ConnectionStatusKey, CustomerIdKey, EndUserChallengeKey, LoginIdKey } from '../contract/search-attributes.js';
import type { ConnectionSummary } from './connection-summary.js';
import {
  ConnectionClientError,
  ConnectionFailedError,
  InvalidScheduleError,
  RefreshNotUnattendedError,
  RefreshScheduleNotFoundError,
  TemporalUnavailableError,
  type ConnectionEndType,
} from './errors.js';
import { formatDuration, parseLoginRef, RefreshScheduleInput, type LoginRef, type RefreshCadenceArgs, type RefreshScheduleArgs } from './refresh-schedule-input.js';
import { quoteVisibilityValue } from './visibility.js';

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

export class RefreshSchedules {
  private readonly client: Client;
  private readonly taskQueue: string;
  private readonly connections: ConnectionReads;
  private readonly address: string | undefined;
  private readonly priority: PriorityPolicy;

  constructor(options: RefreshSchedulesOptions) {
    this.client = options.client;
    this.taskQueue = options.taskQueue;
    this.connections = options.connections;
    this.address = options.address;
    this.priority = options.priority ?? DEFAULT_PRIORITY_POLICY;
  }

  /**
   * Schedules the refresh of a saved login, or replaces the login's schedule (its paused state is
   * kept unless `paused` is given). Refused with RefreshNotUnattendedError when the login is known to
   * need its end user; InvalidScheduleError names each bad field.
   */
  async schedule(request: RefreshScheduleArgs): Promise<RefreshScheduleSummary & { readonly created: boolean }> {
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
    try {
      await this.client.schedule.create({ scheduleId, spec, action, policies, state: { paused: input.paused, note }, typedSearchAttributes: identity });
      return { ...(await this.describe(input)), created: true };
    } catch (error) {
      if (!(error instanceof ScheduleAlreadyRunning)) throw this.mapError(scheduleId, error);
    }
    // The login already has a schedule: it now follows this request (paused state kept unless given).
    try {
      await this.client.schedule.getHandle(scheduleId).update((previous: ScheduleDescription) => ({
        spec,
        action,
        policies,
        state: { paused: request.paused === undefined ? previous.state.paused : input.paused, note },
        typedSearchAttributes: identity,
      }));
    } catch (error) {
      throw this.mapError(scheduleId, error);
    }
    return { ...(await this.describe(input)), created: false };
  }

  /** The login's schedule, with its upcoming and recent runs. */
  async describe(ref: LoginRef): Promise<RefreshScheduleSummary> {
    const { customerId, loginId } = parseLoginRef(ref);
    const scheduleId = refreshScheduleId(customerId, loginId);
    try {
      const summary = summarizeRefresh(await this.client.schedule.getHandle(scheduleId).describe());
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
          description = await this.client.schedule.getHandle(listed.scheduleId).describe();
        } catch (error) {
          if (error instanceof ScheduleNotFoundError) continue; // deleted since it was listed
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
    const latest = candidates.reduce<ConnectionSummary | undefined>((newest, run) => (newest === undefined || run.startedAt > newest.startedAt ? run : newest), undefined);
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
      for await (const info of this.client.workflow.list({ query, pageSize: 1 })) {
        const challengeType = info.typedSearchAttributes.get(EndUserChallengeKey) ?? 'unknown';
        return { challengeType, reason: `it needs its end user: ${describeEndUserChallenge(challengeType)}`, workflowId: info.workflowId, flaggedAt: info.startTime.toISOString() };
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

  private mapError(scheduleId: string | undefined, error: unknown): Error {
    if (error instanceof ConnectionClientError) return error;
    if (error instanceof ScheduleNotFoundError && scheduleId !== undefined) return new RefreshScheduleNotFoundError(scheduleId, { cause: error });
    if (error instanceof ServiceError) return TemporalUnavailableError.refused(this.address, error);
    return error instanceof Error ? error : new Error(String(error));
  }
}


/** A refresh schedule as the pipeline sees it, read back from its spec and action; undefined for another kind of schedule. */
function summarizeRefresh(schedule: ScheduleDescription): RefreshScheduleSummary | undefined {
  const action = schedule.action;
  const input = action.type === 'startWorkflow' && action.workflowType === CONNECTION_WORKFLOW_TYPE ? (action.args?.[0] as ConnectionInput | undefined) : undefined;
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
    recentRuns: schedule.info.recentActions.map((run) => ({ workflowId: run.action.workflow.workflowId, scheduledAt: run.scheduledAt.toISOString(), startedAt: run.takenAt.toISOString() })),
  };
}

/** The cadence a spec was made from (one calendar at HH:MM, or one interval). */
function cadenceOf(spec: ScheduleDescription['spec']): RefreshCadenceArgs | undefined {
  const jitter = formatDuration(spec.jitter ?? 0);
  const interval = spec.intervals?.[0];
  if (interval) return { kind: 'interval', every: formatDuration(Number(interval.every)), jitter };
  const calendar = spec.calendars?.[0];
  const hour = calendar?.hour[0]?.start;
  const minute = calendar?.minute[0]?.start;
  if (hour === undefined || minute === undefined) return undefined;
  return { kind: 'daily', at: `${String(hour).padStart(2, '0')}:${String(minute).padStart(2, '0')}`, timeZone: spec.timezone ?? 'UTC', jitter };
}
