/**
 * Forgetting saved logins: `forget` runs the forget workflow (`forget-<customerId>:<loginId>`) that
 * deletes the login's refresh schedule, ends its retention timer, calls DeleteCard (waiting out
 * CARD_IN_USE), and deletes its connections' stored payloads and histories, and returns the record
 * of what was deleted and when. Forgetting again runs again and succeeds (its record then says
 * "none" / "not-found"). Also: the records kept (by LoginId) and the login's retention timer.
 */
import { DEFAULT_PRIORITY_POLICY, startPriority, type PriorityPolicy } from '../contract/priority.js';
import { WorkflowFailedError, WorkflowNotFoundError, type Client } from '@temporalio/client';
import { TypedSearchAttributes } from '@temporalio/common';
import { forgetWorkflowId, retentionWorkflowId } from '../contract/login-keys.js';
import { FORGET_WORKFLOW_TYPE, type ForgetInput, type ForgetRecord, type ForgetTiming } from '../contract/retention/forget-definitions.js';
import { retentionStateQuery, type RetentionState } from '../contract/retention/retention-definitions.js';
import { CustomerIdKey, LoginIdKey } from '../contract/search-attributes.js';
import { ForgetFailedError, InvalidLoginRefError } from './errors.js';
import { clientErrorOf, endedHow } from './temporal-errors.js';
import { parseLoginRef, type LoginRef } from './refresh-schedule-input.js';
import { quoteVisibilityValue } from './visibility.js';
import { unreadableQueryError } from './unreadable-history.js';
import { listedExecutions } from '../temporal/visibility-rows.js';

export interface LoginsClientOptions {
  readonly client: Client;
  readonly taskQueue: string;
  readonly address?: string | undefined;
  /** Forgets start with the `maintenance` class's priority and the tenant's weight. */
  readonly priority?: PriorityPolicy | undefined;
}

export interface ForgetOptions {
  /** CARD_IN_USE waits (defaults: 30 s between DeleteCard calls, give up after 2 h). */
  readonly timing?: ForgetTiming | undefined;
}

/** One forget as visibility knows it, with its record once it completed. */
export interface ForgetRecordSummary {
  readonly workflowId: string;
  readonly runId: string;
  /** RUNNING, COMPLETED, FAILED, ... */
  readonly executionStatus: string;
  readonly startedAt: string;
  readonly closedAt?: string | undefined;
  readonly record?: ForgetRecord | undefined;
}

const MAX_TIMING_MS = 7 * 24 * 60 * 60_000;

export class LoginsClient {
  private readonly client: Client;
  private readonly taskQueue: string;
  private readonly address: string | undefined;
  private readonly priority: PriorityPolicy;

  constructor(options: LoginsClientOptions) {
    this.client = options.client;
    this.taskQueue = options.taskQueue;
    this.address = options.address;
    this.priority = options.priority ?? DEFAULT_PRIORITY_POLICY;
  }

  /** Forgets the login and waits for the record (a ForgetFailedError says why it could not finish). */
  async forget(ref: LoginRef, options: ForgetOptions = {}): Promise<ForgetRecord> {
    const { workflowId } = await this.startForget(ref, options);
    try {
      return (await this.client.workflow.getHandle(workflowId).result()) as ForgetRecord;
    } catch (error) {
      throw this.mapError(workflowId, error);
    }
  }

  /**
   * Starts forgetting the login and returns at once. A forget of the login already running is joined;
   * one that ended is run again (harmlessly: what is gone is reported as such).
   */
  async startForget(ref: LoginRef, options: ForgetOptions = {}): Promise<{ readonly workflowId: string }> {
    const { customerId, loginId } = parseLoginRef(ref);
    const timing = checkTiming(options.timing);
    const workflowId = forgetWorkflowId(customerId, loginId);
    const input: ForgetInput = { customerId, loginId, trigger: 'request', ...(timing ? { timing } : {}) };
    try {
      await this.client.workflow.start(FORGET_WORKFLOW_TYPE, {
        workflowId,
        taskQueue: this.taskQueue,
        args: [input],
        workflowIdConflictPolicy: 'USE_EXISTING',
        workflowIdReusePolicy: 'ALLOW_DUPLICATE',
        typedSearchAttributes: new TypedSearchAttributes([
          { key: CustomerIdKey, value: customerId },
          { key: LoginIdKey, value: loginId },
        ]),
        priority: startPriority(this.priority, 'maintenance', customerId),
      });
    } catch (error) {
      throw this.mapError(workflowId, error);
    }
    return { workflowId };
  }

  /** Every forget of the login that visibility still keeps, newest first, with its record when completed. */
  async forgetRecords(ref: LoginRef): Promise<ForgetRecordSummary[]> {
    const { customerId, loginId } = parseLoginRef(ref);
    const query = [
      `WorkflowType = ${quoteVisibilityValue(FORGET_WORKFLOW_TYPE)}`,
      `${CustomerIdKey.name} = ${quoteVisibilityValue(customerId)}`,
      `${LoginIdKey.name} = ${quoteVisibilityValue(loginId)}`,
    ].join(' AND ');
    const out: ForgetRecordSummary[] = [];
    try {
      // Without memos: a listing needs none, and one this process cannot open must not fail it.
      for await (const info of listedExecutions(this.client, query, 100)) {
        const completed = info.status.name === 'COMPLETED';
        const record = completed ? ((await this.client.workflow.getHandle(info.workflowId, info.runId).result()) as ForgetRecord) : undefined;
        out.push({
          workflowId: info.workflowId,
          runId: info.runId,
          executionStatus: info.status.name,
          startedAt: info.startTime.toISOString(),
          closedAt: info.closeTime?.toISOString(),
          record,
        });
      }
    } catch (error) {
      throw this.mapError(undefined, error);
    }
    return out.sort((a, b) => b.startedAt.localeCompare(a.startedAt));
  }

  /** The login's running retention timer (when it will be forgotten), or undefined when none runs. */
  async retention(ref: LoginRef): Promise<RetentionState | undefined> {
    const { customerId, loginId } = parseLoginRef(ref);
    const workflowId = retentionWorkflowId(customerId, loginId);
    const handle = this.client.workflow.getHandle(workflowId);
    try {
      const description = await handle.describe();
      if (description.status.name !== 'RUNNING') return undefined;
      return await handle.query(retentionStateQuery);
    } catch (error) {
      if (error instanceof WorkflowNotFoundError) return undefined;
      throw (await unreadableQueryError(this.client, workflowId, error)) ?? this.mapError(workflowId, error);
    }
  }

  private mapError(workflowId: string | undefined, error: unknown): Error {
    return clientErrorOf(error, this.address, (known) =>
      known instanceof WorkflowFailedError && workflowId !== undefined
        ? new ForgetFailedError(workflowId, endedHow(known.cause), known.cause?.message ?? known.message, { cause: known })
        : undefined,
    );
  }
}

function checkTiming(timing: ForgetTiming | undefined): ForgetTiming | undefined {
  if (timing === undefined) return undefined;
  for (const name of ['cardInUseRetryMs', 'cardInUseTimeoutMs'] as const) {
    const value = timing[name];
    if (value !== undefined && !(Number.isInteger(value) && value >= 1 && value <= MAX_TIMING_MS)) {
      throw new InvalidLoginRefError(`timing.${name}: must be a whole number of ms from 1 to ${MAX_TIMING_MS}`);
    }
  }
  return timing;
}
