/**
 * What the pipeline entry records in the audit trail (src/audit): every start, cancel and claim
 * (its attempt before it is done, then its outcome) and every refusal, under the actor
 * `pipeline:<customerId>`; a pipeline key shows as its hash's prefix (never the key), a result token
 * as nothing at all. A trail that cannot be written refuses the request (503): nothing is done
 * unrecorded.
 */
import type { AuditAction, AuditActor } from '../audit/audit-entry.js';
import type { AuditHandle, AuditTrail } from '../audit/audit-trail.js';
import { auditOrRefuse } from '../http/audit-or-refuse.js';
import type { JsonReply } from '../http/json-http.js';
import { toHttpError } from './entry-errors.js';
import type { PipelineCaller } from '../identity/pipeline-keys.js';

/** A tenant's pipeline, by the key it presented: `pipeline:<customerId>`, the key's hash prefix in its subject. */
export function keyActor(caller: PipelineCaller): AuditActor {
  return { subject: `pipeline:${caller.customerId}:key-sha256:${caller.keyHashPrefix}`, name: `pipeline:${caller.customerId}`, via: 'pipeline-key' };
}

/** A key of no tenant (or none at all): who it was is unknown, its hash prefix tells one key's tries from another's. */
export function unknownKeyActor(keyHashPrefix: string | undefined): AuditActor {
  return { subject: keyHashPrefix === undefined ? 'pipeline:?:no-key' : `pipeline:?:key-sha256:${keyHashPrefix}`, name: 'pipeline:?', via: 'pipeline-key' };
}

/** Whoever holds a result reference's token: the tenant named by the address (the token itself is never written). */
export function resultTokenActor(customerId: string): AuditActor {
  return { subject: `pipeline:${customerId}:result-token`, name: `pipeline:${customerId}`, via: 'result-token' };
}

export interface EntryAuditRecord {
  readonly actor: AuditActor;
  readonly action: AuditAction;
  readonly tenant?: string | undefined;
  readonly target?: string | undefined;
  readonly detail?: string | undefined;
}

export class EntryAudit {
  constructor(private readonly trail: AuditTrail) {}

  /** An action about to be done: its attempt, durable before it is done. */
  begin(record: EntryAuditRecord): Promise<AuditHandle> {
    return auditOrRefuse(() => this.trail.begin(record));
  }

  /** A refusal, whole at once (its code as the outcome's detail). */
  refused(record: EntryAuditRecord, code: string): Promise<void> {
    return auditOrRefuse(() => this.trail.record(record, 'refused', code));
  }
}

/** What a route's work says of its record as it learns it (the connection it acts on), and when it is about to act. */
export interface AuditedWork {
  /** Adds to the record (its target, its tenant, a detail) before it is written. */
  note(this: void, more: Partial<EntryAuditRecord>): void;
  /** Records the attempt (durable, or a 503 and nothing done): call it just before acting. */
  begin(this: void): Promise<void>;
}

/**
 * Runs a route's work under one record of the trail: a refusal before the attempt is recorded whole
 * (its code as the outcome), an attempt begun ends ok with the work's detail, or refused or failed
 * with the code it ended with. Returns the work's reply; rethrows its refusal as an HttpError.
 */
export async function audited(
  audit: EntryAudit,
  base: EntryAuditRecord,
  log: (line: string) => void,
  work: (record: AuditedWork) => Promise<{ readonly reply: JsonReply; readonly detail?: string }>,
): Promise<JsonReply> {
  let record: EntryAuditRecord = base;
  let attempt: AuditHandle | undefined;
  try {
    const { reply, detail } = await work({
      note: (more) => {
        record = { ...record, ...more };
      },
      begin: async () => {
        attempt = await audit.begin(record);
      },
    });
    await attempt?.end('ok', detail);
    return reply;
  } catch (error) {
    const http = toHttpError(error, log);
    if (attempt !== undefined) await attempt.end(http.status >= 500 ? 'failed' : 'refused', http.code);
    // A trail that cannot be written has refused already (503): there is nothing to record it in.
    else if (http.code !== 'AuditUnavailable') await audit.refused(record, http.code);
    throw http;
  }
}
