/**
 * Visibility's rows for a query, read raw a page at a time. The reads of Temporal that need only ids
 * or decode each memo themselves (in its own workflow's context) take them so: the SDK's list decodes
 * every memo in one go, and a single row this process cannot open (sealed with another tenant's key)
 * would fail the whole listing.
 */
import type { Client } from '@temporalio/client';
import type proto from '@temporalio/proto';

export type VisibilityRow = proto.temporal.api.workflow.v1.IWorkflowExecutionInfo;

/**
 * Every row of `query` in the client's namespace, `pageSize` a request; with `maxRows`, no page is
 * asked for once that many rows were read (a flood of rows cannot keep the reader going).
 */
export async function* visibilityRows(temporal: Client, query: string, pageSize: number, maxRows = Number.POSITIVE_INFINITY): AsyncGenerator<VisibilityRow> {
  let rows = 0;
  let nextPageToken: Uint8Array | undefined;
  do {
    const response = await temporal.workflowService.listWorkflowExecutions({ namespace: temporal.options.namespace, pageSize, query, ...(nextPageToken ? { nextPageToken } : {}) });
    rows += response.executions.length;
    yield* response.executions;
    nextPageToken = response.nextPageToken && response.nextPageToken.length > 0 ? response.nextPageToken : undefined;
  } while (nextPageToken && rows < maxRows);
}
