/**
 * The Temporal SDK's internals (its `lib/` paths) this project uses, each because no public API does
 * the job. They are not part of the SDK's API, so an upgrade may move them: they come through this
 * one file (eslint refuses a `lib/` import anywhere else), and what breaks on an upgrade breaks here.
 * The one exception is bundled workflow code (src/tracing/workflow-interceptors.ts): it takes the
 * OpenTelemetry interceptors' workflow half by its path, since the package's root carries the worker.
 * Not for workflow code.
 */

// The books page through visibility with workflowService.listWorkflowExecutions, which keeps the page
// token that client.workflow.list() hides; these decode its raw memo, input and search attributes
// as the client's list and describe do.
export { decodeFromPayloadsAtIndex, decodeMapFromPayloads } from '@temporalio/common/lib/internal-non-workflow/codec-helpers.js';
export { decodeTypedSearchAttributes } from '@temporalio/common/lib/converter/payload-search-attributes.js';

// A failure read from raw history (a diagnosis, an attack's outcome), decoded into the error the
// client would throw; the client does this only for the result it awaits.
export { decodeOptionalFailureToOptionalError } from '@temporalio/common/lib/internal-non-workflow/index.js';

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
