/**
 * The sandbox's optional state file (options.stateFile, SANDBOX_STATE_FILE, `npm start`'s one beside
 * its history): everything SandboxState holds, so a restarted sandbox keeps its tenants, saved logins,
 * sessions with their pending challenges and operations, attempt and submission counts, and its
 * instance id (RequestIds issued before the restart stay valid), as the real service would. A session
 * idle past sessionIdleMs still expires on the sandbox's clock: its timestamps are kept as they were.
 * Scenarios are not stored: each login's is resolved again from its username (scenarios.ts).
 *
 * Durability: a reply is sent only once the state it reflects is in the file (StateStore.whenDurable).
 * The file is written whole to a temporary file and renamed over the old one, so a SIGKILL at any
 * moment leaves the previous whole file or the next, never half of one. Not fsynced: a renamed file
 * survives the death of the process (a stop or a kill -9 of the stack) in the kernel's cache; only a
 * power loss could lose the last writes, which a dev sandbox accepts to keep a write well under a millisecond.
 * Coalesced: every change made before a write goes into that one write (the requests handled in the
 * same turn of the event loop share it), and writes are at least MIN_WRITE_INTERVAL_MS apart, so a
 * burst costs one write an interval however many requests it holds, each reply waiting at most that.
 *
 * A missing file starts empty (and is written at once, so an unwritable place fails the start); an
 * unreadable one, or one of another format or version, fails the start naming the file and what is
 * wrong with it (StateFileError): it is never silently replaced.
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { z } from 'zod';
import { AccountsDetailOptions } from '../src/aggregator/schemas.js';
import { describeIssues } from '../src/validation/parse-or-refuse.js';
import { CUSTOMER_ID_PATTERN } from './customer.js';
import { ScenarioParameterError, resolveScenario, type Scenario } from './scenarios.js';
import { SandboxState, stepsFollow, type LoginRecord, type Operation, type OperationKind, type Session, type Tenant } from './state.js';

/** What the file says it is, so a path pointing at any other JSON file is refused rather than overwritten. */
export const STATE_FILE_FORMAT = 'aggregation-sandbox-state';
export const STATE_FILE_VERSION = 1;

/**
 * Least time between two writes: at most 50 writes a second under any load. A write of a dev stack's
 * state takes a fraction of a millisecond (docs/sandbox.md), so the wait, not the write, is what a
 * reply can pay, and only right after another write.
 */
export const MIN_WRITE_INTERVAL_MS = 20;

/** The state file cannot be used: `file` as given, `problem` in words (also the message's tail). */
export class StateFileError extends Error {
  override readonly name = 'StateFileError';
  constructor(
    readonly file: string,
    readonly problem: string,
    options?: ErrorOptions,
  ) {
    super(`sandbox state file ${file}: ${problem}`, options);
  }
}

const Count = z.number().int().nonnegative();
const Timestamp = z.number().finite();

const OperationV1 = z.strictObject({
  kind: z.enum(['accounts', 'summary', 'investments', 'attributes']),
  answers: Count,
  startedAt: Timestamp,
  done: z.boolean(),
  options: AccountsDetailOptions.optional(),
  startedStep: Count,
  answeredStep: Count,
  deliveredStep: Count.optional(),
});

const SessionV1 = z.strictObject({
  requestId: z.string().min(1),
  loginId: z.string().min(1),
  mode: z.enum(['live', 'cached', 'refresh']),
  save: z.boolean(),
  phase: z.enum(['challenge', 'open']),
  stepIndex: Count,
  lastSeenAt: Timestamp,
  openedAt: Timestamp,
  dataRequests: Count,
  operations: z.array(OperationV1),
});

const LoginV1 = z.strictObject({
  id: z.string().min(1),
  username: z.string().min(1),
  saved: z.boolean(),
  lastRefreshAt: Timestamp,
  pending: z.strictObject({ pendingPolls: Count, pendingMs: Count.optional() }).optional(),
});

const TenantV1 = z.strictObject({
  id: z.string().regex(CUSTOMER_ID_PATTERN),
  sequence: Count,
  // Arrays of entries, not objects keyed by user input (a username "__proto__" stays a username).
  attempts: z.array(z.strictObject({ username: z.string().min(1), count: Count })),
  submissions: z.strictObject({
    answers: Count,
    credentials: Count,
    byAnswer: z.array(z.strictObject({ hash: z.string().min(1), requestId: z.string(), count: Count })),
  }),
  logins: z.array(LoginV1),
  sessions: z.array(SessionV1),
});

const StateFileV1 = z.strictObject({
  format: z.literal(STATE_FILE_FORMAT),
  version: z.literal(STATE_FILE_VERSION),
  instance: z.string().min(1),
  /** When it was written (ISO), for a reader of the file only. */
  savedAt: z.string(),
  tenants: z.array(TenantV1),
});
type StateFileV1 = z.infer<typeof StateFileV1>;

/** Figures of the writes so far (Sandbox.stateFileStats): how many, their size and cost. */
export interface StateFileStats {
  readonly path: string;
  readonly writes: number;
  /** Size of the last write. */
  readonly bytes: number;
  /** Serialising and writing the last one, and all of them (ms). */
  readonly lastWriteMs: number;
  readonly totalWriteMs: number;
}

/** The whole state as the file holds it. */
export function snapshotOf(state: SandboxState): StateFileV1 {
  return {
    format: STATE_FILE_FORMAT,
    version: STATE_FILE_VERSION,
    instance: state.instance,
    savedAt: new Date().toISOString(),
    tenants: [...state.tenants.values()].map((tenant) => ({
      id: tenant.id,
      sequence: tenant.sequence,
      attempts: [...tenant.attempts].map(([username, count]) => ({ username, count })),
      submissions: {
        answers: tenant.submissions.answers,
        credentials: tenant.submissions.credentials,
        byAnswer: [...tenant.submissions.byAnswer].map(([hash, { requestId, count }]) => ({ hash, requestId, count })),
      },
      logins: [...tenant.logins.values()].map((login) => ({
        id: login.id,
        username: login.username,
        saved: login.saved,
        lastRefreshAt: login.lastRefreshAt,
        ...(login.pending ? { pending: login.pending } : {}),
      })),
      sessions: [...tenant.sessions.values()].map((session) => ({
        requestId: session.requestId,
        loginId: session.login.id,
        mode: session.mode,
        save: session.save,
        phase: session.phase,
        stepIndex: session.stepIndex,
        lastSeenAt: session.lastSeenAt,
        openedAt: session.openedAt,
        dataRequests: session.dataRequests,
        operations: [...session.operations].map(([kind, operation]) => ({ kind, ...operation })),
      })),
    })),
  };
}

/** The state a file's text holds; every problem is a StateFileError naming `file`. */
export function stateFrom(file: string, text: string): SandboxState {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new StateFileError(file, `is not JSON (${(error as Error).message}); move it away or delete it to start the sandbox empty`, { cause: error });
  }
  const header = z.looseObject({ format: z.literal(STATE_FILE_FORMAT), version: z.unknown() }).safeParse(json);
  if (!header.success)
    throw new StateFileError(file, `is not a sandbox state file (it has no "format": "${STATE_FILE_FORMAT}"); point the sandbox at another file`);
  if (header.data.version !== STATE_FILE_VERSION) {
    throw new StateFileError(
      file,
      `is of version ${JSON.stringify(header.data.version)}, and this sandbox reads version ${STATE_FILE_VERSION} only; move it away or delete it to start the sandbox empty`,
    );
  }
  const parsed = StateFileV1.safeParse(json);
  if (!parsed.success) throw new StateFileError(file, `does not hold a valid state: ${describeIssues(parsed.error)}`);

  const state = new SandboxState(parsed.data.instance);
  let lastStep = 0;
  for (const saved of parsed.data.tenants) {
    const where = `tenant ${saved.id}`;
    if (state.tenants.has(saved.id)) throw new StateFileError(file, `holds ${where} twice`);
    const tenant: Tenant = state.tenant(saved.id);
    tenant.sequence = saved.sequence;
    for (const { username, count } of saved.attempts) tenant.attempts.set(username, count);
    tenant.submissions.answers = saved.submissions.answers;
    tenant.submissions.credentials = saved.submissions.credentials;
    for (const { hash, requestId, count } of saved.submissions.byAnswer) tenant.submissions.byAnswer.set(hash, { requestId, count });
    for (const login of saved.logins) {
      const id = state.loginIdFor(tenant.id, login.username);
      if (login.id !== id) throw new StateFileError(file, `${where}: login ${login.id} of "${login.username}" should be ${id}`);
      const record: LoginRecord = {
        id,
        tenant: tenant.id,
        username: login.username,
        scenario: scenarioOf(file, where, login.username),
        saved: login.saved,
        lastRefreshAt: login.lastRefreshAt,
        ...(login.pending ? { pending: login.pending } : {}),
      };
      tenant.logins.set(id, record);
    }
    for (const session of saved.sessions) {
      const login = tenant.logins.get(session.loginId);
      if (!login) throw new StateFileError(file, `${where}: session ${session.requestId} names login ${session.loginId}, which the file does not hold`);
      if (session.phase === 'challenge' && session.stepIndex >= login.scenario.steps.length) {
        throw new StateFileError(
          file,
          `${where}: session ${session.requestId} waits on challenge round ${session.stepIndex + 1} of "${login.username}", which has ${login.scenario.steps.length} now`,
        );
      }
      const operations = new Map<OperationKind, Operation>();
      for (const { kind, ...operation } of session.operations) {
        operations.set(kind, operation);
        lastStep = Math.max(lastStep, operation.startedStep, operation.answeredStep, operation.deliveredStep ?? 0);
      }
      const restored: Session = {
        requestId: session.requestId,
        tenant: tenant.id,
        login,
        mode: session.mode,
        save: session.save,
        phase: session.phase,
        stepIndex: session.stepIndex,
        lastSeenAt: session.lastSeenAt,
        openedAt: session.openedAt,
        dataRequests: session.dataRequests,
        operations,
      };
      tenant.sessions.set(session.requestId, restored);
    }
  }
  stepsFollow(lastStep);
  return state;
}

/** A stored login's scenario, resolved again from its username: the catalogue is code, not state. */
function scenarioOf(file: string, where: string, username: string): Scenario {
  let scenario: Scenario | undefined;
  try {
    scenario = resolveScenario(username);
  } catch (error) {
    if (!(error instanceof ScenarioParameterError)) throw error;
    throw new StateFileError(
      file,
      `${where}: the login of "${username}" names no scenario this sandbox has (${error.message}); delete the file to start the sandbox empty`,
      { cause: error },
    );
  }
  if (!scenario)
    throw new StateFileError(
      file,
      `${where}: the login of "${username}" names no scenario this sandbox has (sandbox/scenarios.ts); delete the file to start the sandbox empty`,
    );
  return scenario;
}

/**
 * The state file of one running sandbox: loads it (`open`), then writes the state after changes,
 * coalesced, before the replies that reflect them (`changed`, `whenDurable`). One sandbox a file.
 */
export class StateStore {
  private dirty = false;
  private closed = false;
  private cancelScheduled: (() => void) | undefined;
  private waiting: ((error?: StateFileError) => void)[] = [];
  private lastWriteEnd = Number.NEGATIVE_INFINITY;
  private stats: StateFileStats;

  private constructor(
    readonly path: string,
    readonly state: SandboxState,
  ) {
    this.stats = { path, writes: 0, bytes: 0, lastWriteMs: 0, totalWriteMs: 0 };
  }

  /** The file's state (empty when there is no file), written back at once so a place that cannot be written fails now, not at the first request. */
  static open(path: string): StateStore {
    let text: string | undefined;
    try {
      text = readFileSync(path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw new StateFileError(path, `cannot be read: ${(error as Error).message}`, { cause: error });
    }
    const store = new StateStore(path, text === undefined ? new SandboxState() : stateFrom(path, text));
    try {
      mkdirSync(dirname(path), { recursive: true });
    } catch (error) {
      throw new StateFileError(path, `its directory cannot be created: ${(error as Error).message}`, { cause: error });
    }
    store.write();
    return store;
  }

  /** The state changed: it will be written soon (and before any reply asked for in the meantime). */
  changed(): void {
    // A closed sandbox's late handler (a slow reply) must not overwrite the file a new one may have opened.
    if (this.closed) return;
    this.dirty = true;
    this.schedule();
  }

  /** Runs `then` once everything changed so far is in the file: at once when it already is; with the error when the write failed. */
  whenDurable(then: (error?: StateFileError) => void): void {
    if (!this.dirty) return then();
    this.waiting.push(then);
    this.schedule();
  }

  /** Writes now what changed, and answers who waited for it. */
  flush(): void {
    this.cancelScheduled?.();
    this.cancelScheduled = undefined;
    const waiting = this.waiting;
    this.waiting = [];
    let failure: StateFileError | undefined;
    try {
      if (this.dirty) this.write();
    } catch (error) {
      if (!(error instanceof StateFileError)) throw error;
      failure = error;
      console.error(`sandbox: ${error.message}`);
    }
    for (const then of waiting) then(failure);
  }

  /** The last write, then no more (the sandbox closed; its connections are gone). */
  close(): void {
    this.flush();
    this.closed = true;
  }

  fileStats(): StateFileStats {
    return this.stats;
  }

  private schedule(): void {
    if (this.cancelScheduled) return;
    const wait = this.lastWriteEnd + MIN_WRITE_INTERVAL_MS - performance.now();
    // setImmediate: the requests already read in this turn of the event loop are handled first and share the write.
    if (wait > 0) {
      const timer = setTimeout(() => this.flush(), wait);
      this.cancelScheduled = () => clearTimeout(timer);
    } else {
      const immediate = setImmediate(() => this.flush());
      this.cancelScheduled = () => clearImmediate(immediate);
    }
  }

  /** Temporary file, then rename: a reader (or a restart after a SIGKILL) sees one whole file or the other. */
  private write(): void {
    const started = performance.now();
    this.dirty = false;
    const text = JSON.stringify(snapshotOf(this.state));
    const temporary = `${this.path}.tmp`;
    try {
      writeFileSync(temporary, text);
      renameSync(temporary, this.path);
    } catch (error) {
      // Still to be written: the next change or reply tries again.
      this.dirty = true;
      throw new StateFileError(this.path, `cannot be written: ${(error as Error).message}`, { cause: error });
    } finally {
      this.lastWriteEnd = performance.now();
    }
    const ms = this.lastWriteEnd - started;
    this.stats = {
      path: this.path,
      writes: this.stats.writes + 1,
      bytes: Buffer.byteLength(text),
      lastWriteMs: ms,
      totalWriteMs: this.stats.totalWriteMs + ms,
    };
  }
}
