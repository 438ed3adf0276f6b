/**
 * A tenant's admission: the window unattended connections started outside a book pass through.
 *
 * A connection that nobody watches (`unattended`: a scheduled refresh, a pipeline's batch, a start
 * by hand) and that no book started asks its tenant's admission workflow for room before its first
 * call to the service, and waits for a grant; live connections, and a book's own connections (its
 * refresh is their window), start at once. The admission workflow keeps the queue (priority key,
 * then arrival) and grants with the same self-regulating window a book refresh uses, sharing the
 * fleet with the books by weight (it publishes its window in the same memo). The connection tells it
 * its end as a book's connection tells its refresh (`bookLoginEndedSignal`).
 */
import { defineQuery, defineSignal } from '@temporalio/workflow';
import { DEFAULT_WINDOW_BOUNDS, type WindowBounds, type WindowMemory, type WindowView } from '../window/window-definitions.js';

export const ADMISSION_WORKFLOW_TYPE = 'connectionAdmissionWorkflow';

/** One admission workflow per tenant (`admission-<customerId>:unattended`: a tenant's id, sealed under its key). */
export function admissionWorkflowId(customerId: string): string {
  return `admission-${customerId}:unattended`;
}

/** A connection asking for room: which run, and its priority key (1 is granted first). */
export interface AdmissionRequest {
  readonly workflowId: string;
  readonly runId: string;
  readonly priorityKey: number;
  /**
   * Sent by the product's client for a run it started held (a start delay): the run has not begun,
   * so the grant must begin it (a signal-with-start ends a start delay; a plain signal waits it out).
   */
  readonly held?: boolean | undefined;
}

/**
 * The memo key the product's client sets on a connection it starts held: its grant arrives before
 * it can ask, and is room all the same. Sealed as every payload is (the tenant's key).
 */
export const HELD_START_MEMO = 'admissionHeld';
/** Beside it, the held start's priority key: the admission reads it when it finds the start (sealed, as the rest of the memo). */
export const HELD_PRIORITY_MEMO = 'admissionPriorityKey';

/** Sent by a connection (from a local activity, with signal-with-start), or by the product's client for a held start, to its tenant's admission workflow. */
export const admissionRequestSignal = defineSignal<[AdmissionRequest]>('admissionRequest');

/**
 * Sent by the product's client after it holds a start (at most once a second per tenant from one
 * client, `ADMISSION_WAKE_EVERY_MS`): it starts the admission if none runs and has it look for held
 * starts now. The starts themselves are found in visibility, not sent one by one: a signal the
 * workers must take costs the stack about twice what the held workflow does (docs/benchmarks.md).
 */
export interface AdmissionWake {
  /** The tenant whose starts are held: the admission's own (a payload, so sealed under the tenant's key as every message is). */
  readonly customerId: string;
}
export const admissionWakeSignal = defineSignal<[AdmissionWake]>('admissionWake');

/** Sent by the admission workflow to the run it admits: it may call the service now. */
export interface AdmissionGrant {
  /** The admission run that granted it (for the connection's log). */
  readonly admissionRunId: string;
  /**
   * The run it is for: set on a held start's release, whose signal-with-start reaches the id's
   * current run, whichever that is; a held run takes no grant before asking that names another.
   */
  readonly runId?: string | undefined;
}
export const admissionGrantSignal = defineSignal<[AdmissionGrant]>('admissionGrant');

/** A connection waiting for room: its request and when it arrived (workflow time, ms). */
export interface QueuedConnection extends AdmissionRequest {
  readonly askedAt: number;
}

/** What `admissionState` answers: the queue, the connections admitted and not yet ended, the window. */
export interface AdmissionState {
  readonly customerId: string;
  readonly queued: number;
  /** Queued connections by priority key. */
  readonly queuedByPriority: Readonly<Record<string, number>>;
  readonly inFlight: number;
  /** Granted since the tenant's admission began (across runs). */
  readonly granted: number;
  /** Requests refused since it began: malformed, another tenant's, or past the queue's limit. */
  readonly refused: number;
  readonly window: WindowView;
  readonly updatedAt: string;
}

export const admissionStateQuery = defineQuery<AdmissionState>('admissionState');

/** An admitted connection not yet heard from: its run, when granted, when Temporal was last asked about it. */
export interface AdmittedConnection {
  readonly workflowId: string;
  readonly runId: string;
  readonly grantedAt: number;
  /** Queued as a held start (found in visibility or sent by a client of before). */
  readonly held?: true | undefined;
  readonly checkedAt?: number | undefined;
  readonly closedSeenAt?: number | undefined;
}

/** What continues across continue-as-new. */
export interface AdmissionCarry {
  readonly window: WindowMemory;
  readonly queue: readonly QueuedConnection[];
  readonly inFlight: readonly AdmittedConnection[];
  readonly granted: number;
  readonly refused: number;
  /** Woken by a client that holds starts: the run looks for them in visibility (absent: it never was). */
  readonly discovering?: boolean | undefined;
  /** When the last wake came (workflow time, ms): the admission stays up a while after it. */
  readonly lastWakeAt?: number | undefined;
  /** Runs let go lately, with when (workflow time, ms): a look does not queue them again while visibility catches up. */
  readonly lettingGo?: readonly (readonly [string, number])[] | undefined;
}

export interface AdmissionInput {
  readonly customerId: string;
  readonly carried?: AdmissionCarry | undefined;
}

/** How an admission workflow ends (nothing queued or in flight for a while). */
export interface AdmissionSummary {
  readonly customerId: string;
  readonly granted: number;
  readonly refused: number;
  readonly endedAt: string;
}

/**
 * Connections queued at most: a flood of requests (a runaway loop, or anyone holding the tenant's
 * key) cannot grow the workflow's state past what continue-as-new carries (4,000 entries of at most
 * ~300 bytes: 1.2 MB, under Temporal's 2 MB for a payload). Past it a request is refused (logged,
 * counted); the connection asks again after `ADMISSION_ASK_AGAIN_MS`.
 */
export const ADMISSION_QUEUE_LIMIT = 4_000;

/** The longest connection id an admission takes (printable ASCII: as many bytes as characters). */
export const ADMISSION_ID_MAX = 200;
const PRINTABLE_ASCII = /^[\x21-\x7e]+$/;

/**
 * Whether a connection's workflow id can wait at its tenant's admission: one the product makes for the
 * tenant (a business key `connection-<customerId>:…`, a scheduled refresh `refresh-<customerId>:…`),
 * printable and short. Checked by both sides: a connection with another id (chosen freely by hand)
 * starts at once rather than ask for room it would be refused; the admission refuses a request for
 * any other id (a grant to it could fail every task of the admission, or go to another kind of workflow).
 */
export function isAdmissibleConnectionId(workflowId: string, customerId: string): boolean {
  return (
    workflowId.length <= ADMISSION_ID_MAX &&
    PRINTABLE_ASCII.test(workflowId) &&
    (workflowId.startsWith(`connection-${customerId}:`) || workflowId.startsWith(`refresh-${customerId}:`))
  );
}
/**
 * A connection not granted room within this long asks again (`timing.admissionAskAgainMs` unless
 * given): an admission workflow terminated by hand (or its request refused as the queue was full)
 * costs a wait, never a connection waiting forever.
 */
export const ADMISSION_ASK_AGAIN_MS = 5 * 60_000;
/** Grants per run before it continues as new (its history stays small: about five events a connection). */
export const ADMISSION_GRANTS_PER_RUN = 500;
/**
 * The admission's window: a book's bounds. A floor of 8 (so a tenant of modest demand would not queue
 * behind another's storm) was measured worse in the full storm: the throttled tenant kept 8 in
 * flight against a service limit of 10 requests a second, was refused 251 times against 49, and
 * took 1,130 s against 794; its small tenant still waited 17x its time alone (docs/benchmarks.md).
 */
export const ADMISSION_WINDOW_BOUNDS: WindowBounds = DEFAULT_WINDOW_BOUNDS;
/** With nothing queued or in flight for this long, the admission workflow ends (the next request starts it again). */
export const ADMISSION_IDLE_MS = 60_000;
/**
 * A client wakes a tenant's admission at most this often: the admission looks for held starts for
 * `ADMISSION_IDLE_MS` after a wake (and stays up that long), so a start not followed by its own wake
 * is found all the same.
 */
export const ADMISSION_WAKE_EVERY_MS = 1_000;
/**
 * How often a woken admission reads visibility for held starts it has not seen (a wake asks for one
 * sooner, if the last is a second old): every second while its window has room for more than it
 * holds and queues (a start found then is begun at once), every 5 s while the rest wait anyway.
 */
export const ADMISSION_DISCOVER_EVERY_MS = 5_000;
export const ADMISSION_DISCOVER_SOON_MS = 1_000;

/**
 * Whether a connection waits for room: unattended (nobody watches it), not started by a book, and
 * with an id its admission takes (one the product makes for the tenant; one chosen freely by hand
 * starts at once, as it would be refused). The connection asks by it; the product's client holds
 * such a start by it.
 */
export function needsAdmission(input: { readonly unattended: boolean; readonly book?: unknown; readonly customerId: string }, workflowId: string): boolean {
  return input.unattended && input.book === undefined && isAdmissibleConnectionId(workflowId, input.customerId);
}
