/**
 * Visibility's rows for a query, read raw a page at a time. The reads of Temporal that need only ids,
 * search attributes and status, or decode each memo themselves (in its own workflow's context), take
 * them so: the SDK's list decodes every memo in one go, and a single row this process cannot open
 * (sealed with another tenant's key, or not sealed) would fail the whole listing.
 */
import { isGrpcServiceError, ServiceError, type Client, type WorkflowExecutionInfo } from '@temporalio/client';
import type proto from '@temporalio/proto';
import { executionInfoWithoutMemo, rethrowKnownErrorTypes } from '../sdk/internals.js';

export type VisibilityRow = proto.temporal.api.workflow.v1.IWorkflowExecutionInfo;

/** One page of visibility's rows, and the token of the next (base64, as the product hands page tokens out; none after the last). */
export interface VisibilityPage {
  readonly rows: VisibilityRow[];
  readonly nextPageToken?: string;
}

/** The page of `query` that `pageToken` names (the first without one); a refusal as the client's list throws it. */
export async function visibilityPage(
  temporal: Pick<Client, 'workflowService' | 'options'>,
  query: string,
  pageSize: number,
  pageToken?: string,
): Promise<VisibilityPage> {
  let response;
  try {
    response = await temporal.workflowService.listWorkflowExecutions({
      namespace: temporal.options.namespace,
      pageSize,
      query,
      ...(pageToken ? { nextPageToken: Buffer.from(pageToken, 'base64') } : {}),
    });
  } catch (error) {
    throw listError(error);
  }
  const next = response.nextPageToken && response.nextPageToken.length > 0 ? Buffer.from(response.nextPageToken).toString('base64') : undefined;
  return { rows: response.executions, ...(next ? { nextPageToken: next } : {}) };
}

/**
 * Every row of `query` in the client's namespace, `pageSize` a request; with `maxRows`, no page is
 * asked for once that many rows were read (a flood of rows cannot keep the reader going).
 */
export async function* visibilityRows(
  temporal: Pick<Client, 'workflowService' | 'options'>,
  query: string,
  pageSize: number,
  maxRows = Number.POSITIVE_INFINITY,
): AsyncGenerator<VisibilityRow> {
  let rows = 0;
  let pageToken: string | undefined;
  do {
    const page = await visibilityPage(temporal, query, pageSize, pageToken);
    rows += page.rows.length;
    yield* page.rows;
    pageToken = page.nextPageToken;
  } while (pageToken && rows < maxRows);
}

/**
 * The rows of `query` as the client's list gives them, without their memos: for listings of ids,
 * search attributes, status and times, which a row with a memo this process cannot open must not fail.
 */
export async function* listedExecutions(temporal: Client, query: string, pageSize: number): AsyncGenerator<WorkflowExecutionInfo> {
  for await (const row of visibilityRows(temporal, query, pageSize)) {
    yield await executionInfoWithoutMemo(row, temporal.options.loadedDataConverter, temporal.options.namespace);
  }
}

/**
 * A refused list as the client's own list throws it: a known kind (a namespace not found) as the
 * SDK's error, any other gRPC refusal as its ServiceError with the refusal as the cause. The clients
 * map a ServiceError to access denied or unavailable; a bare gRPC error they would pass on raw.
 */
function listError(error: unknown): Error {
  if (!isGrpcServiceError(error))
    return new ServiceError('Unexpected error while making gRPC request', { cause: error instanceof Error ? error : new Error(String(error)) });
  rethrowKnownErrorTypes(error);
  return new ServiceError('Failed to list workflows', { cause: error });
}
