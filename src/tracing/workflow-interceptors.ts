/**
 * Workflow interceptors for tracing (bundled workflow code: deterministic, no Node built-ins). Every
 * worker's bundle has them (src/bundle/workflow-code.ts), but they trace only a connection whose start
 * carried a trace context, i.e. one started by a client with tracing on; its run, the activities it
 * schedules, and the signals and updates it handles then become spans of the client's trace.
 *
 * A connection started without one runs exactly as with no interceptor: the SDK's OpenTelemetry
 * workflow module is not even evaluated. The SDK evaluates the bundle's modules for each workflow
 * it creates, and that module (with the OpenTelemetry SDK) cost ~8 ms of CPU per connection to
 * evaluate and ~17 ms with its spans (replays of a recorded connection, measured with the module
 * always on). Whether a connection is traced depends only on its start event, so replays agree.
 *
 * Queries are never traced: they are frequent (watch loops), change nothing, and leave no history.
 */
import type {
  WorkflowInboundCallsInterceptor,
  WorkflowInterceptorsFactory,
  WorkflowInternalsInterceptor,
  WorkflowOutboundCallsInterceptor,
} from '@temporalio/workflow';
// The interceptors' workflow half by its path: the package's root carries the worker, which the bundle cannot (src/sdk/internals.ts).
// eslint-disable-next-line @typescript-eslint/no-restricted-imports
import type * as OpenTelemetryWorkflow from '@temporalio/interceptors-opentelemetry/lib/workflow/index.js';

/** The header the SDK's OpenTelemetry interceptors carry a trace context in (its TRACE_HEADER; a test checks they agree). */
export const TRACE_HEADER = '_tracer-data';

interface Traced {
  readonly inbound: OpenTelemetryWorkflow.OpenTelemetryInboundInterceptor;
  readonly outbound: OpenTelemetryWorkflow.OpenTelemetryOutboundInterceptor;
  readonly internals: OpenTelemetryWorkflow.OpenTelemetryInternalsInterceptor;
}

function startTracing(): Traced {
  // A require, not an import: the bundler includes the module, but it is evaluated only here, when
  // a traced connection starts (it installs the OpenTelemetry SDK in this workflow's context).
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const otel = require('@temporalio/interceptors-opentelemetry/lib/workflow/index.js') as typeof OpenTelemetryWorkflow;
  return {
    inbound: new otel.OpenTelemetryInboundInterceptor(),
    outbound: new otel.OpenTelemetryOutboundInterceptor(),
    internals: new otel.OpenTelemetryInternalsInterceptor(),
  };
}

export const interceptors: WorkflowInterceptorsFactory = () => {
  // Per workflow: set when its start carries a trace context (handlers run only after the start).
  let traced: Traced | undefined;

  const inbound: WorkflowInboundCallsInterceptor = {
    execute(input, next) {
      if (input.headers[TRACE_HEADER] === undefined) return next(input);
      traced = startTracing();
      return traced.inbound.execute(input, next);
    },
    handleSignal: (input, next) => (traced ? traced.inbound.handleSignal(input, next) : next(input)),
    handleUpdate: (input, next) => (traced ? traced.inbound.handleUpdate(input, next) : next(input)),
    validateUpdate: (input, next) => (traced ? traced.inbound.validateUpdate(input, next) : next(input)),
  };

  const outbound: WorkflowOutboundCallsInterceptor = {
    scheduleActivity: (input, next) => (traced ? traced.outbound.scheduleActivity(input, next) : next(input)),
    scheduleLocalActivity: (input, next) => (traced ? traced.outbound.scheduleLocalActivity(input, next) : next(input)),
    startChildWorkflowExecution: (input, next) => (traced ? traced.outbound.startChildWorkflowExecution(input, next) : next(input)),
    signalWorkflow: (input, next) => (traced ? traced.outbound.signalWorkflow(input, next) : next(input)),
    continueAsNew: (input, next) => (traced ? traced.outbound.continueAsNew(input, next) : next(input)),
    getLogAttributes: (input, next) => (traced ? traced.outbound.getLogAttributes(input, next) : next(input)),
  };

  const internals: WorkflowInternalsInterceptor = {
    dispose(input, next) {
      // The SDK's dispose is declared async but does its work at once; the SDK ignores its promise too.
      if (traced) void traced.internals.dispose(input, next);
      else next(input);
    },
  };

  return { inbound: [inbound], outbound: [outbound], internals: [internals] };
};
