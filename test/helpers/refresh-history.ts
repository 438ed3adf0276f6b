/**
 * What a book refresh's history shows, read from its events (payloads decoded with the test key):
 * the updates it accepted, the connections it started (its `startBookConnections` local activities),
 * the ends they told it (`bookLoginEnded` signals) and how many were in flight then, the reads of
 * silent connections (`connectionsClosed`), and how the run ended. For the tests that record refresh
 * histories and those that replay them.
 */
import { defaultPayloadConverter } from '@temporalio/common';
import proto from '@temporalio/proto';
import type { BookConnectionStarted } from '../../src/activities/book-start-activities.js';
import { workerDataConverterFor } from '../../src/codec/data-converter.js';
import type { BookLoginEnded } from '../../src/contract/book/book-definitions.js';
import { TEST_ENCRYPTION } from './connection-stack.js';

const EventType = proto.temporal.api.enums.v1.EventType;
type History = proto.temporal.api.history.v1.IHistory;
type HistoryEvent = proto.temporal.api.history.v1.IHistoryEvent;

export interface RefreshHistoryShape {
  /** Names of the updates accepted, in order. */
  readonly updates: readonly string[];
  /** Each connection the run started, with the index of the event that recorded its start. */
  readonly starts: readonly { readonly workflowId: string; readonly eventIndex: number }[];
  /** Each end a connection told, with the index of its event and how many others were still in flight then. */
  readonly loginEnds: readonly { readonly end: BookLoginEnded; readonly eventIndex: number; readonly othersInFlight: number }[];
  /** Each read of silent connections: what Temporal said of each, and how many others were in flight. */
  readonly silentChecks: readonly { readonly statuses: readonly { readonly workflowId: string; readonly status: string }[]; readonly othersInFlight: number }[];
  readonly continuedAsNew: boolean;
  readonly completed: boolean;
}

/** The local activity's type a marker recorded (core keeps it in plain JSON under `data`), or undefined. */
function localActivityOf(event: HistoryEvent): string | undefined {
  const data = event.markerRecordedEventAttributes?.details?.['data']?.payloads?.[0]?.data;
  if (!data) return undefined;
  try {
    return (JSON.parse(Buffer.from(data).toString('utf8')) as { activity_type?: string }).activity_type;
  } catch {
    return undefined;
  }
}

export async function refreshHistoryShape(history: History): Promise<RefreshHistoryShape> {
  const codec = workerDataConverterFor({ encryption: TEST_ENCRYPTION }).payloadCodecs?.[0];
  if (!codec) throw new Error('the test converter has no codec');
  const decode = async <T>(payloads: proto.temporal.api.common.v1.IPayload[] | null | undefined): Promise<T | undefined> => {
    const [payload] = await codec.decode(payloads ?? []);
    return payload ? defaultPayloadConverter.fromPayload<T>(payload) : undefined;
  };
  const updates: string[] = [];
  const starts: { workflowId: string; eventIndex: number }[] = [];
  const loginEnds: { end: BookLoginEnded; eventIndex: number; othersInFlight: number }[] = [];
  const silentChecks: { statuses: { workflowId: string; status: string }[]; othersInFlight: number }[] = [];
  const inFlight = new Set<string>();
  const ended = new Set<string>();
  const events = history.events ?? [];
  for (const [eventIndex, event] of events.entries()) {
    if (event.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED)
      updates.push(event.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name ?? '?');
    if (event.eventType === EventType.EVENT_TYPE_MARKER_RECORDED) {
      const activity = localActivityOf(event);
      const result = event.markerRecordedEventAttributes?.details?.['result']?.payloads;
      if (activity === 'startBookConnections') {
        for (const started of (await decode<BookConnectionStarted[]>(result)) ?? []) {
          if (started.outcome !== 'started') continue;
          starts.push({ workflowId: started.workflowId, eventIndex });
          // An end can be told before the start's marker is recorded (the start's task was still open).
          if (!ended.has(started.workflowId)) inFlight.add(started.workflowId);
        }
      }
      if (activity === 'connectionsClosed') {
        const statuses = (await decode<{ workflowId: string; status: string }[]>(result)) ?? [];
        for (const { workflowId, status } of statuses) if (status === 'TERMINATED' || status === 'TIMED_OUT') inFlight.delete(workflowId);
        silentChecks.push({ statuses, othersInFlight: inFlight.size });
      }
    }
    const signaled = event.workflowExecutionSignaledEventAttributes;
    if (signaled?.signalName === 'bookLoginEnded') {
      const end = await decode<BookLoginEnded>(signaled.input?.payloads);
      // A forged end (of no known shape) is listed too: the test asks what reached the refresh.
      if (end) {
        inFlight.delete(end.workflowId);
        ended.add(end.workflowId);
        loginEnds.push({ end, eventIndex, othersInFlight: inFlight.size });
      }
    }
  }
  const types = new Set(events.map((event) => event.eventType));
  return {
    updates,
    starts,
    loginEnds,
    silentChecks,
    continuedAsNew: types.has(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW),
    completed: types.has(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED),
  };
}
