/**
 * What the audit trail records: who did what, on which tenant and connection, when, and how it ended.
 * Never the secret itself: an answer's responses, a payload's bytes and tokens stay out; an entry
 * names the action, its target and its outcome.
 *
 * Each action is written twice, append-only: its attempt before anything is done (so an action whose
 * attempt could not be recorded is refused, never done unrecorded), then its outcome. An attempt
 * with no outcome reads back as `unknown`: the process ended between the two.
 */
import { z } from 'zod';

export const AUDIT_ACTIONS = [
  'sign-in',
  'sign-out',
  'start',
  'answer',
  'cancel',
  'decode',
  'encode',
  'book.change',
  'schedule.change',
  'login.forget',
  'tenant.forget',
  'budget.change',
  'deployment.change',
  'audit.read',
  /** A completion callback's result claimed once through the pipeline entry, with the reference's token. */
  'result.claim',
  /** A read the caller's roles did not allow (only refusals of reads are recorded). */
  'read',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

export const AUDIT_OUTCOMES = ['ok', 'refused', 'failed', 'unknown'] as const;
export type AuditOutcome = (typeof AUDIT_OUTCOMES)[number];

const Text = (max: number) => z.string().max(max);

/** Who acted: a signed-in identity (its subject at the provider), the shared token, or a pipeline. */
export const AuditActor = z.object({ subject: Text(255), name: Text(255), via: Text(32) });
export type AuditActor = z.output<typeof AuditActor>;

export const AuditAttempt = z.object({
  /** A random id that pairs the attempt with its outcome. */
  id: z.uuid(),
  at: z.iso.datetime(),
  actor: AuditActor,
  action: z.enum(AUDIT_ACTIONS),
  /** The tenant (customer id) acted on; null: none in particular (a sign-in). */
  tenant: Text(255).nullable(),
  /** The connection's workflow id, the login, the refresh or the schedule acted on; null: none. */
  target: Text(512).nullable(),
  /** What was asked beyond the action (`pause`, `resize`), never a secret; null: nothing more. */
  detail: Text(512).nullable(),
});
export type AuditAttempt = z.output<typeof AuditAttempt>;

export const AuditOutcomeRecord = z.object({
  id: z.uuid(),
  at: z.iso.datetime(),
  outcome: z.enum(AUDIT_OUTCOMES).exclude(['unknown']),
  /** The answer's outcome, the refusal's code, how many payloads were decoded; null: nothing more. */
  detail: Text(512).nullable(),
});
export type AuditOutcomeRecord = z.output<typeof AuditOutcomeRecord>;

/** One action as read back: its attempt and how it ended. */
export interface AuditEntry extends AuditAttempt {
  readonly outcome: AuditOutcome;
  readonly endedAt: string | null;
  readonly outcomeDetail: string | null;
}

export interface AuditQuery {
  /** One tenant's entries; undefined: every tenant's and those of none (an admin of every tenant). */
  readonly tenant?: string | undefined;
  /** From this time (inclusive) to this one (exclusive), by the attempt's time. */
  readonly from?: Date | undefined;
  readonly to?: Date | undefined;
  /** At most this many, oldest first. */
  readonly limit: number;
}

/** Keeps text for the trail short and on one line: a detail is a label, not a document. */
export function clip(text: string | undefined | null, max = 512): string | null {
  if (text === undefined || text === null) return null;
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/** Pairs attempts with their outcomes, in the attempts' order. */
export function entriesOf(attempts: readonly AuditAttempt[], outcomes: ReadonlyMap<string, AuditOutcomeRecord>): AuditEntry[] {
  return attempts.map((attempt) => {
    const ended = outcomes.get(attempt.id);
    return { ...attempt, outcome: ended?.outcome ?? 'unknown', endedAt: ended?.at ?? null, outcomeDetail: ended?.detail ?? null };
  });
}

/** Whether an attempt falls in the query (tenant and time range). */
export function matches(attempt: AuditAttempt, query: AuditQuery): boolean {
  if (query.tenant !== undefined && attempt.tenant !== query.tenant) return false;
  const at = Date.parse(attempt.at);
  if (query.from && at < query.from.getTime()) return false;
  if (query.to && at >= query.to.getTime()) return false;
  return true;
}
