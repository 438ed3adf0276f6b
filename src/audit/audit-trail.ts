/**
 * Recording an action in the audit trail: `begin` writes its attempt and resolves once it is durable
 * (an AuditUnavailableError refuses the action), and the handle's `end` writes how it ended. An
 * outcome that cannot be written is reported, never thrown: the action has happened, and the attempt
 * already shows it (as `unknown`).
 */
import { randomUUID } from 'node:crypto';
import { clip, type AuditAction, type AuditActor, type AuditEntry, type AuditOutcome, type AuditQuery } from './audit-entry.js';
import { FileAuditStore } from './file-audit-store.js';
import { PostgresAuditStore } from './postgres-audit-store.js';
import type { AuditStore } from './audit-store.js';

export interface AuditBegin {
  readonly actor: AuditActor;
  readonly action: AuditAction;
  readonly tenant?: string | undefined;
  readonly target?: string | undefined;
  readonly detail?: string | undefined;
}

export interface AuditHandle {
  readonly id: string;
  end(outcome: Exclude<AuditOutcome, 'unknown'>, detail?: string): Promise<void>;
}

export class AuditTrail {
  constructor(
    readonly store: AuditStore,
    /** Where an outcome that could not be written is reported (stderr by default). */
    private readonly report: (line: string) => void = (line) => process.stderr.write(`${line}\n`),
  ) {}

  async begin(begin: AuditBegin): Promise<AuditHandle> {
    const id = randomUUID();
    await this.store.attempt({
      id,
      at: new Date().toISOString(),
      actor: { subject: clip(begin.actor.subject, 255) ?? '', name: clip(begin.actor.name, 255) ?? '', via: clip(begin.actor.via, 32) ?? '' },
      action: begin.action,
      tenant: clip(begin.tenant, 255),
      target: clip(begin.target),
      detail: clip(begin.detail),
    });
    let ended = false;
    return {
      id,
      end: async (outcome, detail) => {
        if (ended) return;
        ended = true;
        try {
          await this.store.outcome({ id, at: new Date().toISOString(), outcome, detail: clip(detail) });
        } catch (error) {
          this.report(`audit: the outcome (${outcome}) of ${begin.action} ${id} was not recorded: ${(error as Error).message}`);
        }
      },
    };
  }

  /** Records an action that is whole at once (a sign-in, a refusal): its attempt and its outcome. */
  async record(begin: AuditBegin, outcome: Exclude<AuditOutcome, 'unknown'>, detail?: string): Promise<void> {
    const handle = await this.begin(begin);
    await handle.end(outcome, detail);
  }

  query(query: AuditQuery): Promise<AuditEntry[]> {
    return this.store.query(query);
  }

  close(): Promise<void> {
    return this.store.close();
  }
}

/** The store AUDIT_STORE names: `file:<path>` or a `postgres://` / `postgresql://` address. */
export function openAuditStore(location: string): AuditStore {
  if (location.startsWith('file:')) return new FileAuditStore(location.slice('file:'.length));
  return new PostgresAuditStore(location);
}

/** JSON lines, one item a line: what an export hands to another tool (the CLI's and the console's). */
export function toJsonLines(items: readonly unknown[]): string {
  return items.map((item) => `${JSON.stringify(item)}\n`).join('');
}
