/**
 * The handler of the `connections` Nexus service (src/contract/nexus-connections.ts).
 *
 * Tenant: the endpoint the operation was routed through (`operationInfo().endpoint`, which the
 * TypeScript SDK 1.24 fills from the Nexus task; Temporal server 1.30 or later sends it), mapped to a
 * customer id by config (NEXUS_ENDPOINT_TENANTS). A caller never names a tenant: an unmapped endpoint,
 * or an input naming another customer id, is refused with UNAUTHORIZED before anything runs.
 *
 * Payloads: the Nexus worker's codec seals what crosses the boundary under the caller's key
 * (boundary-codec.ts); `answer` and `state` reach the connection through `productClient`, whose codec
 * is the product's (per-tenant keys), so nothing of the caller's key enters a connection's history.
 */
import { z } from 'zod';
import * as nexus from 'nexus-rpc';
import { operationInfo, startWorkflow, WorkflowRunOperationHandler } from '@temporalio/nexus';
import { WorkflowNotFoundError, WorkflowUpdateFailedError, type Client } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { describeIssues, SecurityResponses } from '../aggregator/schemas.js';
import { ConnectionInput } from '../contract/connection-input.js';
import { connectionStateQuery, submitAnswerUpdate, type AnswerOutcome, type ConnectionState } from '../contract/connection-definitions.js';
import { connectionsNexusService, type NexusAnswerInput, type NexusConnectionRef, type NexusStartInput } from '../contract/nexus-connections.js';
import { connectionClassOf, DEFAULT_PRIORITY_POLICY, startPriority, type PriorityPolicy } from '../contract/priority.js';
import { CONNECTION_WORKFLOW_ID_PREFIX, KeySegment } from '../client/business-key.js';
import { NEXUS_RELAY_WORKFLOW_TYPE, relayWorkflowId } from './relay-ids.js';
import type { nexusConnectionRelay, RelayInput } from './relay-workflow.js';

export interface ConnectionsHandlerOptions {
  /** Endpoint name → the customer id its caller acts for. */
  readonly endpointTenants: ReadonlyMap<string, string>;
  /** A client of the product's namespace with the product's data converter (answers and state). */
  readonly productClient: Client;
  /** The product's task queue, where connections run. */
  readonly productTaskQueue: string;
  readonly priority?: PriorityPolicy | undefined;
}

const ConnectionRef = z.strictObject({ applicationId: KeySegment, customerId: z.string().optional() });
const StartInput = z.strictObject({ applicationId: KeySegment, connection: z.record(z.string(), z.unknown()) });
const ParsedStart = z.strictObject({ applicationId: KeySegment, connection: ConnectionInput });
const AnswerInput = ConnectionRef.extend({
  answer: z.strictObject({ challengeSetId: z.string().min(1, { message: 'must not be empty' }), responses: SecurityResponses }),
});

function badRequest(operation: string, error: z.ZodError): nexus.HandlerError {
  return new nexus.HandlerError('BAD_REQUEST', `invalid input to ${operation}: ${describeIssues(error)}`);
}

function parse<T>(operation: string, schema: z.ZodType<T>, input: unknown): T {
  const parsed = schema.safeParse(input);
  if (!parsed.success) throw badRequest(operation, parsed.error);
  return parsed.data;
}

export function connectionsServiceHandler(options: ConnectionsHandlerOptions): nexus.ServiceHandler<typeof connectionsNexusService.operations> {
  const policy = options.priority ?? DEFAULT_PRIORITY_POLICY;

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

  const start = new WorkflowRunOperationHandler<NexusStartInput, Awaited<ReturnType<typeof nexusConnectionRelay>>>(async (ctx, raw) => {
    const { applicationId, connection } = parse('start', StartInput, raw);
    const tenant = tenantOf('start', connection.customerId);
    const { connection: input } = parse('start', ParsedStart, { applicationId, connection: { ...connection, customerId: tenant } });
    const relay: RelayInput = {
      connectionWorkflowId: connectionId(tenant, applicationId),
      taskQueue: options.productTaskQueue,
      input,
      priority: startPriority(policy, connectionClassOf(input), tenant),
    };
    // On this worker's task queue (the relay is in its bundle); its payloads sealed under the caller's key.
    return await startWorkflow(ctx, NEXUS_RELAY_WORKFLOW_TYPE, { workflowId: relayWorkflowId(tenant, applicationId), args: [relay] });
  });

  async function answer(_ctx: nexus.StartOperationContext, raw: NexusAnswerInput): Promise<AnswerOutcome> {
    const { applicationId, customerId, answer: given } = parse('answer', AnswerInput, raw);
    const workflowId = connectionId(tenantOf('answer', customerId), applicationId);
    try {
      return await options.productClient.workflow.getHandle(workflowId).executeUpdate(submitAnswerUpdate, { args: [given] });
    } catch (error) {
      // The update's validator refused the answer before it touched history: the caller's to fix.
      if (error instanceof WorkflowUpdateFailedError && error.cause instanceof ApplicationFailure) {
        throw new nexus.HandlerError('BAD_REQUEST', `answer refused: ${error.cause.message}`);
      }
      return mapClientError(workflowId, error);
    }
  }

  async function state(_ctx: nexus.StartOperationContext, raw: NexusConnectionRef): Promise<ConnectionState> {
    const { applicationId, customerId } = parse('state', ConnectionRef, raw);
    const workflowId = connectionId(tenantOf('state', customerId), applicationId);
    try {
      return await options.productClient.workflow.getHandle(workflowId).query(connectionStateQuery);
    } catch (error) {
      return mapClientError(workflowId, error);
    }
  }

  return nexus.serviceHandler(connectionsNexusService, { start, answer, state });
}
