/**
 * What a book refresh's history shows, read from its events (payloads decoded with the test key):
 * the updates it accepted, how its children ended and how many were in flight then, and how the run
 * ended. For the tests that record refresh histories and those that replay them.
 */
import { defaultPayloadConverter } from '@temporalio/common';
import proto from '@temporalio/proto';
import { workerDataConverterFor } from '../../src/codec/data-converter.js';
import type { BookLoginEnd } from '../../src/contract/book-definitions.js';
import { TEST_ENCRYPTION } from './connection-stack.js';

const EventType = proto.temporal.api.enums.v1.EventType;
type History = proto.temporal.api.history.v1.IHistory;

export interface RefreshHistoryShape {
  /** Names of the updates accepted, in order. */
  readonly updates: readonly string[];
  /** Each child's end as it answered, with how many other children were still in flight at that moment. */
  readonly childEnds: readonly { readonly end: BookLoginEnd; readonly othersInFlight: number }[];
  readonly continuedAsNew: boolean;
  readonly completed: boolean;
}

export async function refreshHistoryShape(history: History): Promise<RefreshHistoryShape> {
  const codec = workerDataConverterFor({ encryption: TEST_ENCRYPTION }).payloadCodecs?.[0];
  if (!codec) throw new Error('the test converter has no codec');
  const updates: string[] = [];
  const childEnds: { end: BookLoginEnd; othersInFlight: number }[] = [];
  const inFlight = new Set<string>();
  for (const event of history.events ?? []) {
    const type = event.eventType;
    if (type === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED) updates.push(event.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name ?? '?');
    const started = event.childWorkflowExecutionStartedEventAttributes;
    if (started && started.workflowType?.name === 'bookLoginWorkflow') inFlight.add(started.workflowExecution?.workflowId ?? '');
    const completed = event.childWorkflowExecutionCompletedEventAttributes;
    if (completed && inFlight.delete(completed.workflowExecution?.workflowId ?? '')) {
      const [payload] = await codec.decode(completed.result?.payloads ?? []);
      childEnds.push({ end: defaultPayloadConverter.fromPayload<BookLoginEnd>(payload!), othersInFlight: inFlight.size });
    }
    for (const ended of [event.childWorkflowExecutionFailedEventAttributes, event.childWorkflowExecutionCanceledEventAttributes, event.childWorkflowExecutionTerminatedEventAttributes]) {
      if (ended) inFlight.delete(ended.workflowExecution?.workflowId ?? '');
    }
  }
  const types = new Set((history.events ?? []).map((event) => event.eventType));
  return {
    updates,
    childEnds,
    continuedAsNew: types.has(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW),
    completed: types.has(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED),
  };
}
