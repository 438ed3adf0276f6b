/**
 * A tenant's connections counted through Temporal visibility (`client.workflow.count`), never by
 * listing them: its running ones by their ConnectionStatus search attribute (one count per status,
 * as the worker's `aggregation_connections` gauge counts the fleet: the server cannot group by a
 * custom attribute), and all of them by ExecutionStatus (the one attribute `GROUP BY` takes), which
 * gives the closed ones. Every query names the tenant's CustomerId: a count never spans tenants.
 *
 * Which tenants exist is asked of visibility too, one tenant at a time: the newest connection whose
 * CustomerId is none of those found so far names the next one (`CustomerId NOT IN (...)`, a page of
 * one), so finding n tenants costs n + 1 small list calls, most recently active first, however many
 * connections each has.
 */
import type { Client } from '@temporalio/client';
import { CONNECTION_WORKFLOW_TYPE, RUNNING_CONNECTION_STATUSES } from '../contract/connection/connection-definitions.js';
import { ConnectionStatusKey, CustomerIdKey } from '../contract/search-attributes.js';
import { quoteVisibilityValue } from './visibility.js';
import { decodeTypedSearchAttributes } from '../sdk/internals.js';
import { visibilityRows } from '../temporal/visibility-rows.js';

export type RunningConnectionStatus = (typeof RUNNING_CONNECTION_STATUSES)[number];

/** How a connection's workflow closed, as visibility's ExecutionStatus names it. */
export const CLOSED_EXECUTION_STATUSES = ['Completed', 'Failed', 'Canceled', 'Terminated', 'TimedOut', 'ContinuedAsNew'] as const;
export type ClosedExecutionStatus = (typeof CLOSED_EXECUTION_STATUSES)[number];

export interface TenantConnectionCounts {
  readonly customerId: string;
  /** Every connection of the tenant visibility holds: running, and closed within the namespace's retention. */
  readonly total: number;
  /** Running connections by ConnectionStatus. */
  readonly running: Readonly<Record<RunningConnectionStatus, number>>;
  /** Closed connections by how their workflow closed. */
  readonly closed: Readonly<Record<ClosedExecutionStatus, number>>;
}

export interface FoundTenants {
  /** Customer ids, sorted. */
  readonly tenants: string[];
  /** More tenants exist than the limit let it find. */
  readonly more: boolean;
}

const OF_CONNECTIONS = `WorkflowType = ${quoteVisibilityValue(CONNECTION_WORKFLOW_TYPE)}`;

/** The connections of `customerId`, in one running status when given. */
export function tenantCountQuery(customerId: string, running?: RunningConnectionStatus): string {
  const clauses = [OF_CONNECTIONS, `${CustomerIdKey.name} = ${quoteVisibilityValue(customerId)}`];
  if (running !== undefined) clauses.push('ExecutionStatus = "Running"', `${ConnectionStatusKey.name} = ${quoteVisibilityValue(running)}`);
  return clauses.join(' AND ');
}

/** The connections of a tenant none of `known` names. */
export function unknownTenantQuery(known: readonly string[]): string {
  const clauses = [OF_CONNECTIONS, `${CustomerIdKey.name} IS NOT NULL`];
  if (known.length > 0) clauses.push(`${CustomerIdKey.name} NOT IN (${known.map(quoteVisibilityValue).join(', ')})`);
  return clauses.join(' AND ');
}

export class ConnectionCountsClient {
  constructor(private readonly client: Pick<Client, 'workflow' | 'workflowService' | 'options'>) {}

  /** The tenant's connections by status; the parts are separate queries, so a connection that moved between them may show in neither or both. */
  async ofTenant(customerId: string): Promise<TenantConnectionCounts> {
    const [all, ...running] = await Promise.all([
      this.client.workflow.count(`${tenantCountQuery(customerId)} GROUP BY ExecutionStatus`),
      ...RUNNING_CONNECTION_STATUSES.map((status) => this.client.workflow.count(tenantCountQuery(customerId, status))),
    ]);
    const closed = Object.fromEntries(CLOSED_EXECUTION_STATUSES.map((status) => [status, 0])) as Record<ClosedExecutionStatus, number>;
    for (const group of all?.groups ?? []) {
      const status = groupValueOf(group.groupValues[0]);
      if ((CLOSED_EXECUTION_STATUSES as readonly string[]).includes(status)) closed[status as ClosedExecutionStatus] += group.count;
    }
    return {
      customerId,
      total: all?.count ?? 0,
      running: Object.fromEntries(RUNNING_CONNECTION_STATUSES.map((status, index) => [status, running[index]?.count ?? 0])) as Record<
        RunningConnectionStatus,
        number
      >,
      closed,
    };
  }

  /** Up to `limit` tenants that have connections, found most recently active first. */
  async tenants(limit: number): Promise<FoundTenants> {
    const found: string[] = [];
    for (;;) {
      const next = await this.newestUnknown(found);
      if (next === undefined) return { tenants: found.sort(), more: false };
      if (found.length >= limit) return { tenants: found.sort(), more: true };
      found.push(next);
    }
  }

  private async newestUnknown(known: readonly string[]): Promise<string | undefined> {
    // A raw row, its memo never decoded: one this process cannot open (a row forged with another
    // tenant's key) would fail the client's list, and every count after it.
    for await (const row of visibilityRows(this.client, unknownTenantQuery(known), 1)) {
      const customerId = decodeTypedSearchAttributes(row.searchAttributes?.indexedFields ?? undefined).get(CustomerIdKey);
      // IS NOT NULL keeps this from happening; were it to, stopping beats asking the same again.
      return customerId === undefined || known.includes(customerId) ? undefined : customerId;
    }
    return undefined;
  }
}

/** A group's value as text: the server sends ExecutionStatus as a one-string list (`[["Running"]]`). */
function groupValueOf(value: unknown): string {
  return String(Array.isArray(value) ? value[0] : value);
}
