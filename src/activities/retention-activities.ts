/**
 * The retention policy's side of a connection: after every successful retrieval, the login's
 * retention timer is started or pushed back (a signal-with-start), so it forgets the login N days
 * after its last retrieval. Tenants without a policy: nothing is called, nothing started; a timer
 * left from when they had one reads the policy again when due, before it forgets.
 */
import type { Client } from '@temporalio/client';
import { TypedSearchAttributes } from '@temporalio/common';
import { retentionWorkflowId } from '../contract/login-keys.js';
import { DEFAULT_PRIORITY_POLICY, startPriority, type PriorityPolicy } from '../contract/priority.js';
import { RETENTION_WORKFLOW_TYPE, retrievalNoticeSignal, type RetentionInput, type RetrievalNotice } from '../contract/retention/retention-definitions.js';
import { CustomerIdKey, LoginIdKey } from '../contract/search-attributes.js';

export interface RetentionActivitiesDeps {
  /** A client of the worker's own namespace. */
  readonly temporal: Client;
  /** Where retention timers run: the worker's task queue. */
  readonly taskQueue: string;
  /** Days a tenant keeps a login after its last retrieval; undefined: no policy (the default). */
  readonly retentionDays: (customerId: string) => number | undefined;
  /** Retention timers (and the forgets they start, which inherit it) run last: the `maintenance` class. */
  readonly priority?: PriorityPolicy | undefined;
}

export interface NoteRetrievalInput {
  readonly customerId: string;
  readonly loginId: string;
  /** When the connection retrieved the data (workflow time). */
  readonly at: string;
  readonly workflowId: string;
}

export function createRetentionActivities({ temporal, taskQueue, retentionDays, priority = DEFAULT_PRIORITY_POLICY }: RetentionActivitiesDeps) {
  return {
    /** The tenant's policy now (read when a timer is due, so a policy changed since the last retrieval applies); null: none. */
    // Async: activities return promises, and the worker awaits it like any other.
    // eslint-disable-next-line @typescript-eslint/require-await
    async retentionDaysFor({ customerId }: { readonly customerId: string }): Promise<number | null> {
      return retentionDays(customerId) ?? null;
    },

    /** Starts or pushes back the login's retention timer; 'off' when the tenant has no policy. */
    async noteRetrieval({ customerId, loginId, at, workflowId }: NoteRetrievalInput): Promise<'noted' | 'off'> {
      const days = retentionDays(customerId);
      // No policy (the default): no call at all. A timer left from when the tenant had one reads the
      // policy again when it is due (retentionDaysFor) and ends without forgetting.
      if (days === undefined) return 'off';
      const timerId = retentionWorkflowId(customerId, loginId);
      const notice: RetrievalNotice = { at, days, workflowId };
      const input: RetentionInput = { customerId, loginId };
      await temporal.workflow.signalWithStart(RETENTION_WORKFLOW_TYPE, {
        workflowId: timerId,
        taskQueue,
        args: [input],
        signal: retrievalNoticeSignal,
        signalArgs: [notice],
        typedSearchAttributes: new TypedSearchAttributes([
          { key: CustomerIdKey, value: customerId },
          { key: LoginIdKey, value: loginId },
        ]),
        priority: startPriority(priority, 'maintenance', customerId),
      });
      return 'noted';
    },
  };
}

export type RetentionActivities = ReturnType<typeof createRetentionActivities>;
