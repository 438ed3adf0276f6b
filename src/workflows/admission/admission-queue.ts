/**
 * An admission's queue, apart from its window (admission-run.ts): which requests it may queue, the
 * connections waiting for room in order (priority key, then arrival), and the held runs let go
 * lately that a look for held starts must not queue again. Deterministic and free of Temporal calls.
 */
import {
  ADMISSION_ID_MAX,
  ADMISSION_QUEUE_LIMIT,
  isAdmissibleConnectionId,
  type AdmissionRequest,
  type AdmittedConnection,
  type QueuedConnection,
} from '../../contract/admission/admission-definitions.js';
import { PRIORITY_KEY_LIMITS } from '../../contract/priority.js';
import { UUID_PATTERN } from '../../contract/ids.js';

/**
 * How long a run let go is kept from a look's results: longer than visibility takes to show a close
 * or the connection's first status (its search for held starts asks for both), and few enough runs
 * to carry (at the storm's pace, a few hundred).
 */
const LET_GO_REMEMBERED_MS = 2 * 60_000;
const LET_GO_REMEMBERED = 2_000;

/** Why a request is not one this tenant's admission may queue; undefined when it is. */
export function requestProblem(request: AdmissionRequest | undefined, customerId: string): string | undefined {
  if (typeof request !== 'object' || request === null) return 'not a request';
  const { workflowId, runId, priorityKey } = request;
  if (typeof workflowId !== 'string' || !isAdmissibleConnectionId(workflowId, customerId)) {
    return `workflowId ${JSON.stringify(String(workflowId).slice(0, 200))} is not a connection of tenant ${customerId} (connection-${customerId}:… or refresh-${customerId}:…, printable, at most ${ADMISSION_ID_MAX} characters)`;
  }
  // Temporal refuses a signal to a run id that is not a UUID by failing the workflow task that sends it: checked here.
  if (typeof runId !== 'string' || !UUID_PATTERN.test(runId)) return 'runId is not a run id (a UUID)';
  if (!Number.isInteger(priorityKey) || priorityKey < PRIORITY_KEY_LIMITS.min || priorityKey > PRIORITY_KEY_LIMITS.max)
    return `priorityKey must be an integer from ${PRIORITY_KEY_LIMITS.min} to ${PRIORITY_KEY_LIMITS.max}`;
  if (request.held !== undefined && typeof request.held !== 'boolean') return 'held must be true or false';
  return undefined;
}

/** An entry's key: a run of a workflow id. */
export function runKey({ workflowId, runId }: { readonly workflowId: string; readonly runId: string }): string {
  return `${workflowId} ${runId}`;
}

type OfRun = (entry: { readonly workflowId: string; readonly runId: string }) => boolean;

/** Whether an entry is the run that told its end (ends of builds before runs were told name none: the first of its id). */
export function endedRun(end: { readonly workflowId: string; readonly runId?: string | undefined }): OfRun {
  return (entry) => entry.workflowId === end.workflowId && (end.runId === undefined || entry.runId === end.runId);
}

export class AdmissionQueue {
  /** Ordered by priority key, then arrival. Each run of a workflow id is its own entry. */
  private readonly queue: QueuedConnection[];
  /** Held runs let go lately (ended, or their room given back), by run id, with when. */
  private readonly lettingGo: Map<string, number>;

  constructor(queue: readonly QueuedConnection[] | undefined, lettingGo: readonly (readonly [string, number])[] | undefined) {
    this.queue = [...(queue ?? [])];
    this.lettingGo = new Map(lettingGo ?? []);
  }

  get length(): number {
    return this.queue.length;
  }

  /** The queue as carried to the next run. */
  get entries(): readonly QueuedConnection[] {
    return this.queue;
  }

  get byPriority(): Record<string, number> {
    const queuedByPriority: Record<string, number> = {};
    for (const queued of this.queue) queuedByPriority[queued.priorityKey] = (queuedByPriority[queued.priorityKey] ?? 0) + 1;
    return queuedByPriority;
  }

  /**
   * Queues a valid request not in flight; a run queued already is queued once (a held start that asks
   * itself has begun: a plain signal reaches it now). False: the queue is full.
   */
  offer({ workflowId, runId, priorityKey, held }: AdmissionRequest, now: number): boolean {
    const queuedAt = this.queue.findIndex((queued) => queued.workflowId === workflowId && queued.runId === runId);
    if (queuedAt >= 0) {
      const queued = this.queue[queuedAt] as QueuedConnection;
      if (queued.held === true && held !== true) this.queue[queuedAt] = { workflowId, runId, priorityKey: queued.priorityKey, askedAt: queued.askedAt };
      return true;
    }
    if (this.queue.length >= ADMISSION_QUEUE_LIMIT) return false;
    // After every connection of the same or a lower key (1 first): the queue stays ordered without sorting.
    const after = this.queue.findIndex((queued) => queued.priorityKey > priorityKey);
    const entry: QueuedConnection = { workflowId, runId, priorityKey, askedAt: now, ...(held === true ? { held: true } : {}) };
    if (after < 0) this.queue.push(entry);
    else this.queue.splice(after, 0, entry);
    return true;
  }

  /** The first queued entry of a run out of the queue (cancelled while waiting); false when none is. */
  remove(ofRun: OfRun): boolean {
    const queuedAt = this.queue.findIndex(ofRun);
    if (queuedAt < 0) return false;
    this.queue.splice(queuedAt, 1);
    return true;
  }

  /** The next out of the queue, granted room at `now` (the queue is not empty). */
  grant(now: number): AdmittedConnection {
    const next = this.queue.shift() as QueuedConnection;
    return { workflowId: next.workflowId, runId: next.runId, grantedAt: now, ...(next.held === true ? { held: true as const } : {}) };
  }

  /** A held run let go: remembered a while, the oldest going first past the bound (a map keeps insertion order). */
  letGo(runId: string, now: number): void {
    this.lettingGo.set(runId, now);
    if (this.lettingGo.size > LET_GO_REMEMBERED) this.lettingGo.delete(this.lettingGo.keys().next().value as string);
  }

  /** The runs a look must not queue again as of `now`: those queued, `inFlight`, and those let go lately. */
  known(inFlight: readonly string[], now: number): string[] {
    for (const [runId, at] of this.lettingGo) if (now - at > LET_GO_REMEMBERED_MS) this.lettingGo.delete(runId);
    return [...this.queue.map((queued) => queued.runId), ...inFlight, ...this.lettingGo.keys()];
  }

  /** The runs let go lately, as carried to the next run. */
  get carriedLettingGo(): (readonly [string, number])[] {
    return [...this.lettingGo];
  }
}
