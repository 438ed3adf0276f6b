/**
 * The handler of the `connections` Nexus service (src/contract/nexus-connections.ts).
 *
 * Tenant: the endpoint the operation was routed through (`operationInfo().endpoint`, which the
 * TypeScript SDK 1.24 fills from the Nexus task; Temporal server 1.30 or later sends it), mapped to a
 * customer id by config (NEXUS_ENDPOINT_TENANTS). A caller never names a tenant: an unmapped endpoint,
 * or an input naming another customer id, is refused with UNAUTHORIZED before anything runs.
 *
 * Payloads: the Nexus worker's codec seals what crosses the boundary under the caller's key
 * (boundary-codec.ts); `answer`, `state` and the checks before a start go through the pipeline
 * client (ConnectionsClient, BooksClient) over `productClient`, whose codec is the product's
 * (per-tenant keys), so nothing of the caller's key enters a connection's or a refresh's history,
 * and an answer is checked and refused here as it is everywhere else. The handler's own Temporal
 * calls are the relays' starts (one `startWorkflow` per operation) and, on a conflict, one describe
 * of its own relay.
 *
 * One at a time: `start` of a connection that is running, and `refreshBook` of a book whose refresh is
 * running, are refused with CONFLICT naming what runs (the contract says why). What runs under the
 * relay's own id (a retry of the same Nexus request) is not a conflict: Temporal deduplicates the
 * relay's start by the request's id and hands back the same operation.
 */
import * as nexus from 'nexus-rpc';
import { operationInfo, startWorkflow, WorkflowRunOperationHandler } from '@temporalio/nexus';
import type { Client } from '@temporalio/client';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import type { z } from 'zod';
import { parseOrRefuse } from '../validation/parse-or-refuse.js';
import type { AnswerOutcome, ConnectionResult, ConnectionState } from '../contract/connection/connection-definitions.js';
import { bookRefreshRunId, type BookRefreshInput, type BookReport } from '../contract/book/book-definitions.js';
import {
  connectionsNexusService,
  type NexusAnswerInput,
  type NexusConnectionRef,
  type NexusRefreshBookInput,
  type NexusStartInput,
} from '../contract/nexus-connections.js';
import { connectionClassOf, DEFAULT_PRIORITY_POLICY, startPriority, type PriorityPolicy } from '../contract/priority.js';
import { CONNECTION_WORKFLOW_ID_PREFIX } from '../client/business-key.js';
import { ConnectionsClient } from '../client/connections.js';
import { AnswerRejectedError, BookRefreshNotFoundError, ConnectionNotFoundError } from '../client/errors.js';
import {
  NexusAnswerInputSchema,
  NexusConnectionRefSchema,
  NexusParsedStartSchema,
  NexusRefreshBookInputSchema,
  NexusStartInputSchema,
} from './input-schemas.js';
import { bookRelayWorkflowId, NEXUS_BOOK_RELAY_WORKFLOW_TYPE, NEXUS_RELAY_WORKFLOW_TYPE, relayWorkflowId } from './relay-ids.js';
import type { BookRelayInput, RelayInput } from './relay-workflow.js';

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

function parse<T>(operation: string, schema: z.ZodType<T>, input: unknown): T {
  return parseOrRefuse(schema, input, (problem) => new nexus.HandlerError('BAD_REQUEST', `invalid input to ${operation}: ${problem}`));
}

/** CONFLICT, not retried: the same request would meet the same running workflow. */
function conflict(message: string, cause?: unknown): nexus.HandlerError {
  return new nexus.HandlerError('CONFLICT', message, { cause, retryableOverride: false });
}

/** What the operations share: the options, their defaults settled, and the pipeline client over the product's namespace. */
interface HandlerDeps {
  readonly options: ConnectionsHandlerOptions;
  readonly policy: PriorityPolicy;
  readonly refreshTaskQueue: string;
  /** What every other way in calls for the same action. */
  readonly connections: ConnectionsClient;
}

/** The endpoint's tenant, refusing a caller that names another. */
function tenantOf(endpointTenants: ReadonlyMap<string, string>, operation: string, named: unknown): string {
  const { endpoint } = operationInfo();
  if (!endpoint)
    throw new nexus.HandlerError(
      'UNAUTHORIZED',
      `tenant unknown: the server did not name the endpoint of this ${operation} (Temporal server 1.30 or later sends it)`,
    );
  const tenant = endpointTenants.get(endpoint);
  if (tenant === undefined)
    throw new nexus.HandlerError('UNAUTHORIZED', `tenant unknown: endpoint "${endpoint}" is mapped to no tenant (NEXUS_ENDPOINT_TENANTS)`);
  if (named !== undefined && named !== tenant)
    throw new nexus.HandlerError('UNAUTHORIZED', `tenant refused: endpoint "${endpoint}" acts for its own tenant only, not ${JSON.stringify(named)}`);
  return tenant;
}

function connectionId(tenant: string, applicationId: string): string {
  return `${CONNECTION_WORKFLOW_ID_PREFIX}${tenant}:${applicationId}`;
}

/** The client's typed errors as the caller's: a connection it cannot find, an answer refused before the service. */
function handlerErrorOf(error: unknown): unknown {
  if (error instanceof ConnectionNotFoundError) return new nexus.HandlerError('NOT_FOUND', `no connection ${error.workflowId}`, { cause: error });
  // Refused by the client's check or the update's validator, before it touched history: the caller's to fix.
  if (error instanceof AnswerRejectedError) return new nexus.HandlerError('BAD_REQUEST', `answer refused: ${error.problem}`, { cause: error });
  return error;
}

/** A running connection of this key that its relay did not start (the pipeline client, the console): CONFLICT. */
async function refuseRunningConnection(connections: ConnectionsClient, connectionWorkflowId: string, relayId: string): Promise<void> {
  const summary = await connections.describe(connectionWorkflowId).catch((error: unknown) => {
    if (error instanceof ConnectionNotFoundError) return undefined;
    throw error;
  });
  if (summary?.executionStatus === 'RUNNING' && summary.parentWorkflowId !== relayId) {
    throw conflict(
      `connection already running: ${connectionWorkflowId} (started outside this service); follow it with state and answer, or start another applicationId`,
    );
  }
}

/** `start`: the connection, through a relay whose payloads are sealed under the caller's key. */
function startOperation({ options, policy, connections }: HandlerDeps): WorkflowRunOperationHandler<NexusStartInput, ConnectionResult> {
  return new WorkflowRunOperationHandler<NexusStartInput, ConnectionResult>(async (ctx, raw) => {
    const { applicationId, connection } = parse('start', NexusStartInputSchema, raw);
    const tenant = tenantOf(options.endpointTenants, 'start', connection.customerId);
    const { connection: input } = parse('start', NexusParsedStartSchema, { applicationId, connection: { ...connection, customerId: tenant } });
    const connectionWorkflowId = connectionId(tenant, applicationId);
    const relayId = relayWorkflowId(tenant, applicationId);
    await refuseRunningConnection(connections, connectionWorkflowId, relayId);
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
        throw conflict(
          `connection already running: ${connectionWorkflowId} (started by another start operation); follow it with state and answer, or start another applicationId`,
          error,
        );
      }
      throw error;
    }
  });
}

/** The window and page size the book's Schedule refreshes it with, if it has one. */
async function scheduledSettings(
  connections: ConnectionsClient,
  tenant: string,
  cadence: string,
): Promise<Pick<BookRefreshInput, 'window' | 'pageSize'> | undefined> {
  try {
    const { window, pageSize } = await connections.books.describeSchedule({ customerId: tenant, cadence });
    return { window, pageSize };
  } catch (error) {
    if (error instanceof BookRefreshNotFoundError) return undefined;
    throw error;
  }
}

/**
 * The refresh a running relay started, named from the relay's start time as the relay names it
 * (relay-workflow.ts): one describe of the relay, no payload of the caller's read.
 */
async function refreshOfRelay(productClient: Client, relayId: string, tenant: string, cadence: string): Promise<string> {
  const { startTime } = await productClient.workflow.getHandle(relayId).describe();
  return bookRefreshRunId(tenant, cadence, startTime);
}

/** `refreshBook`: one refresh of the tenant's book at a time, through a relay; the window and page size the caller's, else its Schedule's. */
function refreshBookOperation({ options, policy, refreshTaskQueue, connections }: HandlerDeps): WorkflowRunOperationHandler<NexusRefreshBookInput, BookReport> {
  return new WorkflowRunOperationHandler<NexusRefreshBookInput, BookReport>(async (ctx, raw) => {
    const { cadence, customerId, window, pageSize } = parse('refreshBook', NexusRefreshBookInputSchema, raw);
    const tenant = tenantOf(options.endpointTenants, 'refreshBook', customerId);
    const relayId = bookRelayWorkflowId(tenant, cadence);
    const running = await connections.books.refreshes({ customerId: tenant, cadence, running: true, limit: 10 });
    // One at a time, as the Schedule's SKIP: a refresh its relay did not start (the Schedule, a run by hand) is not this caller's to wait on or cancel.
    const other = running.find((refresh) => refresh.parentWorkflowId !== relayId);
    if (other)
      throw conflict(
        `book refresh already running: ${other.refreshWorkflowId} (the ${cadence} book of this tenant: one refresh at a time); wait for it to end`,
      );
    const scheduled = window === undefined || pageSize === undefined ? await scheduledSettings(connections, tenant, cadence) : undefined;
    const chosenWindow = window ?? scheduled?.window;
    const chosenPageSize = pageSize ?? scheduled?.pageSize;
    const input: BookRefreshInput = {
      customerId: tenant,
      cadence,
      ...(chosenWindow ? { window: chosenWindow } : {}),
      ...(chosenPageSize === undefined ? {} : { pageSize: chosenPageSize }),
    };
    // A book refresh's class, as its Schedule and a run by hand start it with.
    const relay: BookRelayInput = { taskQueue: refreshTaskQueue, input, priority: startPriority(policy, 'scheduled', tenant) };
    try {
      return await startWorkflow(ctx, NEXUS_BOOK_RELAY_WORKFLOW_TYPE, { workflowId: relayId, args: [relay] });
    } catch (error) {
      if (error instanceof WorkflowExecutionAlreadyStartedError) {
        const own =
          running.find((refresh) => refresh.parentWorkflowId === relayId)?.refreshWorkflowId ??
          (await refreshOfRelay(options.productClient, relayId, tenant, cadence));
        throw conflict(`book refresh already running: ${own} (started by another refreshBook operation); wait for it to end`, error);
      }
      throw error;
    }
  });
}

export function connectionsServiceHandler(options: ConnectionsHandlerOptions): nexus.ServiceHandler<typeof connectionsNexusService.operations> {
  const policy = options.priority ?? DEFAULT_PRIORITY_POLICY;
  const refreshTaskQueue = options.refreshTaskQueue ?? options.productTaskQueue;
  const connections = new ConnectionsClient({
    client: options.productClient,
    taskQueue: options.productTaskQueue,
    unattendedTaskQueue: refreshTaskQueue,
    priority: policy,
  });
  const deps: HandlerDeps = { options, policy, refreshTaskQueue, connections };

  async function answer(_ctx: nexus.StartOperationContext, raw: NexusAnswerInput): Promise<AnswerOutcome> {
    const { applicationId, customerId, answer: given } = parse('answer', NexusAnswerInputSchema, raw);
    const workflowId = connectionId(tenantOf(options.endpointTenants, 'answer', customerId), applicationId);
    try {
      return await connections.answer(workflowId, given);
    } catch (error) {
      throw handlerErrorOf(error);
    }
  }

  async function state(_ctx: nexus.StartOperationContext, raw: NexusConnectionRef): Promise<ConnectionState> {
    const { applicationId, customerId } = parse('state', NexusConnectionRefSchema, raw);
    const workflowId = connectionId(tenantOf(options.endpointTenants, 'state', customerId), applicationId);
    try {
      return await connections.getState(workflowId);
    } catch (error) {
      throw handlerErrorOf(error);
    }
  }

  return nexus.serviceHandler(connectionsNexusService, { start: startOperation(deps), answer, state, refreshBook: refreshBookOperation(deps) });
}
