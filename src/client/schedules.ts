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
import { DEFAULT_PRIORITY_POLICY, type PriorityPolicy } from '../contract/priority.js';
import { ScheduleAlreadyRunning, ScheduleNotFoundError, type Client, type ScheduleDescription } from '@temporalio/client';
import { z } from 'zod';
import { parseOrRefuse } from '../validation/parse-or-refuse.js';
import { ConnectionInput } from '../contract/connection/connection-input.js';
import { isScheduledRefreshId, refreshScheduleId } from '../contract/login-keys.js';
import { describeEndUserChallenge } from '../workflows/connection/challenges.js';
import { CONNECTION_WORKFLOW_TYPE, type ConnectionResult } from '../contract/connection/connection-definitions.js';
import { CustomerIdKey, EndUserChallengeKey, LoginIdKey } from '../contract/search-attributes.js';
import type { ConnectionSummary } from './connection-summary.js';
import {
  ConnectionFailedError,
  InvalidScheduleError,
  RefreshNotUnattendedError,
  RefreshScheduleNotFoundError,
  RefreshScheduleNotReadyError,
  type ConnectionEndType,
} from './errors.js';
import { clientErrorOf } from './temporal-errors.js';
import { cadenceArgsOf, parseLoginRef, RefreshScheduleInput, type LoginRef, type RefreshScheduleArgs } from './refresh-schedule-input.js';
import { quoteVisibilityValue } from './visibility.js';
import { listedExecutions } from '../temporal/visibility-rows.js';
import { whileNotReady } from './schedule-readiness.js';
import { refreshScheduleOptions, summarizeRefresh, type RefreshScheduleSummary } from './login-schedule.js';

export type { LoginRef } from './refresh-schedule-input.js';

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

const DEFAULT_DESCRIBE_WAIT_MS = 10_000;
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
    const input = parseOrRefuse(RefreshScheduleInput, request, (problem, cause) => new InvalidScheduleError(problem, { cause }));
    const connectionInput = parseOrRefuse(
      ConnectionInput,
      {
        customerId: input.customerId,
        session: { kind: input.session, loginId: input.loginId },
        products: input.products,
        ...(input.timing ? { timing: input.timing } : {}),
        unattended: true,
      },
      (problem, cause) => new InvalidScheduleError(problem, { cause }),
    );

    const flag = await this.endUserFlag(input);
    if (flag) throw new RefreshNotUnattendedError(input.customerId, input.loginId, flag.challengeType, flag.workflowId, flag.reason);

    const scheduleId = refreshScheduleId(input.customerId, input.loginId);
    const { spec, identity, action, policies, note } = refreshScheduleOptions(input, connectionInput, scheduleId, this.taskQueue, this.priority);
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
        await whileNotReady(this.client, this.describeWaitMs, scheduleId, () =>
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
        products: connectionInput.products,
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
      const summary = summarizeRefresh(
        await whileNotReady(this.client, this.describeWaitMs, scheduleId, () => this.client.schedule.getHandle(scheduleId).describe()),
      );
      if (!summary) throw new RefreshScheduleNotFoundError(scheduleId);
      return summary;
    } catch (error) {
      throw this.mapError(scheduleId, error);
    }
  }

  /** Refresh schedules, e.g. every schedule of one tenant: `list({ customerId })`. */
  async list(filter: ListSchedulesFilter = {}): Promise<RefreshScheduleSummary[]> {
    const {
      limit = 100,
      customerId,
      loginId,
    } = parseOrRefuse(ListSchedulesFilter, filter, (problem, cause) => new InvalidScheduleError(`list filter: ${problem}`, { cause }));
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
          description = await whileNotReady(this.client, this.describeWaitMs, listed.scheduleId, () =>
            this.client.schedule.getHandle(listed.scheduleId).describe(),
          );
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

  private mapError(scheduleId: string | undefined, error: unknown): Error {
    return clientErrorOf(error, this.address, (known) =>
      known instanceof ScheduleNotFoundError && scheduleId !== undefined ? new RefreshScheduleNotFoundError(scheduleId, { cause: known }) : undefined,
    );
  }
}
