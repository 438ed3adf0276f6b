/**
 * Connections as Temporal visibility lists them: the list filter, the visibility query it becomes,
 * and the summary of one execution. Apart from the client because it is pure (no Temporal call), the
 * same for `list` and `describe`, and tested on its own.
 */
import type { WorkflowExecutionInfo } from '@temporalio/client';
import { z } from 'zod';
import { CONNECTION_STATUSES, CONNECTION_WORKFLOW_TYPE, RUNNING_CONNECTION_STATUSES } from '../contract/connection/connection-definitions.js';
import type { ConnectionStatus } from '../contract/connection/connection-definitions.js';
import { ConnectionStatusKey, CustomerIdKey, InstitutionKey, LoginIdKey } from '../contract/search-attributes.js';
import type { ConnectionSummary } from './connection-summary.js';
import { quoteVisibilityValue } from './visibility.js';

export const ListFilter = z.strictObject({
  status: z.enum(CONNECTION_STATUSES).optional(),
  customerId: z.string().min(1).max(200).optional(),
  institution: z.string().min(1).max(200).optional(),
  loginId: z.string().min(1).max(200).optional(),
  /** At most this many, newest first (default 100, at most 1000). */
  limit: z.number().int().min(1).max(1000).optional(),
});
export type ListFilter = z.input<typeof ListFilter>;

/** `WorkflowType = "connectionWorkflow" AND ConnectionStatus = "AwaitingAnswer" AND CustomerId = "..." AND ExecutionStatus = "Running"`. */
export function visibilityQuery(filter: Omit<z.infer<typeof ListFilter>, 'limit'>): string {
  const clauses = [`WorkflowType = ${quoteVisibilityValue(CONNECTION_WORKFLOW_TYPE)}`];
  const fields = [
    [ConnectionStatusKey.name, filter.status],
    [CustomerIdKey.name, filter.customerId],
    [InstitutionKey.name, filter.institution],
    [LoginIdKey.name, filter.loginId],
  ] as const;
  for (const [name, value] of fields) if (value !== undefined) clauses.push(`${name} = ${quoteVisibilityValue(value)}`);
  // A connection terminated or timed out keeps the running status it last published: it is not waiting.
  if ((RUNNING_CONNECTION_STATUSES as readonly string[]).includes(filter.status ?? '')) clauses.push('ExecutionStatus = "Running"');
  return clauses.join(' AND ');
}

export function summarize(
  info: Pick<WorkflowExecutionInfo, 'workflowId' | 'runId' | 'typedSearchAttributes' | 'status' | 'startTime' | 'closeTime' | 'parentExecution'>,
): ConnectionSummary {
  const attributes = info.typedSearchAttributes;
  const status = attributes.get(ConnectionStatusKey);
  return {
    workflowId: info.workflowId,
    runId: info.runId,
    status: status !== undefined && (CONNECTION_STATUSES as readonly string[]).includes(status) ? (status as ConnectionStatus) : undefined,
    executionStatus: info.status.name,
    customerId: attributes.get(CustomerIdKey),
    institution: attributes.get(InstitutionKey),
    loginId: attributes.get(LoginIdKey),
    startedAt: info.startTime.toISOString(),
    closedAt: info.closeTime?.toISOString(),
    ...(info.parentExecution?.workflowId ? { parentWorkflowId: info.parentExecution.workflowId } : {}),
  };
}
