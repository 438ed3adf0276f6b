/**
 * The forget workflow's activities: each deletes one kind of thing the login left behind and says
 * what it found, so running them again (a second forget, a retried attempt) is harmless:
 * - the login's refresh schedule (Temporal);
 * - its place in its tenant's book (the book entry workflow ends);
 * - its retention timer (Temporal; only when the pipeline asked, not when the timer itself fired);
 * - its saved data at the service (DeleteCard; CARD_IN_USE and "not a saved login" are outcomes the
 *   workflow acts on, not errors);
 * - its connections: their payloads in the external payload store and their histories (which hold
 *   results under the payload store's threshold), found through visibility by LoginId.
 */
import { Context } from '@temporalio/activity';
import { isGrpcServiceError, ScheduleNotFoundError, WorkflowNotFoundError, type Client } from '@temporalio/client';
import { AggregatorServiceError } from '../aggregator/errors.js';
import { bookEntryWorkflowId, leaveBookSignal } from '../contract/book/book-definitions.js';
import { forgetWorkflowId, refreshScheduleId, retentionWorkflowId } from '../contract/login-keys.js';
import type { PayloadStoreDriver } from '../payload-store/payload-store-driver.js';
import { CONNECTION_WORKFLOW_TYPE } from '../contract/connection/connection-definitions.js';
import { FORGET_RECORD_MAX_IDS, type PayloadsForgotten } from '../contract/retention/forget-definitions.js';
import { CustomerIdKey, LoginIdKey } from '../contract/search-attributes.js';
import type { ClientForTenant } from './connection-activities.js';
import { NO_SERVICE_METRICS, type ServiceMetrics } from '../metrics/service-metrics.js';
import { failedCallOf, toActivityFailure } from './failures.js';
import { visibilityRows } from '../temporal/visibility-rows.js';

export interface ForgetActivitiesDeps {
  /** A client of the worker's own namespace (schedules, visibility, deletion). */
  readonly temporal: Client;
  readonly clientFor: ClientForTenant;
  /** The worker's payload store; undefined when PAYLOAD_STORE is off (nothing was stored). */
  readonly payloadStore?: PayloadStoreDriver | undefined;
  /** Counts DeleteCard's failures in aggregation_service_call_failures; none by default. */
  readonly metrics?: ServiceMetrics | undefined;
}

export interface LoginInput {
  readonly customerId: string;
  readonly loginId: string;
}

export type DeleteCardOutcome =
  | { readonly kind: 'deleted' }
  /** The service does not know the login as a saved login of this tenant: nothing left to delete. */
  | { readonly kind: 'not-found'; readonly message: string }
  /** A data operation of the card is still running: call again later. */
  | { readonly kind: 'card-in-use'; readonly message: string };

export interface ConnectionsForgotten {
  readonly count: number;
  /** At most FORGET_RECORD_MAX_IDS of them. */
  readonly workflowIds: string[];
  readonly payloads: PayloadsForgotten;
}

const GRPC_NOT_FOUND = 5;

/** A Keyword literal for a visibility query. */
function quoted(value: string): string {
  return JSON.stringify(value);
}

export function createForgetActivities({ temporal, clientFor, payloadStore, metrics = NO_SERVICE_METRICS }: ForgetActivitiesDeps) {
  const namespace = temporal.options.namespace;

  return {
    async deleteRefreshSchedule({ customerId, loginId }: LoginInput): Promise<'deleted' | 'none'> {
      try {
        await temporal.schedule.getHandle(refreshScheduleId(customerId, loginId)).delete();
        return 'deleted';
      } catch (error) {
        if (error instanceof ScheduleNotFoundError) return 'none';
        throw error;
      }
    },

    /** Takes the login out of its tenant's book (its entry ends), so no book refresh starts it again. */
    async leaveBook({ customerId, loginId }: LoginInput): Promise<'removed' | 'none'> {
      try {
        await temporal.workflow
          .getHandle(bookEntryWorkflowId(customerId, loginId))
          .signal(leaveBookSignal, { reason: `forgotten (${forgetWorkflowId(customerId, loginId)})` });
        return 'removed';
      } catch (error) {
        if (error instanceof WorkflowNotFoundError) return 'none';
        throw error;
      }
    },

    /** Cancels the login's running retention timer (a forget on request supersedes it). */
    async endRetentionTimer({ customerId, loginId }: LoginInput): Promise<'cancelled' | 'none'> {
      const handle = temporal.workflow.getHandle(retentionWorkflowId(customerId, loginId));
      try {
        const description = await handle.describe();
        if (description.status.name !== 'RUNNING') return 'none';
        await handle.cancel();
        return 'cancelled';
      } catch (error) {
        if (error instanceof WorkflowNotFoundError) return 'none';
        throw error;
      }
    },

    async deleteCard({ customerId, loginId }: LoginInput): Promise<DeleteCardOutcome> {
      try {
        await clientFor(customerId).deleteCard(loginId, { signal: Context.current().cancellationSignal });
        return { kind: 'deleted' };
      } catch (error) {
        if (error instanceof AggregatorServiceError && error.serviceCode === 'CARD_IN_USE') return { kind: 'card-in-use', message: error.message };
        if (error instanceof AggregatorServiceError && error.serviceCode === 'INVALID_LOGIN') return { kind: 'not-found', message: error.message };
        const failed = failedCallOf(error);
        if (failed) metrics.failed(failed);
        throw toActivityFailure(error);
      }
    },

    /**
     * Deletes every connection of the login (all runs, scheduled ones included): first its stored
     * payloads, then its history (a running one is terminated by the deletion). Heartbeats the count.
     */
    async deleteLoginConnections({ customerId, loginId }: LoginInput): Promise<ConnectionsForgotten> {
      const context = Context.current();
      const query = [
        `WorkflowType = ${quoted(CONNECTION_WORKFLOW_TYPE)}`,
        `${CustomerIdKey.name} = ${quoted(customerId)}`,
        `${LoginIdKey.name} = ${quoted(loginId)}`,
      ].join(' AND ');
      const forgetId = forgetWorkflowId(customerId, loginId);
      const workflowIds = new Set<string>();
      let payloads = 0;
      let count = 0;
      // Listed first, deleted after: deleting while paging could skip executions.
      const executions: { workflowId: string; runId: string }[] = [];
      // Raw rows, their memos never decoded: a row whose memo this worker cannot open (sealed with
      // another tenant's key) would fail the SDK's list, and the forget with it.
      for await (const execution of visibilityRows(temporal, query, 100)) {
        const workflowId = execution.execution?.workflowId ?? '';
        if (workflowId !== forgetId) executions.push({ workflowId, runId: execution.execution?.runId ?? '' });
      }
      for (const { workflowId, runId } of executions) {
        if (!workflowIds.has(workflowId)) {
          workflowIds.add(workflowId);
          if (payloadStore) payloads += await payloadStore.deleteWorkflowPayloads(workflowId, { namespace, abortSignal: context.cancellationSignal });
        }
        try {
          await temporal.workflowService.deleteWorkflowExecution({ namespace, workflowExecution: { workflowId, runId } });
        } catch (error) {
          if (!(isGrpcServiceError(error) && Number(error.code) === GRPC_NOT_FOUND)) throw error;
        }
        count += 1;
        context.heartbeat({ deleted: count, of: executions.length });
      }
      return {
        count,
        workflowIds: [...workflowIds].slice(0, FORGET_RECORD_MAX_IDS),
        payloads: payloadStore ? { store: payloadStore.location, deleted: payloads } : { store: 'off' },
      };
    },
  };
}

export type ForgetActivities = ReturnType<typeof createForgetActivities>;
