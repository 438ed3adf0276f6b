/**
 * What a worker (or replayer) given `workflowsPath` adds for tracing: the workflow interceptors'
 * module, the sink workflow spans leave the workflow sandbox through, and, with tracing on, the
 * activity interceptors (a span per activity attempt, the parent of its HTTP calls).
 *
 * The sink is registered even with tracing off: a connection started by a traced client makes
 * workflow spans whatever this worker's settings, and they are dropped here rather than logged as
 * calls to a missing sink.
 */
import {
  makeWorkflowExporter,
  OpenTelemetryActivityInboundInterceptor,
  OpenTelemetryActivityOutboundInterceptor,
  type OpenTelemetrySinks,
} from '@temporalio/interceptors-opentelemetry';
import type { InjectedSinks, WorkerInterceptors } from '@temporalio/worker';
import { WORKFLOW_CODE } from '../bundle/workflow-code.js';
import type { Tracing } from './provider.js';

export interface TracingWorkerOptions {
  readonly interceptors: WorkerInterceptors;
  readonly sinks: InjectedSinks<OpenTelemetrySinks>;
}

const DROP_WORKFLOW_SPANS: InjectedSinks<OpenTelemetrySinks> = { exporter: { export: { fn: () => undefined } } };

/**
 * `bundled`: the worker runs a prebuilt bundle, which has the workflow interceptors already (the
 * bundle script takes them from src/bundle/workflow-code.ts); the SDK ignores `workflowModules` then, and says
 * so in a WARN on every start, so they are left out.
 */
export function tracingWorkerOptions(tracing: Tracing | undefined, { bundled = false }: { bundled?: boolean } = {}): TracingWorkerOptions {
  const workflowModules = bundled ? {} : { workflowModules: [...WORKFLOW_CODE.workflowInterceptorModules] };
  if (!tracing) return { interceptors: workflowModules, sinks: DROP_WORKFLOW_SPANS };
  return {
    interceptors: {
      ...workflowModules,
      activity: [(ctx) => ({ inbound: new OpenTelemetryActivityInboundInterceptor(ctx), outbound: new OpenTelemetryActivityOutboundInterceptor(ctx) })],
    },
    sinks: { exporter: makeWorkflowExporter(tracing.spanProcessor, tracing.resource) },
  };
}
