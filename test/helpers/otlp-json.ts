/**
 * OTLP JSON trace requests (ExportTraceServiceRequest) decoded into flat spans: what an exporter
 * POSTs to /v1/traces, and what the collector's file exporter writes, one request a line.
 */

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

/** The spans of one request's JSON text (throws on text that is not JSON). */
export function spansOfRequest(text: string): ReceivedSpan[] {
  const decoded = JSON.parse(text) as ExportTraceServiceRequest;
  return (decoded.resourceSpans ?? []).flatMap((resourceSpans) => {
    const service = attributesOf(resourceSpans.resource?.attributes)['service.name'];
    return (resourceSpans.scopeSpans ?? [])
      .flatMap((scope) => scope.spans ?? [])
      .map((span) => ({
        traceId: span.traceId,
        spanId: span.spanId,
        parentSpanId: span.parentSpanId || undefined,
        name: span.name,
        kind: span.kind,
        attributes: attributesOf(span.attributes),
        status: span.status ?? {},
        service: typeof service === 'string' ? service : '',
      }));
  });
}
