/**
 * Where the audit trail is kept (AUDIT_STORE): PostgreSQL in production, a file of JSON lines on a
 * developer's machine. Both only append, and both survive restarts.
 */
import type { AuditAttempt, AuditEntry, AuditOutcomeRecord, AuditQuery } from './audit-entry.js';

export interface AuditStore {
  /** Records an attempt; resolves once it is durable (the action may then go ahead). */
  attempt(attempt: AuditAttempt): Promise<void>;
  /** Records how an attempt ended. */
  outcome(outcome: AuditOutcomeRecord): Promise<void>;
  /** Entries of one tenant (or every one) in a time range, oldest first. */
  query(query: AuditQuery): Promise<AuditEntry[]>;
  /** Where it is, for logs: never a password. */
  readonly where: string;
  close(): Promise<void>;
}

/** The store could not record or read: the action is refused rather than done unrecorded. */
export class AuditUnavailableError extends Error {
  override readonly name = 'AuditUnavailableError';
  constructor(
    readonly where: string,
    reason: string,
    options?: ErrorOptions,
  ) {
    super(`the audit trail at ${where} is unavailable: ${reason}`, options);
  }
}

/** A record read back that is not one the product wrote (a changed or truncated line, a row edited by hand). */
export class AuditRecordInvalidError extends Error {
  override readonly name = 'AuditRecordInvalidError';
  constructor(
    readonly where: string,
    readonly position: string,
    reason: string,
  ) {
    super(`the audit trail at ${where} has an invalid record at ${position}: ${reason}`);
  }
}
