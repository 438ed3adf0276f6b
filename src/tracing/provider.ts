/**
 * The process's OpenTelemetry tracer provider: spans batched and exported as OTLP JSON over HTTP,
 * registered globally (the Temporal interceptors and the aggregator client use the global API, and
 * trace context follows async calls through AsyncLocalStorage). Nothing of it exists unless tracing
 * is configured: without a provider the API's calls are no-ops, and the SDK is not even loaded
 * (loading it and the exporter took 0.2 to 0.3 s, which every CLI command would pay).
 *
 * One provider per process, shared by whoever acquires it (a test runs a worker and a client in one
 * process); the last release flushes what is buffered and shuts it down.
 */
import { context, propagation, trace } from '@opentelemetry/api';
import type { Resource } from '@opentelemetry/resources';
import type { BasicTracerProvider, SpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { TracingConfig } from '../settings/tracing.js';
import { RedactingSpanProcessor } from './span-redaction.js';

/** A user's hold on the process's provider. */
export interface Tracing {
  readonly config: TracingConfig;
  readonly resource: Resource;
  /** Where spans made outside the provider go: the workflow spans the worker's sink receives. */
  readonly spanProcessor: SpanProcessor;
  /** Exports every span ended so far. */
  forceFlush(): Promise<void>;
  /** Lets go of the provider; the last user's release flushes and shuts it down. */
  release(): Promise<void>;
}

export class TracingConflictError extends Error {
  override readonly name = 'TracingConflictError';
  constructor(
    readonly running: string,
    readonly requested: string,
  ) {
    super(`tracing already exports to ${running} in this process; cannot also export to ${requested}`);
  }
}

interface Started {
  readonly provider: BasicTracerProvider;
  readonly processor: SpanProcessor;
  readonly resource: Resource;
}

interface Shared {
  readonly config: TracingConfig;
  readonly started: Promise<Started>;
  users: number;
}

let shared: Shared | undefined;

async function start(config: TracingConfig): Promise<Started> {
  const [{ AsyncLocalStorageContextManager }, { OTLPTraceExporter }, { Resource }, { BasicTracerProvider, BatchSpanProcessor }] = await Promise.all([
    import('@opentelemetry/context-async-hooks'),
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/sdk-trace-base'),
  ]);
  const resource = Resource.default().merge(new Resource({ 'service.name': config.serviceName }));
  // The exporter reads OTEL_EXPORTER_OTLP_HEADERS itself: a collector's credentials never pass here.
  const processor = new RedactingSpanProcessor(new BatchSpanProcessor(new OTLPTraceExporter({ url: config.endpoint })));
  const provider = new BasicTracerProvider({ resource, spanProcessors: [processor] });
  // Sets the global tracer provider, the W3C trace-context propagator and the context manager.
  provider.register({ contextManager: new AsyncLocalStorageContextManager().enable() });
  return { provider, processor, resource };
}

/** Starts the process's provider for `config`, or joins the one already running with the same endpoint. */
export async function acquireTracing(config: TracingConfig): Promise<Tracing> {
  if (shared && shared.config.endpoint !== config.endpoint) throw new TracingConflictError(shared.config.endpoint, config.endpoint);
  const held = (shared ??= { config, started: start(config), users: 0 });
  held.users += 1;
  let started: Started;
  try {
    started = await held.started;
  } catch (error) {
    held.users -= 1;
    if (shared === held) shared = undefined;
    throw error;
  }
  let released = false;
  return {
    config: held.config,
    resource: started.resource,
    spanProcessor: started.processor,
    forceFlush: () => started.provider.forceFlush(),
    async release() {
      if (released) return;
      released = true;
      held.users -= 1;
      if (held.users > 0) return;
      if (shared === held) shared = undefined;
      await started.provider.shutdown();
      trace.disable();
      context.disable();
      propagation.disable();
    },
  };
}
/** The traces URL without a query or credentials, for start-up lines. */
export function describeEndpoint(config: TracingConfig): string {
  const url = new URL(config.endpoint);
  return `${url.origin}${url.pathname} as ${config.serviceName}`;
}
