/**
 * The `connections` Nexus service: how a lender's pipeline in its own Temporal namespace starts,
 * answers and watches connections, and refreshes its book, through a Nexus endpoint, without the
 * product's keys or namespace. Callers import this file (its types and the service definition) into
 * their workflow code: it is import-light (nexus-rpc and the connection and book contracts' types),
 * so it bundles with any workflow.
 *
 * - `start` (asynchronous): starts the connection `connection-<tenant>:<applicationId>` and completes
 *   with its ConnectionResult (or its typed failure); cancelling the operation cancels the connection
 *   (also right after `start` returned, before the connection exists: the relay ends and no connection
 *   is left running).
 *   A second `start` of an application id whose connection is still running is refused with a
 *   CONFLICT handler error naming that connection (`connection already running: connection-…`); it
 *   does not attach to the first operation. Why: the second start may carry another input (other
 *   credentials, other products) that attaching would silently drop, and two operations sharing one
 *   connection would let either caller's cancel end the other's; a retry of the same operation (the
 *   same Nexus request) is not a second start: Temporal hands it the same operation.
 * - `answer` (synchronous): the `submitAnswer` update, answered with its AnswerOutcome.
 * - `state` (synchronous): the `connectionState` query.
 * - `refreshBook` (asynchronous): refreshes the tenant's book of one cadence now, as the book's
 *   Schedule or `books.run` would (its Schedule's window and page size unless the input names them),
 *   and completes with the night's BookReport. Cancelling the operation cancels the refresh: no more
 *   logins start, those in flight are cancelled, and the report is still written (status
 *   `cancelled`). While a refresh of that book runs (scheduled, run by hand or through this service),
 *   another is refused with CONFLICT naming it (`book refresh already running: book-…`): one refresh
 *   of a book at a time, as the Schedule's overlap policy, and a caller's cancel never reaches a
 *   refresh it did not start.
 *
 * The tenant is never the caller's to choose: it is the one the handler maps the caller's endpoint
 * to (NEXUS_ENDPOINT_TENANTS). A caller may name it (`customerId`) as a check; naming another is
 * refused with UNAUTHORIZED. A bad input is refused with BAD_REQUEST, naming the field.
 */
import * as nexus from 'nexus-rpc';
import type { ConnectionInputArgs } from './connection/connection-input.js';
import type { AnswerOutcome, ChallengeAnswer, ConnectionResult, ConnectionState } from './connection/connection-definitions.js';
import type { BookReport } from './book/book-definitions.js';
import type { WindowBounds } from './window/window-definitions.js';

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

/** Which book, and how to refresh it: the endpoint's tenant's book of one cadence. */
export interface NexusRefreshBookInput {
  /** The book's cadence (default `nightly`): lower-case letters, digits and "-", at most 40. */
  readonly cadence?: string | undefined;
  /** Optional check: must be the endpoint's tenant if given. */
  readonly customerId?: string | undefined;
  /** The window's bounds for this refresh, each 1..1000, floor ≤ ceiling (default: the book's Schedule's, else the refresh's own defaults). */
  readonly window?: Partial<WindowBounds> | undefined;
  /** Logins read per page, 1..1000 (default: the book's Schedule's, else 500). */
  readonly pageSize?: number | undefined;
}

/**
 * What `refreshBook` completes with: the night's summary (the refresh's result, src/contract/book/book-definitions.ts):
 * status `completed` or `cancelled`, counts by outcome, the window's changes. Its `pages` name the
 * per-login report pages, which this service does not serve (yet).
 */
export type NexusBookReport = BookReport;

export const connectionsNexusService = nexus.service(CONNECTIONS_NEXUS_SERVICE_NAME, {
  start: nexus.operation<NexusStartInput, ConnectionResult>(),
  answer: nexus.operation<NexusAnswerInput, AnswerOutcome>(),
  state: nexus.operation<NexusStateInput, ConnectionState>(),
  refreshBook: nexus.operation<NexusRefreshBookInput, NexusBookReport>(),
});

export type ConnectionsNexusService = typeof connectionsNexusService;

/**
 * What the handler's HandlerErrors mean to a caller (the Nexus error type, then the first words of
 * the message): BAD_REQUEST "invalid input to <operation>: <field>: <problem>" (fix the input; not
 * retried), UNAUTHORIZED "tenant ..." (the endpoint is not mapped, or the input names another tenant;
 * not retried), NOT_FOUND "no connection ..." (no such connection for this tenant), CONFLICT
 * "connection already running: <workflow id> ..." (`start`) or "book refresh already running:
 * <workflow id> ..." (`refreshBook`); not retried.
 */
export const NEXUS_HANDLER_ERROR_TYPES = ['BAD_REQUEST', 'UNAUTHORIZED', 'NOT_FOUND', 'CONFLICT'] as const;
