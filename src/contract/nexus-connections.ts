/**
 * The `connections` Nexus service: how a lender's pipeline in its own Temporal namespace starts,
 * answers and watches connections through a Nexus endpoint, without the product's keys or namespace.
 * Callers import this file (its types and the service definition) into their workflow code: it is
 * import-light (nexus-rpc and the connection contract's types), so it bundles with any workflow.
 *
 * - `start` (asynchronous): starts the connection `connection-<tenant>:<applicationId>` and completes
 *   with its ConnectionResult (or its typed failure); cancelling the operation cancels the connection.
 * - `answer` (synchronous): the `submitAnswer` update, answered with its AnswerOutcome.
 * - `state` (synchronous): the `connectionState` query.
 *
 * The tenant is never the caller's to choose: it is the one the handler maps the caller's endpoint
 * to (NEXUS_ENDPOINT_TENANTS). A caller may name it (`customerId`) as a check; naming another is
 * refused with UNAUTHORIZED. A bad input is refused with BAD_REQUEST, naming the field.
 */
import * as nexus from 'nexus-rpc';
import type { ConnectionInputArgs } from './connection-input.js';
import type { AnswerOutcome, ChallengeAnswer, ConnectionResult, ConnectionState } from './connection-definitions.js';

export const CONNECTIONS_NEXUS_SERVICE_NAME = 'connections';

/** The connection's input as the pipeline clients take it; `customerId` is optional (the endpoint's tenant). */
export type NexusConnectionInput = Omit<ConnectionInputArgs, 'customerId'> & { readonly customerId?: string | undefined };

export interface NexusStartInput {
  /** The lender's own key for this connection: the connection is `connection-<tenant>:<applicationId>`. */
  readonly applicationId: string;
  readonly connection: NexusConnectionInput;
}

/** Which connection: the caller's application id, within its endpoint's tenant. */
export interface NexusConnectionRef {
  readonly applicationId: string;
  /** Optional check: must be the endpoint's tenant if given. */
  readonly customerId?: string | undefined;
}

export interface NexusAnswerInput extends NexusConnectionRef {
  readonly answer: ChallengeAnswer;
}

export type NexusStateInput = NexusConnectionRef;

export const connectionsNexusService = nexus.service(CONNECTIONS_NEXUS_SERVICE_NAME, {
  start: nexus.operation<NexusStartInput, ConnectionResult>(),
  answer: nexus.operation<NexusAnswerInput, AnswerOutcome>(),
  state: nexus.operation<NexusStateInput, ConnectionState>(),
});

export type ConnectionsNexusService = typeof connectionsNexusService;

/**
 * What the handler's HandlerErrors mean to a caller (the Nexus error type, then the first words of
 * the message): BAD_REQUEST "invalid input: <field>: <problem>" (fix the input; not retried),
 * UNAUTHORIZED "tenant ..." (the endpoint is not mapped, or the input names another tenant; not
 * retried), NOT_FOUND "no connection ..." (no such connection for this tenant).
 */
export const NEXUS_HANDLER_ERROR_TYPES = ['BAD_REQUEST', 'UNAUTHORIZED', 'NOT_FOUND'] as const;
