/**
 * What the pipeline client throws: one class per thing that can go wrong, each with `name` set,
 * the context in fields (never a password or an answer), and the underlying error as `cause`.
 */
import type { ConnectionFailureType } from '../contract/connection/connection-definitions.js';

/** Base class: `catch (error) { if (error instanceof ConnectionClientError) ... }` catches them all. */
export abstract class ConnectionClientError extends Error {
  abstract override readonly name: string;
}

/** The connection input or business key failed validation; nothing was sent to Temporal. */
export class InvalidConnectionInputError extends ConnectionClientError {
  override readonly name = 'InvalidConnectionInputError';
  constructor(
    /** "session.institution: must not be empty; products: must request at least one of ..." */
    readonly problems: string,
    options?: { cause?: unknown },
  ) {
    super(`invalid connection input: ${problems}`, options);
  }
}

export class InvalidBusinessKeyError extends ConnectionClientError {
  override readonly name = 'InvalidBusinessKeyError';
  constructor(
    readonly key: string,
    readonly problem: string,
  ) {
    super(`invalid business key ${JSON.stringify(key)}: ${problem}`);
  }
}

/** No connection with this workflow id (business key) exists in the namespace. */
export class ConnectionNotFoundError extends ConnectionClientError {
  override readonly name = 'ConnectionNotFoundError';
  constructor(
    readonly workflowId: string,
    options?: { cause?: unknown },
  ) {
    super(`no connection ${JSON.stringify(workflowId)}`, options);
  }
}

/**
 * A connection held by Temporal until its tenant's admission has room (UNATTENDED_ADMISSION=window:
 * the client started it with a start delay): it exists, but none of its code has run, so it has no
 * state to read yet. Its result can be awaited; its state reads once it begins.
 */
export class ConnectionHeldError extends ConnectionClientError {
  override readonly name = 'ConnectionHeldError';
  constructor(
    readonly workflowId: string,
    readonly admissionWorkflowId: string,
    options?: { cause?: unknown },
  ) {
    super(
      `connection ${JSON.stringify(workflowId)} is held until its tenant's admission (${admissionWorkflowId}) has room: its state reads once it begins`,
      options,
    );
  }
}

/**
 * A connection with this key already ran to its end and starting it again was not asked for
 * (`rerun: 'always'`, or `'if-failed'` for a key whose run did not complete).
 */
export class ConnectionAlreadyEndedError extends ConnectionClientError {
  override readonly name = 'ConnectionAlreadyEndedError';
  constructor(
    readonly workflowId: string,
    options?: { cause?: unknown },
  ) {
    super(`connection ${JSON.stringify(workflowId)} already ended; read its result, or start it again with { rerun: 'always' }`, options);
  }
}

/**
 * An answer was refused before it reached the service: by our own check (`source: 'client'`), or by
 * the workflow's update validator (`source: 'validator'`). Nothing was recorded in history.
 */
export class AnswerRejectedError extends ConnectionClientError {
  override readonly name = 'AnswerRejectedError';
  constructor(
    readonly workflowId: string,
    readonly source: 'client' | 'validator',
    /** What is wrong, naming the prompt: `"What city…": needs exactly one answer`. */
    readonly problem: string,
    readonly challengeSetId?: string,
    options?: { cause?: unknown },
  ) {
    super(`answer to ${workflowId} rejected: ${problem}`, options);
  }
}

/** How Temporal ended a connection that did not end with a workflow failure type (or, Unknown, neither said). */
export const CONNECTION_END_TYPES = ['Cancelled', 'Terminated', 'TimedOut', 'Unknown'] as const;

/** Why a connection did not complete: a workflow failure type, or how Temporal ended it. */
export type ConnectionEndType = ConnectionFailureType | (typeof CONNECTION_END_TYPES)[number];

/** The connection ended without a result. */
export class ConnectionFailedError extends ConnectionClientError {
  override readonly name = 'ConnectionFailedError';
  constructor(
    readonly workflowId: string,
    readonly type: ConnectionEndType,
    /** The failure's own message, e.g. "the service refused the credentials". */
    readonly reason: string,
    /** The aggregation service's code, when the failure came from one (e.g. INVALID_USERNAME_OR_PASSWORD). */
    readonly serviceCode?: string,
    options?: { cause?: unknown },
  ) {
    super(`connection ${workflowId} failed (${type}${serviceCode ? `, ${serviceCode}` : ''}): ${reason}`, options);
  }
}

/** Temporal could not be reached or refused the call for a reason that is not the connection's. */
export class TemporalUnavailableError extends ConnectionClientError {
  override readonly name: string = 'TemporalUnavailableError';
  constructor(
    readonly address: string | undefined,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
  /** A call Temporal refused (a ServiceError), with where Temporal is when it is known; its credentials refused: TemporalAccessDeniedError. */
  static refused(address: string | undefined, error: Error): TemporalUnavailableError {
    const where = address ? ` at ${address}` : '';
    return (
      TemporalAccessDeniedError.of(address, error) ??
      new TemporalUnavailableError(address, `Temporal${where} refused the call: ${error.message}`, { cause: error })
    );
  }
}

/** gRPC's PERMISSION_DENIED and UNAUTHENTICATED: what Temporal's authorizer answers. */
const ACCESS_DENIED_CODES: ReadonlyMap<number, string> = new Map([
  [7, 'PERMISSION_DENIED'],
  [16, 'UNAUTHENTICATED'],
]);

/** Temporal's authorizer refused the call: no token, an expired one, another audience's, or a role it lacks. Retrying will not help. */
export class TemporalAccessDeniedError extends TemporalUnavailableError {
  override readonly name = 'TemporalAccessDeniedError';
  constructor(
    address: string | undefined,
    /** PERMISSION_DENIED or UNAUTHENTICATED. */
    readonly code: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(address, message, options);
  }

  /** The refusal of the caller's credentials in `error` or its causes (a connect wraps it twice); undefined for any other error. */
  static of(address: string | undefined, error: unknown): TemporalAccessDeniedError | undefined {
    for (let current: unknown = error, depth = 0; current instanceof Error && depth < 4; current = current.cause, depth += 1) {
      const denied = ACCESS_DENIED_CODES.get(grpcCodeOf(current) ?? -1);
      if (denied === undefined) continue;
      const said = (current as { details?: unknown }).details ?? (current.cause as { details?: unknown } | undefined)?.details;
      return new TemporalAccessDeniedError(
        address,
        denied,
        `Temporal${address ? ` at ${address}` : ''} refused the caller's credentials (${denied}${typeof said === 'string' && said ? `: ${said}` : ''}): the token (TEMPORAL_API_KEY or TEMPORAL_API_KEY_FILE) is missing, expired, for another audience or issuer, or lacks the role on this namespace that the call takes`,
        { cause: error },
      );
    }
    return undefined;
  }
}

/** The gRPC status code behind an error the SDK threw (a ServiceError's cause carries it), if any. */
export function grpcCodeOf(error: unknown): number | undefined {
  const cause = (error as { cause?: { code?: unknown } } | undefined)?.cause;
  const code = (error as { code?: unknown } | undefined)?.code ?? cause?.code;
  return typeof code === 'number' ? code : undefined;
}

/**
 * Waiting for a connection's result failed: Temporal kept refusing the wait (unavailable, rate
 * limited, deadline exceeded) longer than the caller allowed. The connection itself may well be
 * running or done: ask again, or read its state; this is a failed wait, not a lost connection.
 */
export class ResultWaitFailedError extends ConnectionClientError {
  override readonly name = 'ResultWaitFailedError';
  constructor(
    readonly workflowId: string,
    /** The last transient gRPC code, e.g. UNAVAILABLE. */
    readonly lastCode: string,
    readonly attempts: number,
    options?: { cause?: unknown },
  ) {
    super(
      `gave up waiting for the result of ${workflowId} after ${attempts} refused attempts (last: ${lastCode}); the connection itself is unaffected`,
      options,
    );
  }
}

/** A refresh schedule request (or the login it names) failed validation; nothing was sent to Temporal. */
export class InvalidScheduleError extends ConnectionClientError {
  override readonly name = 'InvalidScheduleError';
  constructor(
    /** "cadence.at: must be HH:MM on a 24-hour clock (00:00 to 23:59); loginId: must not be empty" */
    readonly problems: string,
    options?: { cause?: unknown },
  ) {
    super(`invalid refresh schedule: ${problems}`, options);
  }
}

/** A login reference (customer id + LoginId) failed validation; nothing was sent to Temporal. */
export class InvalidLoginRefError extends ConnectionClientError {
  override readonly name = 'InvalidLoginRefError';
  constructor(
    readonly problems: string,
    options?: { cause?: unknown },
  ) {
    super(`invalid login: ${problems}`, options);
  }
}

/**
 * The login needs its end user to authenticate (two-step verification, a trusted device, or a
 * challenge a scheduled run met), so it cannot be refreshed unattended: the schedule was refused.
 */
export class RefreshNotUnattendedError extends ConnectionClientError {
  override readonly name = 'RefreshNotUnattendedError';
  constructor(
    readonly customerId: string,
    readonly loginId: string,
    /** The challenge type that showed it (TextOrCall, WaitUntilEUAccept, ...). */
    readonly challengeType: string,
    /** The connection that met it. */
    readonly workflowId: string,
    readonly reason: string,
  ) {
    super(`login ${loginId} of ${customerId} cannot be refreshed unattended: ${reason} (seen by ${workflowId})`);
  }
}

/** No refresh schedule for this login. */
export class RefreshScheduleNotFoundError extends ConnectionClientError {
  override readonly name = 'RefreshScheduleNotFoundError';
  constructor(
    readonly scheduleId: string,
    options?: { cause?: unknown },
  ) {
    super(`no refresh schedule ${JSON.stringify(scheduleId)}`, options);
  }
}

/**
 * The login's schedule exists but Temporal could not describe it yet: the scheduler workflow behind
 * a schedule answers only once it has run its first workflow task, which on a server that has just
 * started waits for the server's own scheduler worker. Ask again in a few seconds.
 */
export class RefreshScheduleNotReadyError extends ConnectionClientError {
  override readonly name = 'RefreshScheduleNotReadyError';
  constructor(
    readonly scheduleId: string,
    /** The last refusal's gRPC code, e.g. DEADLINE_EXCEEDED (the describe waited for the scheduler). */
    readonly lastCode: string,
    readonly attempts: number,
    readonly waitedMs: number,
    options?: { cause?: unknown },
  ) {
    super(
      `refresh schedule ${JSON.stringify(scheduleId)} exists but its scheduler has not answered yet (${attempts} attempts over ${Math.round(waitedMs / 1000)} s, last: ${lastCode}); ask again in a few seconds`,
      options,
    );
  }
}

/** Forgetting a login did not finish: `type` is the workflow's failure type (e.g. CardInUse), or how Temporal ended it. */
export class ForgetFailedError extends ConnectionClientError {
  override readonly name = 'ForgetFailedError';
  constructor(
    readonly workflowId: string,
    readonly type: string,
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(`forgetting (${workflowId}) failed (${type}): ${reason}`, options);
  }
}

/** A book request (enrolment, schedule, window, page) failed validation; nothing was sent to Temporal. */
export class InvalidBookRequestError extends ConnectionClientError {
  override readonly name = 'InvalidBookRequestError';
  constructor(
    /** "cadence: must be lower-case letters, digits and -; window.floor: must be at most the ceiling" */
    readonly problems: string,
    options?: { cause?: unknown },
  ) {
    super(`invalid book request: ${problems}`, options);
  }
}

/** The login is not in its tenant's book (never enrolled, or removed or forgotten since). */
export class BookEntryNotFoundError extends ConnectionClientError {
  override readonly name = 'BookEntryNotFoundError';
  constructor(
    readonly customerId: string,
    readonly loginId: string,
    options?: { cause?: unknown },
  ) {
    super(`login ${loginId} is not in the book of ${customerId}`, options);
  }
}

/** No book refresh with this id (or none yet for this tenant and cadence). */
export class BookRefreshNotFoundError extends ConnectionClientError {
  override readonly name = 'BookRefreshNotFoundError';
  constructor(
    readonly what: string,
    options?: { cause?: unknown },
  ) {
    super(`no book refresh ${what}`, options);
  }
}

/** The book refresh refused an operator's request (pause, resume, cancel or resize): it says why. */
export class BookRefreshRefusedError extends ConnectionClientError {
  override readonly name = 'BookRefreshRefusedError';
  constructor(
    readonly refreshWorkflowId: string,
    readonly request: 'pause' | 'resume' | 'cancel' | 'resize',
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(`book refresh ${refreshWorkflowId} refused ${request}: ${reason}`, options);
  }
}

/** The refresh has not ended, so it has no report yet: its progress says how far it is. */
export class BookReportNotReadyError extends ConnectionClientError {
  override readonly name = 'BookReportNotReadyError';
  constructor(
    readonly refreshWorkflowId: string,
    options?: { cause?: unknown; page?: number },
  ) {
    super(
      options?.page === undefined
        ? `book refresh ${refreshWorkflowId} is still running: read its progress, or its report once it ends`
        : `book refresh ${refreshWorkflowId} is still running and has not written page ${options.page} of its report yet (a page is written once its logins are done): read its progress`,
      options,
    );
  }
}

/** Why a result sent by reference was not handed out: no such reference, a wrong token, claimed already, or its window passed. */
export const RESULT_CLAIM_REFUSALS = ['unknown', 'wrong-token', 'claimed', 'expired'] as const;
export type ResultClaimRefusal = (typeof RESULT_CLAIM_REFUSALS)[number];

/** A completion callback's result reference was refused (the delivery's validator said why); nothing was claimed. */
export class ResultClaimRefusedError extends ConnectionClientError {
  override readonly name = 'ResultClaimRefusedError';
  constructor(
    readonly webhookId: string,
    readonly reason: ResultClaimRefusal,
    /** What the delivery (or the address) said, never the token. */
    readonly problem: string,
    options?: { cause?: unknown },
  ) {
    super(`the result of ${webhookId} cannot be claimed: ${problem}`, options);
  }
}
