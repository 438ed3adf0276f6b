/**
 * A real OTLP/HTTP JSON receiver, as a collector or Jaeger exposes on port 4318: it accepts the
 * exporter's POST /v1/traces, keeps each request's raw text and decodes its spans.
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One OTLP AnyValue, flattened: nested lists and maps kept as arrays and objects. */
export type AttributeValue = string | number | boolean | null | AttributeValue[] | { [key: string]: AttributeValue };

export interface ReceivedSpan {
  readonly traceId: string;
  readonly spanId: string;
  /** Undefined for a root span. */
  readonly parentSpanId: string | undefined;
  readonly name: string;
  readonly kind: number;
  readonly attributes: Readonly<Record<string, AttributeValue>>;
  readonly status: { readonly code?: number; readonly message?: string };
  /** The resource's service.name. */
  readonly service: string;
}

export interface OtlpReceiver {
  /** Base URL (what OTEL_EXPORTER_OTLP_ENDPOINT takes). */
  readonly url: string;
  /** Every span received so far. */
  readonly spans: ReceivedSpan[];
  /** The raw bodies of every export request, for checks of what left the processes. */
  readonly bodies: string[];
  /** Requests to any other path or with another content type. */
  readonly refused: string[];
  close(): Promise<void>;
}

interface OtlpKeyValue {
  key: string;
  value?: OtlpAnyValue;
}
interface OtlpAnyValue {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: number | string;
  doubleValue?: number;
  arrayValue?: { values?: OtlpAnyValue[] };
  kvlistValue?: { values?: OtlpKeyValue[] };
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: OtlpKeyValue[];
  status?: { code?: number; message?: string };
}
interface ExportTraceServiceRequest {
  resourceSpans?: { resource?: { attributes?: OtlpKeyValue[] }; scopeSpans?: { spans?: OtlpSpan[] }[] }[];
}

function valueOf(value: OtlpAnyValue | undefined): AttributeValue {
  if (!value) return null;
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.arrayValue) return (value.arrayValue.values ?? []).map(valueOf);
  if (value.kvlistValue) return attributesOf(value.kvlistValue.values);
  return null;
}

function attributesOf(list: OtlpKeyValue[] | undefined): Record<string, AttributeValue> {
  return Object.fromEntries((list ?? []).map((entry) => [entry.key, valueOf(entry.value)]));
}

/** An attribute as text, for messages and matching. */
export function textOf(value: AttributeValue | undefined): string {
  return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' ? String(value) : JSON.stringify(value ?? null);
}

async function bodyOf(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const bodies: string[] = [];
  const refused: string[] = [];
  function receive(text: string): void {
    const decoded = JSON.parse(text) as ExportTraceServiceRequest;
    bodies.push(text);
    for (const resourceSpans of decoded.resourceSpans ?? []) {
      const service = attributesOf(resourceSpans.resource?.attributes)['service.name'];
      for (const span of (resourceSpans.scopeSpans ?? []).flatMap((scope) => scope.spans ?? [])) {
        spans.push({
          traceId: span.traceId,
          spanId: span.spanId,
          parentSpanId: span.parentSpanId || undefined,
          name: span.name,
          kind: span.kind,
          attributes: attributesOf(span.attributes),
          status: span.status ?? {},
          service: typeof service === 'string' ? service : '',
        });
      }
    }
  }
  const server = createServer((request, response) => {
    void (async () => {
      const text = await bodyOf(request);
      if (request.method !== 'POST' || request.url !== '/v1/traces' || !request.headers['content-type']?.startsWith('application/json')) {
        refused.push(`${request.method} ${request.url} ${request.headers['content-type']}`);
        response.writeHead(404).end();
        return;
      }
      receive(text);
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    })().catch((error: unknown) => {
      refused.push(`undecodable request: ${String(error)}`);
      if (!response.headersSent) response.writeHead(400).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    bodies,
    refused,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}
