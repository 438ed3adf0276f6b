/**
 * The last step before export: a span leaves the process with ids, names, timings and flat
 * attributes only.
 * - Attribute values must be primitives (or arrays of them), as OpenTelemetry defines them. The
 *   SDK's workflow span exporter copies the whole WorkflowInfo into each workflow span, objects
 *   included (search attributes with the LoginId, the memo, the last failure); those are dropped.
 *   Flat identifiers (workflowId, runId, workflowType, taskQueue, attempt, ...) stay.
 * - Error messages are dropped (status message, exception events keep their type only): the SDK's
 *   interceptors record failures' messages and stacks, and failure messages are exactly what the
 *   failure converter encrypts, since one may quote what the service said about a login.
 */
import type { Context } from '@opentelemetry/api';
import type { ReadableSpan, Span, SpanProcessor, TimedEvent } from '@opentelemetry/sdk-trace-base';

type Attributes = ReadableSpan['attributes'];

function isPrimitive(value: unknown): boolean {
  const type = typeof value;
  return type === 'string' || type === 'number' || type === 'boolean';
}

function isAttributeValue(value: unknown): boolean {
  return isPrimitive(value) || (Array.isArray(value) && value.every((item) => item === null || item === undefined || isPrimitive(item)));
}

/** The attributes an exporter may see: the same object when all of them may go. */
export function primitiveAttributes(attributes: Attributes): Attributes {
  const entries = Object.entries(attributes);
  if (entries.every(([, value]) => isAttributeValue(value))) return attributes;
  return Object.fromEntries(entries.filter(([, value]) => isAttributeValue(value)));
}

const EXCEPTION_TYPE = 'exception.type';

function redactedEvent(event: TimedEvent): TimedEvent {
  if (event.name !== 'exception') return event;
  const type = event.attributes?.[EXCEPTION_TYPE];
  return { ...event, attributes: type === undefined ? {} : { [EXCEPTION_TYPE]: type } };
}

/** A view of `span` fit for export: its methods and getters still read the original. */
export function redactSpan(span: ReadableSpan): ReadableSpan {
  const attributes = primitiveAttributes(span.attributes);
  const hasException = span.events.some((event) => event.name === 'exception');
  const hasMessage = span.status.message !== undefined && span.status.message !== '';
  if (attributes === span.attributes && !hasException && !hasMessage) return span;
  return Object.create(span, {
    attributes: { value: attributes },
    events: { value: hasException ? span.events.map(redactedEvent) : span.events },
    status: { value: hasMessage ? { code: span.status.code } : span.status },
  }) as ReadableSpan;
}

export class RedactingSpanProcessor implements SpanProcessor {
  constructor(private readonly next: SpanProcessor) {}

  onStart(span: Span, parentContext: Context): void {
    this.next.onStart(span, parentContext);
  }

  onEnd(span: ReadableSpan): void {
    this.next.onEnd(redactSpan(span));
  }

  forceFlush(): Promise<void> {
    return this.next.forceFlush();
  }

  shutdown(): Promise<void> {
    return this.next.shutdown();
  }
}
