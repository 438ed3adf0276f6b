/**
 * Shared section `tracing`: OpenTelemetry spans over OTLP (the standard OTEL_* variables), absent
 * when tracing is off; read by src/tracing/.
 */
import { z } from 'zod';
import { Bool, doc, group } from './document.js';

/**
 * The standard OpenTelemetry variables. Tracing is off (no provider, nothing exported) unless an
 * endpoint is set. Spans go out as OTLP JSON over HTTP (a collector's or Jaeger's port 4318); the
 * exporter itself reads OTEL_EXPORTER_OTLP_HEADERS (a collector's credentials stay out of this config).
 */
const OtlpProtocol = doc(
  z.literal('http/json', { message: 'must be http/json (spans are exported as OTLP JSON over HTTP) or unset' }).optional(),
  'Only http/json is supported (unset means http/json here); grpc or http/protobuf stop the process.',
);
export const TracingVars = group(
  z.object({
    OTEL_EXPORTER_OTLP_ENDPOINT: doc(
      z.url({ protocol: /^https?$/, message: 'must be an http(s) URL such as http://localhost:4318' }).optional(),
      "Base URL of a collector (or Jaeger's port 4318): traces go to <endpoint>/v1/traces.",
    ),
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: doc(
      z.url({ protocol: /^https?$/, message: 'must be an http(s) URL such as http://localhost:4318/v1/traces' }).optional(),
      'The traces URL itself, used as is; wins over OTEL_EXPORTER_OTLP_ENDPOINT.',
    ),
    OTEL_EXPORTER_OTLP_PROTOCOL: OtlpProtocol,
    OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: OtlpProtocol,
    OTEL_SERVICE_NAME: doc(z.string().trim().min(1).optional(), 'The service name of the spans.', {
      defaultText: 'aggregation-connections-worker for the worker, aggregation-connections-client otherwise',
    }),
    OTEL_SDK_DISABLED: doc(Bool.default(false), 'true turns tracing off whatever the endpoint.'),
    OTEL_EXPORTER_OTLP_HEADERS: doc(
      z.string().optional(),
      "Headers for the collector, e.g. authorization=Bearer%20<token>: read by the exporter itself (a collector's credentials stay out of this configuration).",
      {
        secret: true,
      },
    ),
  }),
  'Tracing: OpenTelemetry over OTLP',
  'Off unless an endpoint is set (no provider, nothing exported). Spans go out as OTLP JSON over HTTP.',
);
export type TracingVars = z.output<typeof TracingVars>;

/** The `tracing` section: where spans go and under which service name; absent when tracing is off. */
export function tracingSection(env: TracingVars, defaultServiceName: string): { tracing?: { readonly endpoint: string; readonly serviceName: string } } {
  // The OTLP spec: a base endpoint gets the signal's path appended; a per-signal one is used as is.
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT;
  const endpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? (base === undefined ? undefined : `${base.replace(/\/+$/, '')}/v1/traces`);
  if (env.OTEL_SDK_DISABLED || endpoint === undefined) return {};
  return { tracing: Object.freeze({ endpoint, serviceName: env.OTEL_SERVICE_NAME ?? defaultServiceName }) };
}

/** What src/tracing/ reads (the worker's and the client's `tracing` section). */
export type TracingConfig = NonNullable<ReturnType<typeof tracingSection>['tracing']>;
