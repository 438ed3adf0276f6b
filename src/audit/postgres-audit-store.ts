/**
 * The audit trail in PostgreSQL (AUDIT_STORE=postgres://...), for production: two tables, attempts
 * and outcomes, which a trigger keeps append-only (an UPDATE, DELETE or TRUNCATE fails, whoever sends
 * it, until a database owner drops the trigger), indexed by tenant and time. The tables are made on
 * first use, under an advisory lock so replicas starting together do not race.
 */
import pg from 'pg';
import { AuditAttempt, AuditOutcomeRecord, entriesOf, type AuditEntry, type AuditQuery } from './audit-entry.js';
import { AuditRecordInvalidError, AuditUnavailableError, type AuditStore } from './audit-store.js';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS audit_attempts (
  seq bigserial PRIMARY KEY,
  id uuid NOT NULL UNIQUE,
  at timestamptz NOT NULL,
  actor_subject text NOT NULL,
  actor_name text NOT NULL,
  actor_via text NOT NULL,
  action text NOT NULL,
  tenant text,
  target text,
  detail text
);
CREATE INDEX IF NOT EXISTS audit_attempts_tenant_at ON audit_attempts (tenant, at);
CREATE INDEX IF NOT EXISTS audit_attempts_at ON audit_attempts (at);
CREATE TABLE IF NOT EXISTS audit_outcomes (
  id uuid PRIMARY KEY REFERENCES audit_attempts (id),
  at timestamptz NOT NULL,
  outcome text NOT NULL,
  detail text
);
CREATE OR REPLACE FUNCTION audit_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'the audit trail is append-only: % on % refused', TG_OP, TG_TABLE_NAME;
END
$$;
CREATE OR REPLACE TRIGGER audit_attempts_append_only BEFORE UPDATE OR DELETE OR TRUNCATE ON audit_attempts
  FOR EACH STATEMENT EXECUTE FUNCTION audit_append_only();
CREATE OR REPLACE TRIGGER audit_outcomes_append_only BEFORE UPDATE OR DELETE OR TRUNCATE ON audit_outcomes
  FOR EACH STATEMENT EXECUTE FUNCTION audit_append_only();
`;

/** The address without its password, for messages and logs. */
export function redactedAddress(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.href;
  } catch {
    return 'postgres://(unparsable address)';
  }
}

interface AttemptRow {
  id: string;
  at: Date;
  actor_subject: string;
  actor_name: string;
  actor_via: string;
  action: string;
  tenant: string | null;
  target: string | null;
  detail: string | null;
  seq: string;
  ended_at: Date | null;
  outcome: string | null;
  outcome_detail: string | null;
}

export class PostgresAuditStore implements AuditStore {
  private readonly pool: pg.Pool;
  private ready: Promise<void> | undefined;
  readonly where: string;

  constructor(url: string, options: { connectTimeoutMs?: number } = {}) {
    this.where = redactedAddress(url);
    this.pool = new pg.Pool({ connectionString: url, max: 4, connectionTimeoutMillis: options.connectTimeoutMs ?? 5_000, idleTimeoutMillis: 30_000 });
    // An idle client's error (the server restarted) must not crash the process: the next query reconnects.
    this.pool.on('error', () => undefined);
  }

  private async run<T extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<pg.QueryResult<T>> {
    try {
      await (this.ready ??= this.createTables().catch((error: unknown) => {
        this.ready = undefined;
        throw error;
      }));
      return await this.pool.query<T>(text, values);
    } catch (error) {
      if (error instanceof AuditUnavailableError) throw error;
      throw new AuditUnavailableError(this.where, (error as Error).message, { cause: error });
    }
  }

  private async createTables(): Promise<void> {
    const client = await this.pool.connect().catch((error: unknown) => {
      throw new AuditUnavailableError(this.where, (error as Error).message, { cause: error });
    });
    try {
      await client.query('BEGIN');
      await client.query("SELECT pg_advisory_xact_lock(hashtext('aggregation-connections audit schema'))");
      await client.query(SCHEMA);
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw new AuditUnavailableError(this.where, `cannot create the audit tables: ${(error as Error).message}`, { cause: error });
    } finally {
      client.release();
    }
  }

  async attempt(attempt: AuditAttempt): Promise<void> {
    await this.run(
      'INSERT INTO audit_attempts (id, at, actor_subject, actor_name, actor_via, action, tenant, target, detail) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)',
      [attempt.id, attempt.at, attempt.actor.subject, attempt.actor.name, attempt.actor.via, attempt.action, attempt.tenant, attempt.target, attempt.detail],
    );
  }

  async outcome(outcome: AuditOutcomeRecord): Promise<void> {
    await this.run('INSERT INTO audit_outcomes (id, at, outcome, detail) VALUES ($1, $2, $3, $4)', [outcome.id, outcome.at, outcome.outcome, outcome.detail]);
  }

  async query(query: AuditQuery): Promise<AuditEntry[]> {
    const { rows } = await this.run<AttemptRow>(
      `SELECT a.seq, a.id, a.at, a.actor_subject, a.actor_name, a.actor_via, a.action, a.tenant, a.target, a.detail,
              o.at AS ended_at, o.outcome, o.detail AS outcome_detail
         FROM audit_attempts a LEFT JOIN audit_outcomes o ON o.id = a.id
        WHERE ($1::text IS NULL OR a.tenant = $1) AND ($2::timestamptz IS NULL OR a.at >= $2) AND ($3::timestamptz IS NULL OR a.at < $3)
        ORDER BY a.at, a.seq LIMIT $4`,
      [query.tenant ?? null, query.from?.toISOString() ?? null, query.to?.toISOString() ?? null, query.limit],
    );
    const attempts: AuditAttempt[] = [];
    const outcomes = new Map<string, AuditOutcomeRecord>();
    for (const row of rows) {
      // A row written by hand, not by the product, is named rather than shown as if it were ours.
      const attempt = AuditAttempt.safeParse({
        id: row.id,
        at: row.at.toISOString(),
        actor: { subject: row.actor_subject, name: row.actor_name, via: row.actor_via },
        action: row.action,
        tenant: row.tenant,
        target: row.target,
        detail: row.detail,
      });
      if (!attempt.success)
        throw new AuditRecordInvalidError(
          this.where,
          `audit_attempts seq ${row.seq}`,
          attempt.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; '),
        );
      attempts.push(attempt.data);
      if (row.outcome !== null && row.ended_at !== null) {
        const outcome = AuditOutcomeRecord.safeParse({ id: row.id, at: row.ended_at.toISOString(), outcome: row.outcome, detail: row.outcome_detail });
        if (!outcome.success)
          throw new AuditRecordInvalidError(
            this.where,
            `audit_outcomes id ${row.id}`,
            outcome.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; '),
          );
        outcomes.set(row.id, outcome.data);
      }
    }
    return entriesOf(attempts, outcomes);
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}
