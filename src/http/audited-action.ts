/**
 * One request's action in the audit trail, the same for the console and the pipeline entry: each
 * attempt is written (durably) before the action is done, every refusal is recorded whole, and when
 * the work ends its attempts end with it: `ok` with the work's detail, or `refused` (a 4xx) or
 * `failed` (a 5xx) with the code of the HttpError it ended with. A trail that cannot be written
 * refuses the request (503 AuditUnavailable, via auditOrRefuse): nothing is done unrecorded.
 */
import type { AuditBegin, AuditHandle, AuditTrail } from '../audit/audit-trail.js';
import { auditOrRefuse } from './audit-or-refuse.js';
import type { HttpError } from './json-http.js';

export interface AuditedRun<T> {
  /** The work; its attempts are begun by calling `begin` (just before it acts). */
  readonly work: () => Promise<T>;
  /** What the outcome record says of the work's result. */
  readonly detailOf: (result: T) => string | undefined;
  /** The work's failure as the HttpError the app answers with (its error table). */
  readonly toHttpError: (error: unknown) => HttpError;
  /**
   * A failure before any attempt was begun is recorded as a refusal of this record, when given (the
   * pipeline entry's one-record routes); the console records its refusals where it checks roles.
   */
  readonly refusalOf?: () => AuditBegin;
}

export class AuditedAction {
  readonly #attempts: AuditHandle[] = [];

  constructor(private readonly trail: AuditTrail) {}

  /** An attempt, durable before the action (or a 503 and nothing done). */
  async begin(record: AuditBegin): Promise<void> {
    this.#attempts.push(await auditOrRefuse(() => this.trail.begin(record)));
  }

  /** A refusal, whole at once, its code as the outcome's detail. */
  refused(record: AuditBegin, code: string): Promise<void> {
    return auditOrRefuse(() => this.trail.record(record, 'refused', code));
  }

  /** The ids of the attempts begun so far (the console's answer names them). */
  attemptIds(): string[] {
    return this.#attempts.map((attempt) => attempt.id);
  }

  /** Runs the work under this action's record; its result, or its failure rethrown as an HttpError. */
  async run<T>({ work, detailOf, toHttpError, refusalOf }: AuditedRun<T>): Promise<T> {
    let result: T;
    try {
      result = await work();
    } catch (error) {
      const http = toHttpError(error);
      if (this.#attempts.length > 0) await this.#endAll(http.status >= 500 ? 'failed' : 'refused', http.code);
      // A trail that cannot be written has refused already (503): there is nothing to record it in.
      else if (refusalOf !== undefined && http.code !== 'AuditUnavailable') await this.refused(refusalOf(), http.code);
      throw http;
    }
    await this.#endAll('ok', detailOf(result));
    return result;
  }

  async #endAll(outcome: 'ok' | 'refused' | 'failed', detail: string | undefined): Promise<void> {
    await Promise.all(this.#attempts.map((attempt) => attempt.end(outcome, detail)));
  }
}
