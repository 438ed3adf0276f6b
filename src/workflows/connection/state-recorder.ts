/**
 * The connection's state and everything that mirrors it: the query's answer, the search attributes
 * operators filter on, and the Web UI's "current details" line. Every change goes through patch(),
 * so they never disagree. A search attribute is upserted only when it differs from what the workflow
 * already carries (a connection started by the product's client carries its status, customer and
 * login or institution from the start): each upsert costs a command, a history event and a
 * visibility write.
 */
import { setCurrentDetails, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import type { SearchAttributeUpdatePair } from '@temporalio/common';
import type { ConnectionInput, ConnectionInputArgs } from '../../contract/connection/connection-input.js';
import type { ConnectionPriority, ConnectionState, Rejection } from '../../contract/connection/connection-definitions.js';
import { ConnectionStatusKey, CustomerIdKey, EndUserChallengeKey, InstitutionKey, LoginIdKey } from '../../contract/search-attributes.js';

export class StateRecorder {
  private current: ConnectionState;

  /** Starts from the raw input: handlers answer before validation has run. */
  constructor(args: ConnectionInputArgs | undefined) {
    const now = isoNow();
    const kind = args?.session?.kind;
    this.current = {
      status: 'Authorizing',
      mode: kind === 'cached' || kind === 'refresh' ? kind : 'live',
      customerId: typeof args?.customerId === 'string' ? args.customerId : '',
      totalPolls: 0,
      sessionRestarts: 0,
      retrieved: [],
      priority: priorityOf(),
      startedAt: now,
      updatedAt: now,
    };
  }

  get state(): ConnectionState {
    return this.current;
  }

  /** `alsoUpsert`: search attributes set in the same upsert whether they changed or not (adopt). */
  patch(changes: Partial<ConnectionState>, alsoUpsert: readonly SearchAttributeUpdatePair[] = []): void {
    const previous = this.current;
    const state: ConnectionState = { ...previous, ...changes, updatedAt: isoNow() };
    this.current = state;
    const searchAttributes: SearchAttributeUpdatePair[] = [];
    if (state.status !== previous.status) searchAttributes.push({ key: ConnectionStatusKey, value: state.status });
    if (state.loginId !== previous.loginId && state.loginId) searchAttributes.push({ key: LoginIdKey, value: state.loginId });
    if (state.institution !== previous.institution && state.institution) searchAttributes.push({ key: InstitutionKey, value: state.institution });
    // Rides in the same upsert as the status change that presents the challenge: no extra command.
    if (state.endUserChallenge !== previous.endUserChallenge && state.endUserChallenge)
      searchAttributes.push({ key: EndUserChallengeKey, value: state.endUserChallenge });
    searchAttributes.push(...alsoUpsert);
    const upserts = searchAttributes.filter(differsFromCurrent);
    if (upserts.length) upsertSearchAttributes(upserts);
    setCurrentDetails(describeForHumans(state) + priorityForHumans(state.priority));
  }

  /**
   * Takes the validated input: state and search attributes say who and what this connection is,
   * status and customer included for starts that did not set them (e.g. `temporal workflow start`),
   * in one upsert with the rest.
   */
  adopt({ customerId, session }: ConnectionInput): void {
    const identity: SearchAttributeUpdatePair[] = [
      { key: ConnectionStatusKey, value: this.current.status },
      { key: CustomerIdKey, value: customerId },
    ];
    this.patch(
      {
        mode: session.kind,
        customerId,
        institution: session.kind === 'live' ? session.institution : undefined,
        loginId: session.kind === 'live' ? undefined : session.loginId,
      },
      identity,
    );
  }

  reject(rejection: Omit<Rejection, 'at'>): void {
    this.patch({ lastRejection: { ...rejection, at: isoNow() } });
  }

  /** Polls were made (one per timer; many when an activity polled): counted without touching search attributes or the details line. */
  countPolls(count = 1): void {
    const state = this.current;
    this.current = {
      ...state,
      totalPolls: state.totalPolls + count,
      pending: state.pending && { ...state.pending, pollCount: state.pending.pollCount + count, nextPollAt: undefined },
    };
  }
}

/** A keyword search attribute whose value is not already what the connection has (set at start or upserted since). */
function differsFromCurrent({ key, value }: SearchAttributeUpdatePair): boolean {
  return workflowInfo().typedSearchAttributes.get(key) !== value;
}

/** The priority the connection was started with (from its start event: deterministic). */
function priorityOf(): ConnectionPriority | undefined {
  const priority = workflowInfo().priority;
  if (!priority || (priority.priorityKey === undefined && !priority.fairnessKey)) return undefined;
  return { key: priority.priorityKey || undefined, fairnessKey: priority.fairnessKey || undefined, fairnessWeight: priority.fairnessWeight || undefined };
}

/** " · priority 1, tenant weight 3": who this connection waits behind, for the Web UI line. */
function priorityForHumans(priority: ConnectionPriority | undefined): string {
  if (!priority) return '';
  return ` · priority ${priority.key ?? 3}${priority.fairnessWeight !== undefined && priority.fairnessWeight !== 1 ? `, tenant weight ${priority.fairnessWeight}` : ''}`;
}

export function isoNow(): string {
  return new Date().toISOString();
}

/** The Web UI's "current details": one line a person watching understands. */
function describeForHumans(state: ConnectionState): string {
  const restarted = state.lastRestart ? ` (session restarted ${state.sessionRestarts}x: ${state.lastRestart.reason})` : '';
  switch (state.status) {
    case 'AwaitingAnswer':
      return `Awaiting an answer to challenge set ${state.challengeSet?.id} (${state.challengeSet?.challenges.map((c) => c.Type).join(', ')}), attempt ${state.challengeSet?.attempt}, answer by ${state.challengeSet?.answerBy}${restarted}`;
    case 'Retrieving':
      return state.pending
        ? state.pending.strategy === undefined || state.pending.strategy === 'timer'
          ? `Retrieving: ${state.pending.operation} pending (${state.pending.code}), poll ${state.pending.pollCount}, gives up at ${state.pending.deadline}`
          : `Retrieving: ${state.pending.operation} pending (${state.pending.code}), polled by an activity (${state.pending.strategy}; its attempts or heartbeats show the polls), gives up at ${state.pending.deadline}`
        : `Retrieving data${state.retrieved.length ? ` (done: ${state.retrieved.join(', ')})` : ''}`;
    case 'Failed':
      return `Failed: ${state.failure?.type} - ${state.failure?.message}`;
    default:
      if (state.status === 'Authorizing' && state.admission !== undefined && state.admission.admittedAt === undefined)
        return `Waiting for room in the tenant's unattended window (queued at ${state.admission.queuedAt})`;
      return `${state.status}${state.lastRejection ? ` (last rejection: ${state.lastRejection.message})` : ''}${restarted}`;
  }
}
