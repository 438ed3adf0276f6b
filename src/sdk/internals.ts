/**
 * The Temporal SDK's internals (its `lib/` paths) this project uses, each because no public API does
 * the job. They are not part of the SDK's API, so an upgrade may move them: they come through this
 * one file (eslint refuses a `lib/` import anywhere else), and what breaks on an upgrade breaks here.
 * The one exception is bundled workflow code (src/tracing/workflow-interceptors.ts): it takes the
 * OpenTelemetry interceptors' workflow half by its path, since the package's root carries the worker.
 * Not for workflow code.
 */

import type { WorkflowExecutionInfo } from '@temporalio/client';
import { executionInfoFromRaw, rethrowKnownErrorTypes } from '@temporalio/client/lib/helpers.js';
import type { LoadedDataConverter, Payload, ProtoFailure, SerializationContext } from '@temporalio/common';
import type proto from '@temporalio/proto';
import {
  decodeFromPayloadsAtIndex as decodeAtIndex,
  decodeMapFromPayloads as decodeMap,
  decodeOptionalFailureToOptionalError as decodeFailure,
} from '@temporalio/common/lib/internal-non-workflow/codec-helpers.js';

// The books and the admission page through visibility with workflowService.listWorkflowExecutions,
// which keeps the page token that client.workflow.list() hides; these decode its raw memo, input and
// search attributes as the client's list and describe do. Unlike the SDK's, they take the payload's
// workflow as a required argument: the codec opens a tenant's sealed payload only in that tenant's
// work, and without the context it would open any key this process holds (another tenant's memo
// would read as this one's).
export { decodeTypedSearchAttributes } from '@temporalio/common/lib/converter/payload-search-attributes.js';

/** Whose payload it is: the workflow (and namespace) the codec checks the sealing tenant against. */
export interface PayloadOwner {
  readonly namespace: string;
  readonly workflowId: string;
}

function contextOf({ namespace, workflowId }: PayloadOwner): SerializationContext {
  return { type: 'workflow', namespace, workflowId };
}

/** A raw memo's fields, decoded in its workflow's context. */
export function decodeMapFromPayloads(
  converter: LoadedDataConverter,
  map: Record<string, Payload> | null | undefined,
  owner: PayloadOwner,
): Promise<Record<string, unknown> | undefined> {
  return decodeMap(converter, map, contextOf(owner));
}

/** One of a workflow's raw payloads (its input, an update's result), decoded in its context. */
export function decodeFromPayloadsAtIndex<T>(
  converter: LoadedDataConverter,
  index: number,
  payloads: Payload[] | null | undefined,
  owner: PayloadOwner,
): Promise<T> {
  return decodeAtIndex<T>(converter, index, payloads, contextOf(owner));
}

// A visibility row as the client's list makes it (status names, times, search attributes), for
// listings that read no memo: the list decodes every row's memo, and one this process cannot open
// (sealed with another tenant's key, or not sealed) fails the whole listing.
/** A raw visibility row as the client's list gives it, its memo left undecoded (`memo` undefined). */
export function executionInfoWithoutMemo(
  row: proto.temporal.api.workflow.v1.IWorkflowExecutionInfo,
  converter: LoadedDataConverter,
  namespace: string,
): Promise<WorkflowExecutionInfo> {
  // The decoded message keeps its fields' defaults (a delayed start's historyLength) on its prototype: kept.
  const withoutMemo = Object.assign(Object.create(Object.getPrototypeOf(row) as object) as typeof row, row, { memo: null });
  return executionInfoFromRaw(withoutMemo, converter, row, namespace);
}

// A raw list's refusal turned into the errors the client's list throws (NamespaceNotFoundError and
// the like, else its ServiceError), which every client's error mapping knows (access denied, unavailable).
export { rethrowKnownErrorTypes };

// A failure read from raw history (a diagnosis, an attack's outcome), decoded into the error the
// client would throw; the client does this only for the result it awaits.
/** A workflow's raw failure, decoded in its context. */
export function decodeOptionalFailureToOptionalError(
  converter: LoadedDataConverter,
  failure: ProtoFailure | null | undefined,
  owner: PayloadOwner,
): Promise<Error | undefined> {
  return decodeFailure(converter, failure, contextOf(owner));
}

// The payload store's reference payloads, written and read byte for byte for the cross-language vectors.
export { decodeReferencePayload, encodeReferencePayload } from '@temporalio/common/lib/internal-non-workflow/index.js';
export { ExternalStorageRunner } from '@temporalio/common/lib/internal-non-workflow/external-storage-runner.js';

// Durations and times for raw workflowService requests (namespace retention) and responses.
export { msToTs, optionalTsToDate } from '@temporalio/common/lib/time.js';

// A search attribute's type for a raw operatorService request (the test server's registration).
export { encodeSearchAttributeIndexedValueType } from '@temporalio/common/lib/search-attributes.js';

// The clients' tracing interceptor without the package's root, which would load the worker (and its
// native module) into every client process: the CLI, the console, the pipeline.
export { OpenTelemetryWorkflowClientInterceptor } from '@temporalio/interceptors-opentelemetry/lib/client/index.js';

// The header the SDK's OpenTelemetry interceptors carry a trace context in (a test holds ours to it).
export { TRACE_HEADER } from '@temporalio/interceptors-opentelemetry/lib/instrumentation.js';
