/**
 * Who did what to a connection, read from its history: the start, each answer (an accepted update,
 * with its outcome), each signal, a cancel request and a termination, each with the identity of the
 * client that sent it and when. Temporal records that identity with every request, and a history is
 * append-only, so this is the connection's audit of operators' and pipelines' actions: the console
 * sends each signed-in operator's requests under their own identity (`ConnectionsClient.actingAs`).
 * An answer the workflow's validator refused is not in history (it was never accepted).
 */
import type { LoadedDataConverter } from '@temporalio/common';
import proto from '@temporalio/proto';
import { decodeFromPayloadsAtIndex, decodeOptionalFailureToOptionalError, optionalTsToDate, type PayloadOwner } from '../sdk/internals.js';

const { EventType } = proto.temporal.api.enums.v1;
type HistoryEvent = proto.temporal.api.history.v1.IHistoryEvent;

export interface ActivityEntry {
  readonly at: string;
  /** The identity of the client that sent it (an operator's `console:<name> <subject>`, a pipeline's, a worker's). */
  readonly who: string;
  readonly action: 'started' | 'update' | 'signal' | 'cancel-requested' | 'terminated';
  /** The update's or signal's name (submitAnswer, answerChallenge, ...). */
  readonly name?: string | undefined;
  /** An update's outcome: its result's `outcome` (accepted, rejected, restarted, ended), or `failed: <message>`; absent while it runs. */
  readonly outcome?: string | undefined;
  /** A termination's reason. */
  readonly reason?: string | undefined;
}

/** The actions in `events`, in history's order; outcomes decoded with `converter` (sealed payloads: its codec). */
export async function activityOfHistory(events: readonly HistoryEvent[], converter: LoadedDataConverter, owner: PayloadOwner): Promise<ActivityEntry[]> {
  const entries: ActivityEntry[] = [];
  const updates = new Map<string, number>();
  for (const event of events) {
    const at = optionalTsToDate(event.eventTime)?.toISOString() ?? '';
    switch (event.eventType) {
      case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED:
        entries.push({ at, who: event.workflowExecutionStartedEventAttributes?.identity ?? '', action: 'started' });
        break;
      case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED: {
        const attributes = event.workflowExecutionSignaledEventAttributes;
        entries.push({ at, who: attributes?.identity ?? '', action: 'signal', name: attributes?.signalName ?? undefined });
        break;
      }
      case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED: {
        const request = event.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest;
        const updateId = request?.meta?.updateId ?? '';
        updates.set(updateId, entries.length);
        entries.push({ at, who: request?.meta?.identity ?? '', action: 'update', name: request?.input?.name ?? undefined });
        break;
      }
      case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED: {
        const attributes = event.workflowExecutionUpdateCompletedEventAttributes;
        const index = updates.get(attributes?.meta?.updateId ?? '');
        const accepted = index === undefined ? undefined : entries[index];
        if (accepted === undefined || index === undefined) break;
        entries[index] = { ...accepted, outcome: await outcomeOf(attributes?.outcome, converter, owner) };
        break;
      }
      case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CANCEL_REQUESTED:
        entries.push({ at, who: event.workflowExecutionCancelRequestedEventAttributes?.identity ?? '', action: 'cancel-requested' });
        break;
      case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED: {
        const attributes = event.workflowExecutionTerminatedEventAttributes;
        entries.push({ at, who: attributes?.identity ?? '', action: 'terminated', reason: attributes?.reason ?? undefined });
        break;
      }
      default:
        break;
    }
  }
  return entries;
}

async function outcomeOf(
  outcome: proto.temporal.api.update.v1.IOutcome | null | undefined,
  converter: LoadedDataConverter,
  owner: PayloadOwner,
): Promise<string> {
  if (outcome?.failure) {
    const failure = await decodeOptionalFailureToOptionalError(converter, outcome.failure, owner);
    return `failed: ${failure?.message ?? 'unknown'}`;
  }
  try {
    const result = await decodeFromPayloadsAtIndex<unknown>(converter, 0, outcome?.success?.payloads, owner);
    const kind = result !== null && typeof result === 'object' && 'outcome' in result ? result.outcome : undefined;
    return typeof kind === 'string' ? kind : 'completed';
  } catch {
    // Its payload cannot be read here (a key this process lacks): that it completed is still known.
    return 'completed';
  }
}
