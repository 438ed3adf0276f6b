/**
 * A client span per call to the aggregation service, through the OpenTelemetry API only: a no-op
 * unless the process configured tracing (src/tracing/). Attributes say what was called and how it
 * went, never with what: the route template, not the path (paths carry LoginIds and RequestIds);
 * no query, headers (the API key) or bodies (credentials, answers, account data); an error's type
 * and service code, not its message.
 *
 * No trace context is sent to the service: it is a third party whose spans never reach our
 * collector, so a `traceparent` would only tell it our trace ids.
 */
import { SpanKind, SpanStatusCode, trace, type Span } from '@opentelemetry/api';
import { AggregatorError } from './errors.js';

const tracer = trace.getTracer('aggregation-connections/aggregator');

export interface HttpCall {
  /** The operation's name in the spec, e.g. `Authorize`. */
  readonly operation: string;
  readonly method: string;
  /** The path with its variables as `{name}`, e.g. `/v3/{customerId}/BankingServices/Authorize`. */
  readonly route: string;
  readonly server: Server | undefined;
}

export interface Server {
  readonly address: string;
  readonly port: number;
}

/** The host and port of the service's base URL (undefined if it is not a URL: the call will say so). */
export function serverOf(baseUrl: string): Server | undefined {
  if (!URL.canParse(baseUrl)) return undefined;
  const url = new URL(baseUrl);
  return { address: url.hostname, port: Number(url.port || (url.protocol === 'https:' ? 443 : 80)) };
}

/** What the call reports into its span as it learns it. */
export interface HttpSpanRecorder {
  status(code: number): void;
  /** The service's pending code of a 202. */
  pending(code: string): void;
}

/** Runs `send` in a client span named `METHOD route`. */
export function withHttpSpan<T>(call: HttpCall, send: (record: HttpSpanRecorder) => Promise<T>): Promise<T> {
  const method = call.method.toUpperCase();
  const attributes = {
    'http.request.method': method,
    'http.route': call.route,
    ...(call.server ? { 'server.address': call.server.address, 'server.port': call.server.port } : {}),
    'aggregator.operation': call.operation,
  };
  return tracer.startActiveSpan(`${method} ${call.route}`, { kind: SpanKind.CLIENT, attributes }, async (span: Span) => {
    try {
      return await send({
        status: (code) => span.setAttribute('http.response.status_code', code),
        pending: (code) => span.setAttribute('aggregator.pending_code', code),
      });
    } catch (error) {
      if (error instanceof AggregatorError) {
        if (error.serviceCode) span.setAttribute('aggregator.service_code', error.serviceCode);
        span.setAttribute('error.type', error.serviceCode ?? error.name);
      } else {
        span.setAttribute('error.type', error instanceof Error ? error.name : 'unknown');
      }
      span.setStatus({ code: SpanStatusCode.ERROR });
      throw error;
    } finally {
      span.end();
    }
  });
}
