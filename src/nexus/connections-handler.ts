/**
 * The handler of the `connections` Nexus service (src/contract/nexus-connections.ts).
 *
 * Tenant: the endpoint the operation was routed through (`operationInfo().endpoint`, which the
 * TypeScript SDK 1.24 fills from the Nexus task; Temporal server 1.30 or later sends it), mapped to a
 * customer id by config (NEXUS_ENDPOINT_TENANTS). A caller never names a tenant: an unmapped endpoint,
 * or an input naming another customer id, is refused with UNAUTHORIZED before anything runs.
 *
 * Payloads: the Nexus worker's codec seals what crosses the boundary under the caller's key
 * (boundary-codec.ts); `answer`, `state` and the checks before a start reach the product's workflows
 * through `productClient`, whose codec is the product's (per-tenant keys), so nothing of the caller's
 * key enters a connection's or a refresh's history.
 *
 * One at a time: `start` of a connection that is running, and `refreshBook` of a book whose refresh is
 * running, are refused with CONFLICT naming what runs (the contract says why). What runs under the
 * relay's own id (a retry of the same Nexus request) is not a conflict: Temporal deduplicates the
 * relay's start by the request's id and hands back the same operation.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import * as nexus from 'nexus-rpc';
import { operationInfo, startWorkflow, WorkflowRunOperationHandler } from '@temporalio/nexus';
import { ScheduleNotFoundError, WorkflowNotFoundError, WorkflowUpdateFailedError, type Client } from '@temporalio/client';
import { ApplicationFailure, WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import type { z } from 'zod';
import { describeIssues } from '../aggregator/schemas.js';
import { connectionStateQuery, submitAnswerUpdate, type AnswerOutcome, type ConnectionResult, type ConnectionState } from '../contract/connection/connection-definitions.js';
import { bookRefreshRunId, bookRefreshesQuery, bookScheduleId, type BookRefreshInput, type BookReport } from '../contract/book/book-definitions.js';
import {
  connectionsNexusService,
  type NexusAnswerInput,
  type NexusConnectionRef,
  type NexusRefreshBookInput,
  type NexusStartInput,
} from '../contract/nexus-connections.js';
import { connectionClassOf, DEFAULT_PRIORITY_POLICY, startPriority, type PriorityPolicy } from '../contract/priority.js';
import { CONNECTION_WORKFLOW_ID_PREFIX } from '../client/business-key.js';
import { NexusAnswerInputSchema, NexusConnectionRefSchema, NexusParsedStartSchema, NexusRefreshBookInputSchema, NexusStartInputSchema } from './input-schemas.js';
import { bookRelayWorkflowId, NEXUS_BOOK_RELAY_WORKFLOW_TYPE, NEXUS_RELAY_WORKFLOW_TYPE, relayWorkflowId } from './relay-ids.js';
import type { BookRelayInput, RelayInput } from './relay-workflow.js';
import { listedExecutions } from '../temporal/visibility-rows.js';

export interface ConnectionsHandlerOptions {
  /** Endpoint name → the customer id its caller acts for. */
  readonly endpointTenants: ReadonlyMap<string, string>;
  /** A client of the product's namespace with the product's data converter (answers, state, the checks before a start). */
  readonly productClient: Client;
  /** The product's task queue, where connections run. */
  readonly productTaskQueue: string;
  /** Where book refreshes run (UNATTENDED_POOL=separate: the unattended pool's queue); default `productTaskQueue`. */
  readonly refreshTaskQueue?: string | undefined;
  readonly priority?: PriorityPolicy | undefined;
}

function badRequest(operation: string, error: z.ZodError): nexus.HandlerError {
  return new nexus.HandlerError('BAD_REQUEST', `invalid input to ${operation}: ${describeIssues(error)}`);
}

function parse<T>(operation: string, schema: z.ZodType<T>, input: unknown): T {
  const parsed = schema.safeParse(input);
  if (!parsed.success) throw badRequest(operation, parsed.error);
  return parsed.data;
}

/** CONFLICT, not retried: the same request would meet the same running workflow. */
function conflict(message: string, cause?: unknown): nexus.HandlerError {
  return new nexus.HandlerError('CONFLICT', message, { cause, retryableOverride: false });
}

export function connectionsServiceHandler(options: ConnectionsHandlerOptions): nexus.ServiceHandler<typeof connectionsNexusService.operations> {
  const policy = options.priority ?? DEFAULT_PRIORITY_POLICY;
  const refreshTaskQueue = options.refreshTaskQueue ?? options.productTaskQueue;

  /** The endpoint's tenant, refusing a caller that names another. */
  function tenantOf(operation: string, named: unknown): string {
    const { endpoint } = operationInfo();
    if (!endpoint) throw new nexus.HandlerError('UNAUTHORIZED', `tenant unknown: the server did not name the endpoint of this ${operation} (Temporal server 1.30 or later sends it)`);
    const tenant = options.endpointTenants.get(endpoint);
    if (tenant === undefined) throw new nexus.HandlerError('UNAUTHORIZED', `tenant unknown: endpoint "${endpoint}" is mapped to no tenant (NEXUS_ENDPOINT_TENANTS)`);
    if (named !== undefined && named !== tenant) throw new nexus.HandlerError('UNAUTHORIZED', `tenant refused: endpoint "${endpoint}" acts for its own tenant only, not ${JSON.stringify(named)}`);
    return tenant;
  }

  function connectionId(tenant: string, applicationId: string): string {
    return `${CONNECTION_WORKFLOW_ID_PREFIX}${tenant}:${applicationId}`;
  }

  function mapClientError(workflowId: string, error: unknown): never {
    if (error instanceof WorkflowNotFoundError) throw new nexus.HandlerError('NOT_FOUND', `no connection ${workflowId}`, { cause: error });
    throw error;
  }

  /** A running connection of this key that its relay did not start (the pipeline client, the console): CONFLICT. */
  async function refuseRunningConnection(connectionWorkflowId: string, relayId: string): Promise<void> {
    const description = await options.productClient.workflow
      .getHandle(connectionWorkflowId)
      .describe()
      .catch((error: unknown) => {
        if (error instanceof WorkflowNotFoundError) return undefined;
        throw error;
      });
    if (description?.status.name === 'RUNNING' && description.parentExecution?.workflowId !== relayId) {
      throw conflict(`connection already running: ${connectionWorkflowId} (started outside this service); follow it with state and answer, or start another applicationId`);
    }
  }

  const start = new WorkflowRunOperationHandler<NexusStartInput, ConnectionResult>(async (ctx, raw) => {
    const { applicationId, connection } = parse('start', NexusStartInputSchema, raw);
    const tenant = tenantOf('start', connection.customerId);
    const { connection: input } = parse('start', NexusParsedStartSchema, { applicationId, connection: { ...connection, customerId: tenant } });
    const connectionWorkflowId = connectionId(tenant, applicationId);
    const relayId = relayWorkflowId(tenant, applicationId);
    await refuseRunningConnection(connectionWorkflowId, relayId);
    const relay: RelayInput = {
      connectionWorkflowId,
      taskQueue: options.productTaskQueue,
      input,
      priority: startPriority(policy, connectionClassOf(input), tenant),
    };
    try {
      // On this worker's task queue (the relay is in its bundle); its payloads sealed under the caller's key.
      return await startWorkflow(ctx, NEXUS_RELAY_WORKFLOW_TYPE, { workflowId: relayId, args: [relay] });
    } catch (error) {
      if (error instanceof WorkflowExecutionAlreadyStartedError) {
        throw conflict(`connection already running: ${connectionWorkflowId} (started by another start operation); follow it with state and answer, or start another applicationId`, error);
      }
      throw error;
    }
  });

  async function answer(_ctx: nexus.StartOperationContext, raw: NexusAnswerInput): Promise<AnswerOutcome> {
    const { applicationId, customerId, answer: given } = parse('answer', NexusAnswerInputSchema, raw);
    const workflowId = connectionId(tenantOf('answer', customerId), applicationId);
    try {
      return await options.productClient.workflow.getHandle(workflowId).executeUpdate(submitAnswerUpdate, { args: [{ ...given, sentAs: 'submitAnswer' }] });
    } catch (error) {
      // The update's validator refused the answer before it touched history: the caller's to fix.
      if (error instanceof WorkflowUpdateFailedError && error.cause instanceof ApplicationFailure) {
        throw new nexus.HandlerError('BAD_REQUEST', `answer refused: ${error.cause.message}`);
      }
      return mapClientError(workflowId, error);
    }
  }

  async function state(_ctx: nexus.StartOperationContext, raw: NexusConnectionRef): Promise<ConnectionState> {
    const { applicationId, customerId } = parse('state', NexusConnectionRefSchema, raw);
    const workflowId = connectionId(tenantOf('state', customerId), applicationId);
    try {
      return await options.productClient.workflow.getHandle(workflowId).query(connectionStateQuery);
    } catch (error) {
      return mapClientError(workflowId, error);
    }
  }

  /** The book's running refreshes (visibility, as BooksClient.refreshes reads them), with the workflow that started each, if any. */
  async function runningRefreshes(tenant: string, cadence: string): Promise<{ workflowId: string; parent: string | undefined }[]> {
    const query = bookRefreshesQuery(tenant, cadence, true);
    const running: { workflowId: string; parent: string | undefined }[] = [];
    for await (const info of listedExecutions(options.productClient, query, 10)) {
      running.push({ workflowId: info.workflowId, parent: info.parentExecution?.workflowId ?? undefined });
      if (running.length >= 10) break;
    }
    return running;
  }

  /**
   * The refresh a running relay started: its pending child, as the server describes the relay (no
   * payload of the caller's is read). A relay started a moment ago may not have started it yet: asked
   * again for up to 2 s, then undefined.
   */
  async function childOfRelay(relayId: string): Promise<string | undefined> {
    for (let attempt = 0; attempt < 10; attempt += 1) {
      try {
        const { raw, status } = await options.productClient.workflow.getHandle(relayId).describe();
        const child = raw.pendingChildren?.find((pending) => pending.workflowId)?.workflowId;
        if (child) return child;
        if (status.name !== 'RUNNING') return undefined;
      } catch {
        return undefined;
      }
      await sleep(200);
    }
    return undefined;
  }

  /** The window and page size the book's Schedule refreshes it with, if it has one. */
  async function scheduledSettings(tenant: string, cadence: string): Promise<Pick<BookRefreshInput, 'window' | 'pageSize'> | undefined> {
    try {
      const { action } = await options.productClient.schedule.getHandle(bookScheduleId(tenant, cadence)).describe();
      const scheduled = action.type === 'startWorkflow' ? (action.args?.[0] as BookRefreshInput | undefined) : undefined;
      return scheduled ? { window: scheduled.window, pageSize: scheduled.pageSize } : undefined;
    } catch (error) {
      if (error instanceof ScheduleNotFoundError) return undefined;
      throw error;
    }
  }

  const refreshBook = new WorkflowRunOperationHandler<NexusRefreshBookInput, BookReport>(async (ctx, raw) => {
    const { cadence, customerId, window, pageSize } = parse('refreshBook', NexusRefreshBookInputSchema, raw);
    const tenant = tenantOf('refreshBook', customerId);
    const relayId = bookRelayWorkflowId(tenant, cadence);
    const running = await runningRefreshes(tenant, cadence);
    // One at a time, as the Schedule's SKIP: a refresh its relay did not start (the Schedule, a run by hand) is not this caller's to wait on or cancel.
    const other = running.find((refresh) => refresh.parent !== relayId);
    if (other) throw conflict(`book refresh already running: ${other.workflowId} (the ${cadence} book of this tenant: one refresh at a time); wait for it to end`);
    const scheduled = window === undefined || pageSize === undefined ? await scheduledSettings(tenant, cadence) : undefined;
    const chosenWindow = window ?? scheduled?.window;
    const chosenPageSize = pageSize ?? scheduled?.pageSize;
    const input: BookRefreshInput = {
      customerId: tenant,
      cadence,
      ...(chosenWindow ? { window: chosenWindow } : {}),
      ...(chosenPageSize === undefined ? {} : { pageSize: chosenPageSize }),
    };
    const relay: BookRelayInput = {
      refreshWorkflowId: bookRefreshRunId(tenant, cadence, new Date()),
      taskQueue: refreshTaskQueue,
      input,
      // A book refresh's class, as its Schedule and a run by hand start it with.
      priority: startPriority(policy, 'scheduled', tenant),
    };
    try {
      return await startWorkflow(ctx, NEXUS_BOOK_RELAY_WORKFLOW_TYPE, { workflowId: relayId, args: [relay] });
    } catch (error) {
      if (error instanceof WorkflowExecutionAlreadyStartedError) {
        const own = (await childOfRelay(relayId)) ?? running.find((refresh) => refresh.parent === relayId)?.workflowId ?? `the refresh of ${relayId}`;
        throw conflict(`book refresh already running: ${own} (started by another refreshBook operation); wait for it to end`, error);
      }
      throw error;
    }
  });

  return nexus.serviceHandler(connectionsNexusService, { start, answer, state, refreshBook });
}
