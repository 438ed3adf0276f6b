/**
 * What the pipeline entry records in the audit trail (src/audit): every start, cancel and claim
 * (its attempt before it is done, then its outcome) and every refusal, under the actor
 * `pipeline:<customerId>`; a pipeline key shows as its hash's prefix (never the key), a result token
 * as nothing at all. A trail that cannot be written refuses the request (503): nothing is done
 * unrecorded.
 */
import type { AuditAction, AuditActor } from '../audit/audit-entry.js';
import type { AuditTrail } from '../audit/audit-trail.js';
import { AuditedAction } from '../http/audited-action.js';
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
  constructor(readonly trail: AuditTrail) {}

  /** A refusal before any route's work, whole at once (its code as the outcome's detail). */
  refused(record: EntryAuditRecord, code: string): Promise<void> {
    return new AuditedAction(this.trail).refused(record, code);
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
 * Runs a route's work under one record of the trail (http/audited-action.ts, as the console's
 * routes): a refusal before the attempt is recorded whole (its code as the outcome), an attempt begun
 * ends ok with the work's detail, or refused or failed with the code it ended with. Returns the
 * work's reply; rethrows its refusal as an HttpError.
 */
export async function audited(
  audit: EntryAudit,
  base: EntryAuditRecord,
  log: (line: string) => void,
  work: (record: AuditedWork) => Promise<{ readonly reply: JsonReply; readonly detail?: string }>,
): Promise<JsonReply> {
  let record: EntryAuditRecord = base;
  const action = new AuditedAction(audit.trail);
  const { reply } = await action.run({
    work: () =>
      work({
        note: (more) => {
          record = { ...record, ...more };
        },
        begin: () => action.begin(record),
      }),
    detailOf: ({ detail }) => detail,
    toHttpError: (error) => toHttpError(error, log),
    refusalOf: () => record,
  });
  return reply;
}
