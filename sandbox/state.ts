/**
 * In-memory state of the sandbox: tenants (one per customer id, created lazily), their saved logins,
 * their sessions (RequestIds) and each session's data operations. Identifiers are derived from the
 * tenant: LoginId from tenant + username (the same in every run, so data is repeatable), RequestId
 * from tenant + a counter + an id of this sandbox instance (so a RequestId kept across a restart of an
 * in-memory sandbox is unknown rather than silently naming someone else's session). A LoginId or
 * RequestId of one tenant means nothing in another. In memory only by default: a restart forgets
 * everything. With a state file (options.stateFile, state-file.ts) all of this, the instance id
 * included, is written after every change and read back at start, so a restart keeps saved logins,
 * sessions and their operations, and old RequestIds stay valid.
 */
import { randomUUID } from 'node:crypto';
import type { AccountsDetailOptions } from '../src/aggregator/schemas.js';
import { emptySubmissionCounts, type SubmissionCounts } from './authorize-submissions.js';
import { uuidFrom } from './random.js';
import type { DataBehaviour, Scenario } from './scenarios.js';

export interface LoginRecord {
  readonly id: string;
  readonly tenant: string;
  readonly username: string;
  readonly scenario: Scenario;
  /** Set once saved (Save true, or the admin endpoint); cached mode and DeleteCard need it. */
  saved: boolean;
  /** Timestamp (ms) of the last successful live Authorize or refresh. */
  lastRefreshAt: number;
  /** Per-login override of the scenario's pending behaviour (admin endpoint). */
  pending?: Pick<DataBehaviour, 'pendingPolls' | 'pendingMs'>;
}

export type SessionMode = 'live' | 'cached' | 'refresh';
export type OperationKind = 'accounts' | 'summary' | 'investments' | 'attributes';

export interface Operation {
  /** Answers given so far (each request or poll is one). */
  answers: number;
  readonly startedAt: number;
  done: boolean;
  /** GetAccountsDetail options, replayed by GetAccountsDetailAsync. */
  options?: AccountsDetailOptions;
  /**
   * When it started, was last answered and was delivered (its first ready answer), as steps of one
   * counter (`nextStep`), not clock readings: two requests in the same millisecond (or under a test's
   * frozen clock) still have an order. Used to tell an operation superseded by a later one.
   */
  readonly startedStep: number;
  answeredStep: number;
  deliveredStep?: number;
}

/**
 * Counter ordering operation events. Process-wide (several sandboxes in one process share it): only
 * the order of two steps is ever compared, never their values.
 */
let step = 0;
const nextStep = (): number => ++step;

/** After loading steps from a state file: later steps must still order after them. */
export function stepsFollow(loaded: number): void {
  step = Math.max(step, loaded);
}

/** A new operation, not yet answered. */
export function startOperation(now: number, options?: AccountsDetailOptions): Operation {
  const started = nextStep();
  return { answers: 0, startedAt: now, done: false, ...(options ? { options } : {}), startedStep: started, answeredStep: started };
}

export interface Session {
  readonly requestId: string;
  readonly tenant: string;
  readonly login: LoginRecord;
  readonly mode: SessionMode;
  readonly save: boolean;
  phase: 'challenge' | 'open';
  /** Index of the pending challenge round while phase is 'challenge'. */
  stepIndex: number;
  lastSeenAt: number;
  openedAt: number;
  /** Data requests that reached the session (for loading and scenario faults). */
  dataRequests: number;
  readonly operations: Map<OperationKind, Operation>;
}

export interface Tenant {
  readonly id: string;
  readonly logins: Map<string, LoginRecord>;
  readonly sessions: Map<string, Session>;
  /** Live Authorize attempts per username, for "fails n times then succeeds" scenarios. */
  readonly attempts: Map<string, number>;
  /** Authorize submissions (answers only as hashes), for GET /sandbox/authorize-submissions. */
  readonly submissions: SubmissionCounts;
  sequence: number;
}

export class SandboxState {
  readonly tenants = new Map<string, Tenant>();

  /**
   * @param instance distinguishes this instance's RequestIds from a previous run's; a state file
   *   gives back the one it was saved with, so RequestIds issued before a restart stay valid.
   */
  constructor(readonly instance: string = randomUUID()) {}

  tenant(id: string): Tenant {
    let tenant = this.tenants.get(id);
    if (!tenant) {
      tenant = { id, logins: new Map(), sessions: new Map(), attempts: new Map(), submissions: emptySubmissionCounts(), sequence: 0 };
      this.tenants.set(id, tenant);
    }
    return tenant;
  }

  loginIdFor(tenant: string, username: string): string {
    return uuidFrom(`login:${tenant}:${username}`);
  }

  /** The login record for a username in a tenant (saved or not yet), created on first use. */
  loginFor(tenant: Tenant, scenario: Scenario, now: number): LoginRecord {
    const id = this.loginIdFor(tenant.id, scenario.username);
    let login = tenant.logins.get(id);
    if (!login) {
      login = { id, tenant: tenant.id, username: scenario.username, scenario, saved: false, lastRefreshAt: now };
      tenant.logins.set(id, login);
    }
    return login;
  }

  openSession(tenant: Tenant, login: LoginRecord, mode: SessionMode, save: boolean, now: number): Session {
    tenant.sequence += 1;
    const session: Session = {
      requestId: uuidFrom(`request:${this.instance}:${tenant.id}:${tenant.sequence}`),
      tenant: tenant.id,
      login,
      mode,
      save,
      phase: 'open',
      stepIndex: 0,
      lastSeenAt: now,
      openedAt: now,
      dataRequests: 0,
      operations: new Map(),
    };
    tenant.sessions.set(session.requestId, session);
    return session;
  }

  /** Drops sessions idle for longer than `idleMs` (called now and then; lookups also check). */
  sweep(now: number, idleMs: number): void {
    for (const tenant of this.tenants.values()) {
      for (const [id, session] of tenant.sessions) if (now - session.lastSeenAt > idleMs) tenant.sessions.delete(id);
    }
  }
}

/** The pending behaviour in force for a login: the admin override, else its scenario's. */
export function behaviourOf(login: LoginRecord): DataBehaviour {
  return login.pending ? { ...login.scenario.data, ...login.pending } : login.scenario.data;
}

/**
 * How long an operation takes on its own clock: `pendingMs`, else its `pendingPolls` at `pollMs` each.
 * Past this it is complete whether or not anyone polled it, so an abandoned operation never keeps
 * the card busy for longer than its own processing time (and less once superseded: `supersedes`).
 */
function processingMsOf(behaviour: DataBehaviour, pollMs: number): number {
  return behaviour.pendingMs ?? behaviour.pendingPolls * pollMs;
}

/**
 * Whether an operation is still running on its own clock: not delivered, and its processing time not
 * over. Whether it holds the card (CARD_IN_USE, the attributes precondition) also depends on `supersedes`.
 */
export function isRunning(operation: Operation, behaviour: DataBehaviour, now: number, pollMs: number): boolean {
  return !operation.done && now - operation.startedAt < processingMsOf(behaviour, pollMs);
}

/**
 * Whether `later` (an operation of the same kind on the same login, in another session) supersedes
 * `operation`: `later` started after it and was delivered, and nobody asked about `operation` since
 * that delivery. The session that started `operation` abandoned it for one whose data the card has
 * already delivered, so `operation` is no longer really processing anything and stops holding the card.
 * An operation its session still polls after that delivery keeps holding the card until it is done.
 */
export function supersedes(later: Operation, operation: Operation): boolean {
  return later.deliveredStep !== undefined && later.startedStep > operation.startedStep && later.deliveredStep > operation.answeredStep;
}

/**
 * One answer of an operation: counts it, and says whether it is ready. With `pendingMs` readiness is
 * by elapsed time; otherwise the first `pendingPolls` answers are pending, unless the operation's
 * own time (`pendingPolls` × `pollMs`) ran out first.
 */
export function advance(operation: Operation, behaviour: DataBehaviour, now: number, pollMs: number): 'OPERATION_DISPATCHED' | 'OPERATION_PENDING' | 'ready' {
  if (operation.done) return 'ready';
  operation.answers += 1;
  operation.answeredStep = nextStep();
  const timeUp = now - operation.startedAt >= processingMsOf(behaviour, pollMs);
  const ready = timeUp || (behaviour.pendingMs === undefined && operation.answers > behaviour.pendingPolls);
  if (ready) {
    operation.done = true;
    operation.deliveredStep = operation.answeredStep;
    return 'ready';
  }
  return behaviour.dispatchedFirst && operation.answers === 1 ? 'OPERATION_DISPATCHED' : 'OPERATION_PENDING';
}
